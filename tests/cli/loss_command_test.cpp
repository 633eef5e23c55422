// `cplab loss --json` end to end for every layout and C: the printed numbers equal the reference's
// (computed here, in-process, from the same arrays) and the implementation agrees with it.
// Malformed or mismatched .npy files end with one line on stderr and exit status 2.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/layout_option.hpp"
#include "io/npy.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::clitest {
namespace {

using testsupport::CliRun;
using testsupport::every_layout_and_cp;
using testsupport::expect_usage_error;
using testsupport::layout_cp_name;
using testsupport::LayoutCp;
using testsupport::line_count;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

struct Inputs {
  Tensor logits, labels, valid;
};

Inputs inputs(std::int64_t rows, std::int64_t seq, std::int64_t vocab) {
  Inputs in{Tensor(DType::f32, {rows, seq, vocab}), Tensor(DType::i64, {rows, seq}),
            Tensor(DType::b8, {rows, seq})};
  for (std::int64_t i = 0; i < in.logits.numel(); ++i)
    in.logits.set(i, 2.0 * std::sin(0.37 * static_cast<double>(i)));
  for (std::int64_t i = 0; i < rows * seq; ++i) {
    in.labels.set(i, i % 7 == 5 ? -100.0 : static_cast<double>((3 * i) % vocab));
    in.valid.set(i, i % 5 != 3);
  }
  return in;
}

class LossCommandTest : public ::testing::TestWithParam<LayoutCp> {};

// One BSHD batch (B = 2) and one packed row with --doc-lens, when the layout takes them.
TEST_P(LossCommandTest, json_agrees_with_the_reference) {
  const auto& [layout, cp] = GetParam();
  ScratchDir dir;
  struct Case {
    std::int64_t rows, seq;
    std::string doc_lens;
    std::vector<std::int64_t> docs;
  };
  // An option with an automatic value has a default sized for long rows: these short ones take
  // it at 3, so that they are cut in several pieces.
  LayoutSpec options;
  std::string flags;
  for (const layouts::LayoutOption* o : layouts::options_of(layout)) {
    if (o->automatic == nullptr) continue;
    o->set(options, 3);
    flags += std::string(" ") + o->flag + " 3";
  }
  int checked = 0;
  for (const Case& c : {Case{2, 13, "", {}}, Case{1, 16, "5,3,8", {5, 3, 8}}}) {
    LayoutSpec spec = options;
    spec.layout = layout;
    spec.cp = cp;
    const Inputs in = inputs(c.rows, c.seq, 7);
    Batch batch;
    batch.add(keys::input_ids, Tensor(DType::i64, {c.rows, c.seq}));
    if (!c.docs.empty()) batch.seq_lens = {c.docs};
    ShardPlan plan;
    try {
      plan = reference::plan(spec, batch);
    } catch (const Error&) {
      continue;  // the layout refuses this batch (the error case is tested below)
    }
    ++checked;
    const reference::LossReference ref =
        reference::shifted_loss_caller(plan, in.logits, in.labels, in.valid);
    io::npy::write(dir.file("logits.npy"), in.logits);
    io::npy::write(dir.file("labels.npy"), in.labels);
    io::npy::write(dir.file("valid.npy"), in.valid);
    std::string args = "loss --layout " + layout + " --cp " + std::to_string(cp) + " --logits " +
                       dir.file("logits.npy") + " --labels " + dir.file("labels.npy") +
                       " --valid " + dir.file("valid.npy") + flags + " --json";
    if (!c.doc_lens.empty()) args += " --doc-lens " + c.doc_lens;
    const CliRun run = run_cplab(args);
    ASSERT_EQ(run.status, 0) << run.err;
    const auto json = nlohmann::json::parse(run.out);
    EXPECT_NEAR(json.at("global_mean").get<double>(), ref.global_mean, 1e-12);
    EXPECT_EQ(json.at("contributing_total").get<std::int64_t>(), ref.contributing_total);
    ASSERT_EQ(json.at("ranks").size(), static_cast<std::size_t>(cp));
    double mean = 0.0;
    for (std::int64_t r = 0; r < cp; ++r) {
      const auto& rank = json.at("ranks")[r];
      EXPECT_EQ(rank.at("rank").get<std::int64_t>(), r);
      EXPECT_NEAR(rank.at("loss").get<double>(), ref.rank_loss[r],
                  1e-6 * std::max(1.0, std::abs(ref.rank_loss[r])));
      EXPECT_EQ(rank.at("contributing").get<std::int64_t>(), ref.rank_contributing[r]);
      mean += rank.at("loss").get<double>() / static_cast<double>(cp);
    }
    EXPECT_NEAR(json.at("mean_of_rank_losses").get<double>(), mean, 1e-12);
    EXPECT_NEAR(json.at("max_abs_err").get<double>(), std::abs(mean - ref.global_mean), 1e-12);
    EXPECT_LT(json.at("max_abs_err").get<double>(), 1e-6);
    EXPECT_LT(json.at("grad_max_abs_err").get<double>(), 1e-6);
  }
  if (checked == 0) {
    // A row of 13, refused like the ones above (16 would be one document of a multiple of 2C).
    const Inputs in = inputs(1, 13, 7);
    io::npy::write(dir.file("logits.npy"), in.logits);
    io::npy::write(dir.file("labels.npy"), in.labels);
    const CliRun run =
        run_cplab("loss --layout " + layout + " --cp " + std::to_string(cp) + " --logits " +
                  dir.file("logits.npy") + " --labels " + dir.file("labels.npy") + " --json");
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(line_count(run.err), 1) << run.err;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, LossCommandTest, ::testing::ValuesIn(every_layout_and_cp()),
                         layout_cp_name);

class LossCommandErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const Inputs in = inputs(1, 16, 7);
    io::npy::write(dir_.file("logits.npy"), in.logits);
    io::npy::write(dir_.file("labels.npy"), in.labels);
  }
  CliRun loss(const std::string& logits, const std::string& labels, const std::string& extra = "") {
    return run_cplab("loss --layout " + testsupport::a_plain_layout() + " --cp 2 --logits " +
                     logits + " --labels " + labels + " --json " + extra);
  }
  ScratchDir dir_;
};

TEST_F(LossCommandErrors, truncated_logits_file) {
  std::ofstream(dir_.file("cut.npy"), std::ios::binary)
      << slurp(dir_.file("logits.npy")).substr(0, 200);
  expect_usage_error(loss(dir_.file("cut.npy"), dir_.file("labels.npy")),
                     {dir_.file("cut.npy"), "needs 448 bytes"});
}

TEST_F(LossCommandErrors, not_an_npy_file) {
  std::ofstream(dir_.file("text.npy")) << "hello, this is not numpy";
  expect_usage_error(loss(dir_.file("logits.npy"), dir_.file("text.npy")),
                     {dir_.file("text.npy"), "not a .npy file"});
}

TEST_F(LossCommandErrors, labels_that_do_not_match_the_logits) {
  io::npy::write(dir_.file("short.npy"), Tensor(DType::i64, {1, 15}));
  expect_usage_error(loss(dir_.file("logits.npy"), dir_.file("short.npy")),
                     {"[1, 16]", "i64[1, 15]"});
  io::npy::write(dir_.file("floats.npy"), Tensor(DType::f32, {1, 16}));
  expect_usage_error(loss(dir_.file("logits.npy"), dir_.file("floats.npy")),
                     {"int64 or int32", "f32[1, 16]"});
}

TEST_F(LossCommandErrors, valid_mask_of_the_wrong_shape_or_type) {
  io::npy::write(dir_.file("valid.npy"), Tensor(DType::f32, {1, 16}));
  expect_usage_error(
      loss(dir_.file("logits.npy"), dir_.file("labels.npy"), "--valid " + dir_.file("valid.npy")),
      {"bool or uint8", "f32[1, 16]"});
}

TEST_F(LossCommandErrors, unknown_implementation_lists_the_known_ones) {
  expect_usage_error(loss(dir_.file("logits.npy"), dir_.file("labels.npy"), "--impl nope"),
                     {"'nope'", "known: sim"});
}

}  // namespace
}  // namespace cplab::clitest

namespace cplab::clitest {
namespace {

// --impl takes any registered implementation: a mutant's damage shows in the contract's error
// fields (forgetting the factor C halves every rank's loss at C = 2), while sim's stays ~0.
TEST(LossCommandImplementations, a_mutant_shows_its_error_and_sim_does_not) {
  ScratchDir dir;
  const Inputs in = inputs(1, 16, 7);
  io::npy::write(dir.file("logits.npy"), in.logits);
  io::npy::write(dir.file("labels.npy"), in.labels);
  auto err_of = [&](const std::string& impl) {
    const CliRun run = run_cplab("loss --layout " + testsupport::a_plain_layout() +
                                 " --cp 2 --logits " + dir.file("logits.npy") + " --labels " +
                                 dir.file("labels.npy") + " --json --impl " + impl);
    EXPECT_EQ(run.status, 0) << run.err;
    return nlohmann::json::parse(run.out).at("max_abs_err").get<double>();
  };
  EXPECT_LT(err_of("sim"), 1e-6);
  EXPECT_GT(err_of("factor_c_forgotten"), 1e-3);
}

}  // namespace
}  // namespace cplab::clitest

namespace cplab::clitest {
namespace {

// --depths D (SPEC §6.1): depth 1's keys are the next-token loss's, `depths` holds every depth's
// reference numbers, and the MTP mutant that asks only the next rank shows its error at depth 3 on
// C = 8 ranks of two tokens (depth-3 targets two ranks away), not at depth 1.
TEST(LossCommandDepths, every_depth_agrees_with_the_reference_and_a_far_target_mutant_does_not) {
  ScratchDir dir;
  const std::int64_t depths = 3, seq = 16, vocab = 7;
  Tensor logits(DType::f32, {depths, 1, seq, vocab});
  for (std::int64_t i = 0; i < logits.numel(); ++i)
    logits.set(i, 2.0 * std::sin(0.29 * static_cast<double>(i)));
  const Inputs in = inputs(1, seq, vocab);
  io::npy::write(dir.file("logits.npy"), logits);
  io::npy::write(dir.file("labels.npy"), in.labels);
  const std::string layout = testsupport::a_plain_layout();
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = 8;
  Batch batch;
  batch.add(keys::input_ids, Tensor(DType::i64, {1, seq}));
  batch.seq_lens = {{5, 3, 8}};
  const ShardPlan plan = reference::plan(spec, batch);
  Tensor valid(DType::b8, {1, seq});
  for (std::int64_t i = 0; i < seq; ++i) valid.set(i, 1.0);
  auto run = [&](const std::string& impl) {
    const CliRun out = run_cplab("loss --layout " + layout + " --cp 8 --logits " +
                                 dir.file("logits.npy") + " --labels " + dir.file("labels.npy") +
                                 " --doc-lens 5,3,8 --depths 3 --json --impl " + impl);
    EXPECT_EQ(out.status, 0) << out.err;
    return nlohmann::json::parse(out.out);
  };
  const auto json = run("sim");
  ASSERT_EQ(json.at("depths").size(), 3u);
  std::vector<double> means;
  for (std::int64_t k = 1; k <= depths; ++k) {
    Tensor depth_logits(DType::f32, {1, seq, vocab});
    for (std::int64_t i = 0; i < depth_logits.numel(); ++i)
      depth_logits.set(i, logits.get((k - 1) * depth_logits.numel() + i));
    const reference::LossReference ref =
        reference::shifted_loss_caller(plan, depth_logits, in.labels, valid, k);
    const auto& entry = json.at("depths")[static_cast<std::size_t>(k - 1)];
    EXPECT_EQ(entry.at("depth").get<std::int64_t>(), k);
    EXPECT_NEAR(entry.at("global_mean").get<double>(), ref.global_mean, 1e-12);
    EXPECT_EQ(entry.at("contributing_total").get<std::int64_t>(), ref.contributing_total);
    EXPECT_LT(entry.at("max_abs_err").get<double>(), 1e-6);
    EXPECT_LT(entry.at("grad_max_abs_err").get<double>(), 1e-6);
    means.push_back(ref.global_mean);
  }
  EXPECT_EQ(json.at("global_mean"), json.at("depths")[0].at("global_mean"));
  const reference::MtpCombination total = reference::combine_depths(means, 0.1);
  EXPECT_NEAR(json.at("mtp").at("global_total").get<double>(), total.total, 1e-12);
  EXPECT_NEAR(json.at("mtp").at("depth_weight").get<double>(), 0.05, 1e-15);
  EXPECT_LT(json.at("mtp").at("max_abs_err").get<double>(), 1e-6);

  const auto broken = run("mtp_targets_from_next_rank_only");
  EXPECT_LT(broken.at("depths")[0].at("max_abs_err").get<double>(), 1e-6);
  EXPECT_GT(broken.at("depths")[2].at("grad_max_abs_err").get<double>(), 1e-3);
}

TEST(LossCommandDepths, logits_without_the_depth_dim_or_a_bad_depth_are_usage_errors) {
  ScratchDir dir;
  const Inputs in = inputs(1, 16, 7);
  io::npy::write(dir.file("logits.npy"), in.logits);
  io::npy::write(dir.file("labels.npy"), in.labels);
  const std::string base = "loss --layout " + testsupport::a_plain_layout() + " --cp 2 --logits " +
                           dir.file("logits.npy") + " --labels " + dir.file("labels.npy");
  expect_usage_error(run_cplab(base + " --depths 2"), {"[D=2, B, S, V]", "f32[1, 16, 7]"});
  expect_usage_error(run_cplab(base + " --depths 0"), {"--depths"});
  expect_usage_error(run_cplab(base + " --depths 2 --mtp-scaling-factor inf"),
                     {"--mtp-scaling-factor must be finite"});
}

}  // namespace
}  // namespace cplab::clitest
