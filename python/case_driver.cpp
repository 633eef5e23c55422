// cplab-case-driver: RapidCheck's search over cplab's own generators, for cplab.testing. Debian's
// librapidcheck.a is not position-independent, so it cannot live in the Python module; this
// executable draws the cases and shrinks the failures, and the module runs the user's function on
// each case it is sent.
//
// Protocol (one line each way per case, over stdout and stdin):
//   driver: "case <one-line case>"          module: "ok" | "fail <one-line reason>"
//   at the end, the driver: "passed <cases>" | "failed <cases> <shrinks> <one-line case>" |
//                           "error <message>"
// The cases are those of the layout's generator (gen_case), brought into what a user's sharder
// is handed: one microbatch, the primary sharded, the layout options and pad conventions the
// caller fixed (else their defaults), [B, S] positions, and only the keys it asked for.
#include <fmt/format.h>
#include <rapidcheck.h>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"
#include "properties/case.hpp"
#include "properties/coverage.hpp"
#include "properties/generators.hpp"
#include "properties/layout_table.hpp"
#include "reference/plan.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;

enum class Rows : std::uint8_t { any, bshd, packed };

struct DriverOptions {
  std::string layout;
  std::vector<I> cp;
  I cases = 100;
  std::uint64_t seed = 0;
  I max_tokens = 256;
  Rows rows = Rows::any;
  std::optional<I> pad_id;
  // The layouts' own options the caller fixed (`--option NAME=VALUE`, by declared name).
  std::vector<std::pair<const layouts::LayoutOption*, I>> fixed;
  std::optional<PadPolicy> pad_policy;
  bool embeds = false;      // inputs_embeds cases too (else input_ids only)
  bool extra_keys = false;  // the extra token keys (token_weight, token_planes, token_features)
};

I parse_int(const std::string& flag, const std::string& text) {
  I value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  CPLAB_CHECK(ec == std::errc() && end == text.data() + text.size(), "{}: '{}' is not an integer",
              flag, text);
  return value;
}

DriverOptions parse_args(int argc, char** argv) {
  DriverOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    CPLAB_CHECK(i + 1 < argc, "{} needs a value", flag);
    const std::string value = argv[++i];
    if (flag == "--layout") {
      o.layout = value;
    } else if (flag == "--cp") {
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        o.cp.push_back(parse_int(flag, value.substr(start, comma - start)));
        start = comma + 1;
      }
    } else if (flag == "--cases") {
      o.cases = parse_int(flag, value);
    } else if (flag == "--seed") {
      o.seed = static_cast<std::uint64_t>(parse_int(flag, value));
    } else if (flag == "--max-tokens") {
      o.max_tokens = parse_int(flag, value);
    } else if (flag == "--rows") {
      CPLAB_CHECK(value == "any" || value == "bshd" || value == "packed",
                  "--rows: any, bshd or packed, not '{}'", value);
      o.rows = value == "any" ? Rows::any : value == "bshd" ? Rows::bshd : Rows::packed;
    } else if (flag == "--pad-id") {
      o.pad_id = parse_int(flag, value);
    } else if (flag == "--pad-policy") {
      CPLAB_CHECK(value == "spec" || value == "zero", "--pad-policy: spec or zero, not '{}'",
                  value);
      o.pad_policy = value == "spec" ? PadPolicy::spec : PadPolicy::zero;
    } else if (flag == "--option") {
      const std::size_t eq = value.find('=');
      CPLAB_CHECK(eq != std::string::npos, "--option: expected NAME=VALUE, got '{}'", value);
      const layouts::LayoutOption* option = layouts::option_named(value.substr(0, eq));
      CPLAB_CHECK(option != nullptr, "--option: no layout declares an option '{}'",
                  value.substr(0, eq));
      o.fixed.emplace_back(option, parse_int(flag, value.substr(eq + 1)));
    } else if (flag == "--embeds") {
      o.embeds = value == "1";
    } else if (flag == "--extra-keys") {
      o.extra_keys = value == "1";
    } else {
      CPLAB_FAIL("unknown option {}", flag);
    }
  }
  CPLAB_CHECK(!o.layout.empty(), "--layout is required");
  CPLAB_CHECK(o.cases >= 1 && o.cases <= limits::kMaxCasesPerJob, "--cases must be in [1, {}]",
              limits::kMaxCasesPerJob);
  return o;
}

// The drawn case as a user's sharder takes it. A function of the drawn case alone, so RapidCheck's
// shrinks of the drawn case are shrinks of this one.
Case as_handed_over(Case c, const DriverOptions& o) {
  if (c.packed()) {
    c.docs.resize(1);  // one packed row: its own microbatch
    c.rows = 1;
  }
  c.spec.microbatches = 1;
  c.spec.shard_primary = true;
  if (o.pad_policy) c.spec.pad_policy = *o.pad_policy;
  if (o.pad_id) {
    c.spec.pad_token_id = *o.pad_id;
    c.vocab = std::max(c.vocab, *o.pad_id + 1);
  }
  // The sharder cannot know a drawn option: each is what the caller fixed, else its default.
  c.spec = layouts::without_options(c.spec);
  c.automatic.clear();
  for (const auto& [option, value] : o.fixed) option->set(c.spec, value);
  if (!o.embeds) c.primary = Primary::ids;
  if (!o.extra_keys) c.extra_key = c.extra_planes = c.extra_features = false;
  if (c.positions == PositionKind::mrope || c.positions == PositionKind::shared)
    c.positions = PositionKind::per_row;
  resolve_case_options(c);
  return c;
}

// Whether the case is one the layout lays out under the options the caller fixed (a fixed ring
// degree or block size can leave a drawn C or S without a plan): cases that are not are discarded.
bool plannable(const Case& c) {
  try {
    validate_case(c);
    LayoutSpec spec = c.spec;
    for (const auto& row : c.docs) {
      std::vector<I> lens, padded;
      for (const Document& d : row) {
        lens.push_back(d.real);
        padded.push_back(d.real + d.extra);
      }
      reference::plan_row(spec, c.seq_len, &lens, &padded);
    }
    if (!c.packed()) reference::plan_row(spec, c.seq_len);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void send(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

class ShrinkCounter final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override { ++cases; }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    shrinks += accepted ? 1 : 0;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  I cases = 0, shrinks = 0;
};

int run(const DriverOptions& o) {
  const LayoutEntry& entry = layout_entry(o.layout);
  GenOptions gen;
  gen.cp = o.cp;
  gen.max_tokens = o.max_tokens;
  validate_gen_options(gen);
  // As a sweep job does: every other case from one cell (batch kind, dtype class, C class) in
  // turn, so that every row kind and C class is drawn; the rest freely. --rows keeps the cells of
  // one row kind and draws the rest from them too.
  std::vector<rc::Gen<Case>> gens;
  for (const CaseCell& cell : cells_for_cp(entry, gen.cp)) {
    const bool packed = cell.kind == BatchKind::packed;
    if ((o.rows == Rows::bshd && packed) || (o.rows == Rows::packed && !packed)) continue;
    GenOptions directed = gen;
    directed.cell = cell;
    gens.push_back(gen_case(entry, directed));
  }
  CPLAB_CHECK(!gens.empty(), "layout {} draws no {} rows", o.layout,
              o.rows == Rows::packed ? "packed" : "BSHD");
  const std::size_t cells = gens.size();
  if (o.rows == Rows::any) gens.push_back(gen_case(entry, gen));
  I drawn = 0;
  std::size_t which = 0;
  bool shrinking = false;
  std::string last_failing;
  std::string reply;
  const auto property = rc::detail::toProperty([&] {
    if (!shrinking) {
      which = drawn % 2 == 0 || gens.size() == cells
                  ? static_cast<std::size_t>(o.seed + static_cast<std::uint64_t>(drawn / 2)) % cells
                  : gens.size() - 1;
      ++drawn;
    }
    const Case c = as_handed_over(*gens[which], o);
    RC_PRE(plannable(c));
    const std::string line = print_case(c);
    send("case " + line);
    if (!std::getline(std::cin, reply)) std::exit(3);  // the module went away: nothing to report
    if (reply == "ok") return;
    shrinking = true;
    last_failing = line;
    RC_FAIL(reply.rfind("fail ", 0) == 0 ? reply.substr(5) : reply);
  });
  rc::detail::TestParams params;
  params.seed = o.seed;
  params.maxSuccess = static_cast<int>(o.cases);
  params.maxSize = 100;
  ShrinkCounter listener;
  const rc::detail::TestMetadata metadata{"cplab.testing/" + o.layout, o.layout};
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const rc::detail::TestResult outcome =
      rc::detail::checkProperty(property, metadata, params, listener, no_reproduce);
  if (outcome.template is<rc::detail::SuccessResult>()) {
    send(fmt::format("passed {}", listener.cases));
  } else if (outcome.template is<rc::detail::FailureResult>() && !last_failing.empty()) {
    send(fmt::format("failed {} {} {}", listener.cases, listener.shrinks, last_failing));
  } else {
    std::ostringstream text;
    rc::detail::printResultMessage(outcome, text);
    std::string message = text.str();
    for (char& ch : message) ch = ch == '\n' ? ' ' : ch;
    send("error the cases could not be drawn: " + message);
  }
  return 0;
}

}  // namespace
}  // namespace cplab::properties

int main(int argc, char** argv) {
  try {
    return cplab::properties::run(cplab::properties::parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::string message = e.what();
    for (char& ch : message) ch = ch == '\n' ? ' ' : ch;
    cplab::properties::send("error " + message);
    return 2;
  }
}
