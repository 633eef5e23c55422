// The exit-status contract's one place (cli/errors.hpp): which exception gives which status and
// line, escaping of untrusted text; and the limits of core/limits.hpp at their edges
// (the accepted sides that are too costly to reach through the command line).
#include "cli/errors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <system_error>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"
#include "core/tensor.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::clitest {
namespace {

struct Reported {
  int status;
  std::string err;
};

template <typename E>
Reported report(const E& error, bool verbose = false) {
  ::testing::internal::CaptureStderr();
  const int status = cli::report_exception(std::make_exception_ptr(error), verbose);
  return {status, ::testing::internal::GetCapturedStderr()};
}

TEST(ExitStatus, EachKindOfErrorHasItsStatusAndOneLine) {
  EXPECT_EQ(report(Error("bad --cp")).status, cli::kUsageError);
  EXPECT_EQ(report(Error("bad --cp")).err, "cplab: error: bad --cp\n");
  const Reported bug = report(std::logic_error("index 7 out of range"));
  EXPECT_EQ(bug.status, cli::kInternalError);
  EXPECT_EQ(bug.err,
            "cplab: internal error: index 7 out of range (a bug of cplab: please report it with "
            "the command line)\n");
  const Reported memory = report(std::bad_alloc());
  EXPECT_EQ(memory.status, cli::kUsageError);
  EXPECT_EQ(memory.err.rfind("cplab: out of resources: out of memory", 0), 0u) << memory.err;
  const Reported threads = report(
      std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread"));
  EXPECT_EQ(threads.status, cli::kUsageError);
  EXPECT_EQ(threads.err.rfind("cplab: out of resources: the system refused a thread", 0), 0u);
  EXPECT_EQ(report(ResourceError("rank 3/8: out of memory")).err,
            "cplab: out of resources: rank 3/8: out of memory\n");
  // Detail only with --verbose.
  const DetailedError torch("'b.pt' is not a torch.save file", "line 1\nline 2\nbacktrace");
  EXPECT_EQ(report(torch).err, "cplab: error: 'b.pt' is not a torch.save file\n");
  EXPECT_EQ(report(torch, true).err,
            "cplab: error: 'b.pt' is not a torch.save file\nline 1\nline 2\nbacktrace\n");
  EXPECT_EQ(cli::run_guarded([] { return 0; }, false), cli::kOk);
  EXPECT_EQ(cli::run_guarded([]() -> int { throw std::runtime_error("x"); }, false),
            cli::kInternalError);
}

TEST(ExitStatus, UntrustedTextIsEscapedAndCut) {
  EXPECT_EQ(escape_untrusted("plain · ℓ text"), "plain · ℓ text");  // valid UTF-8 kept
  EXPECT_EQ(escape_untrusted("a\nb\x1b[2J\x7f"), "a\\x0ab\\x1b[2J\\x7f");
  EXPECT_EQ(escape_untrusted("\xff\xc3(\xe2\x82"), "\\xff\\xc3(\\xe2\\x82");  // invalid UTF-8
  EXPECT_EQ(escape_untrusted("\xed\xa0\x80"), "\\xed\\xa0\\x80");             // a surrogate
  EXPECT_EQ(escape_untrusted(std::string(20, 'x'), 8), "xxxxxxxx …(12 more bytes)");
  EXPECT_EQ(report(Error("name 'a\nb'")).err, "cplab: error: name 'a\\x0ab'\n");
}

TEST(Limits, BothSidesOfEveryLimit) {
  // C and the options' ranges are checked whatever the layout: any one will do.
  LayoutSpec spec;
  spec.layout = testsupport::a_plain_layout();
  spec.cp = limits::kMaxCp;
  EXPECT_NO_THROW(limits::check_spec(spec));
  spec.cp = limits::kMaxCp + 1;
  EXPECT_THROW(limits::check_spec(spec), Error);
  // Every option bounded by the padding limit alone (kMaxPadUnit / C), whichever layout declares
  // it: its largest value at C = 2 is taken, one more is not.
  spec.cp = 2;
  int bounded = 0;
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    if (o->is_switch || o->most != nullptr) continue;
    ++bounded;
    o->set(spec, limits::kMaxPadUnit / 2);
    EXPECT_NO_THROW(limits::check_spec(spec)) << o->name;
    o->set(spec, limits::kMaxPadUnit / 2 + 1);
    EXPECT_THROW(limits::check_spec(spec), Error) << o->name;
    o->reset(spec);
  }
  EXPECT_GE(bounded, 2) << "too few options bounded by the padding limit";
  spec = LayoutSpec{};
  EXPECT_EQ(limits::padded_len_bound(spec, limits::kMaxRowTokens, 0), limits::kMaxRowTokens);
  EXPECT_THROW(limits::padded_len_bound(spec, limits::kMaxRowTokens + 1, 0), Error);
  EXPECT_THROW(limits::padded_len_bound(spec, -1, 0), Error);
  EXPECT_NO_THROW(limits::padded_len_bound(spec, 4, limits::kMaxDocuments));
  EXPECT_THROW(limits::padded_len_bound(spec, 4, limits::kMaxDocuments + 1), Error);
  // C = 1024, a layout whose options never widen its padding unit past 2C: the row padded to 2C,
  // and 2C per document on top of it.
  spec.layout = testsupport::first_layout(
      "a layout whose padding unit is 2C", [](const sim::LayoutDescriptor& layout) {
        const auto options = layouts::options_of(layout.name);
        return std::none_of(options.begin(), options.end(),
                            [](const layouts::LayoutOption* o) { return o->pad_unit != nullptr; });
      });
  spec.cp = 1024;
  // Another layout's options, held at their widest, do not widen this one's padding.
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    if (o->pad_unit != nullptr) o->set(spec, o->most_at(spec.cp));
  }
  const std::int64_t docs = (limits::kMaxPaddedLen - 2048) / 2048;
  EXPECT_EQ(limits::padded_len_bound(spec, 1, docs), 2048 + docs * 2048);
  EXPECT_THROW(limits::padded_len_bound(spec, 1, docs + 1), Error);
  // Documents: the sum stops at the row limit, whatever wraps past 2^63.
  EXPECT_EQ(limits::check_documents({limits::kMaxRowTokens - 1, 1}, "d"), limits::kMaxRowTokens);
  EXPECT_THROW(limits::check_documents({limits::kMaxRowTokens, 1}, "d"), Error);
  EXPECT_THROW(limits::check_documents({INT64_MAX, INT64_MAX, 3}, "d"), Error);
  EXPECT_THROW(limits::check_documents({-1}, "d"), Error);
  EXPECT_THROW(limits::mul(INT64_MAX / 2 + 1, 2, "m"), Error);
  EXPECT_EQ(limits::mul(INT64_MAX / 2, 2, "m"), INT64_MAX - 1);
  EXPECT_THROW(limits::add(INT64_MAX, 1, "a"), Error);
  // Shapes whose element or byte count wraps are refused before allocating.
  EXPECT_THROW((Tensor(DType::f32, {std::int64_t{1} << 62, 4})), Error);
  EXPECT_THROW((Tensor(DType::i64, {std::int64_t{1} << 61, 2})), Error);
}

TEST(ExitStatus, APathThatCannotBeMadeIsBadInput) {
  const Reported r = report(std::filesystem::filesystem_error(
      "cannot create directories", "/proc/x",
      std::make_error_code(std::errc::no_such_file_or_directory)));
  EXPECT_EQ(r.status, cli::kUsageError);
  EXPECT_EQ(r.err.rfind("cplab: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace cplab::clitest
