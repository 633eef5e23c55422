// The sweep engine: shards cover the job list exactly once, a job draws the same cases whichever
// shard runs it, the same seed gives the same sweep, a spent time budget skips (never passes) the
// jobs it did not reach, and the rerun command names the one job.
#include "properties/sweep.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <map>

#include "core/error.hpp"
#include "properties/case.hpp"
#include "properties/layout_table.hpp"
#include "properties/mask_choice.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

// Two registered layouts (the sweep engine's tests need jobs of more than one, of any kind).
std::vector<std::string> two_layouts() {
  const std::vector<std::string> names = layout_table_names();
  return {names.at(0), names.at(1)};
}

// A layout whose cases are cheapest: CP off, every case one rank.
std::string a_cp_off_layout() {
  return testsupport::first_layout("CP-off",
                                   [](const sim::LayoutDescriptor& d) { return d.cp_off; });
}

TEST(Sweep, DefaultSelectionIsEveryPropertyAndLayoutOnSimAndGpu) {
  const std::vector<Job> jobs = all_jobs(SweepOptions{});
  EXPECT_EQ(jobs.size(), property_table().size() * layout_table().size() * 2);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].index, static_cast<std::int64_t>(i));
    EXPECT_FALSE(jobs[i].spec.impl->mutant);
  }
  SweepOptions unknown;
  unknown.layouts = {"ring"};
  EXPECT_THROW(all_jobs(unknown), Error);
}

TEST(Sweep, RefusesACpSizeBelowOneBeforeItsFirstCase) {
  SweepOptions options;
  options.impls = {"sim"};
  options.layouts = {testsupport::a_plain_layout()};
  options.cases = 1;
  options.cps = {2, 0};
  try {
    run_sweep(options, {});
    FAIL() << "a sweep with --cp 0 ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--cp 0"), std::string::npos) << e.what();
  }
}

TEST(Sweep, ShardsCoverEveryJobExactlyOnce) {
  SweepOptions options;
  options.impls = {"sim", "gpu", "labels_shifted_locally"};
  const std::vector<Job> jobs = all_jobs(options);
  for (std::int64_t n = 1; n <= 8; ++n) {
    std::map<std::int64_t, int> covered;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::vector<Job> mine = shard_jobs(jobs, {i, n});
      // Balanced: no shard holds more than one job above another.
      EXPECT_LE(mine.size(),
                (jobs.size() + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n));
      for (const Job& job : mine) covered[job.index] += 1;
    }
    ASSERT_EQ(covered.size(), jobs.size()) << "n=" << n;
    for (const auto& [index, times] : covered) EXPECT_EQ(times, 1) << "job " << index << " n=" << n;
  }
}

TEST(Sweep, ParsesShardsStrictly) {
  EXPECT_EQ(parse_shard("2/5").index, 2);
  EXPECT_EQ(parse_shard("2/5").count, 5);
  for (const char* bad : {"5/5", "1", "-1/3", "a/b", "1/0", "1/3x", "/3"})
    EXPECT_THROW(parse_shard(bad), Error) << bad;
}

TEST(Sweep, AJobDrawsTheSameCasesInAnyShard) {
  SweepOptions options;
  options.seed = 7;
  options.cases = 4;
  options.impls = {"sim"};
  options.layouts = two_layouts();
  options.properties = {"index_maps_are_a_closed_form_permutation",
                        "local_documents_match_cu_seqlens"};
  const SweepReport full = run_sweep(options);
  options.shard = {1, 3};
  const SweepReport part = run_sweep(options);
  ASSERT_FALSE(part.results.empty());
  for (const JobResult& r : part.results) {
    const JobResult& same = full.results[static_cast<std::size_t>(r.job)];
    EXPECT_EQ(r.property, same.property);
    EXPECT_EQ(r.layout, same.layout);
    EXPECT_EQ(r.seed, same.seed);
    EXPECT_EQ(r.coverage, same.coverage);
    EXPECT_EQ(r.status, JobStatus::passed);
  }
  // And again with the same seed: the same sweep.
  options.shard = {};
  const SweepReport again = run_sweep(options);
  ASSERT_EQ(again.results.size(), full.results.size());
  for (std::size_t i = 0; i < full.results.size(); ++i) {
    EXPECT_EQ(again.results[i].coverage, full.results[i].coverage);
    EXPECT_EQ(again.results[i].cases, full.results[i].cases);
  }
  EXPECT_EQ(full.total_cases(), static_cast<std::int64_t>(full.results.size()) * 4);
  EXPECT_GT(full.cases_per_second(), 0.0);
}

TEST(Sweep, JobsBeyondTheTimeBudgetAreSkippedNotPassed) {
  SweepOptions options;
  options.cases = 2;
  options.impls = {"sim"};
  options.layouts = {testsupport::a_plain_layout()};
  options.time_budget_seconds = 1e-9;  // spent before the first job starts
  const SweepReport spent = run_sweep(options);
  ASSERT_EQ(spent.results.size(), property_table().size());
  for (const JobResult& r : spent.results) {
    EXPECT_EQ(r.status, JobStatus::skipped);
    EXPECT_EQ(r.passed, 0);
    EXPECT_EQ(r.cases, 0);
    EXPECT_NE(r.message.find("time budget"), std::string::npos);
  }
  EXPECT_TRUE(spent.ok());  // skipped is not failed; the report counts what was skipped
  EXPECT_EQ(spent.count(JobStatus::skipped), static_cast<std::int64_t>(spent.results.size()));
  options.time_budget_seconds = 1e6;
  EXPECT_EQ(run_sweep(options).count(JobStatus::passed),
            static_cast<std::int64_t>(property_table().size()));
}

TEST(Sweep, FailuresComeWithAReplayAndARerunOfTheirJob) {
  SweepOptions options;
  options.seed = 3;
  options.cases = 30;
  options.impls = {"mean_of_rank_means"};
  const std::string layout = testsupport::a_plain_layout();
  options.layouts = {layout};
  options.properties = {"rank_losses_average_to_global_shifted_loss"};
  options.cps = {2, 3};
  const SweepReport report = run_sweep(options);
  ASSERT_EQ(report.results.size(), 1u);
  const JobResult& r = report.results.front();
  ASSERT_EQ(r.status, JobStatus::failed);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.passed, r.cases - 1);
  EXPECT_EQ(r.replay.rfind("cplab replay --impl mean_of_rank_means --property "
                           "rank_losses_average_to_global_shifted_loss '",
                           0),
            0u);
  const Case c = parse_case(r.counterexample);
  EXPECT_TRUE(c.spec.cp == 2 || c.spec.cp == 3);
  EXPECT_EQ(rerun_command(options, r),
            "cplab sweep --seed 3 --cases 30 --properties "
            "rank_losses_average_to_global_shifted_loss --layouts " +
                layout + " --impl mean_of_rank_means --cp 2,3");
}

// --masks reaches the attention properties: a mutant that widens every window passes a sweep of
// causal masks and fails one of windows, whose counterexample carries the window it drew (so
// that its replay draws it again) and whose rerun names the masks.
TEST(SweepMasks, TheChosenMasksAreTheOnesTheCasesDraw) {
  SweepOptions options;
  options.seed = 5;
  options.cases = 60;
  options.impls = {"mask_window_off_by_one"};
  options.layouts = {testsupport::a_plain_layout()};
  options.properties = {"cp_attention_matches_unsharded"};
  options.masks = {"causal", "chunked"};
  const SweepReport held = run_sweep(options);
  ASSERT_EQ(held.results.size(), 1u);
  EXPECT_EQ(held.results.front().status, JobStatus::passed) << held.results.front().message;
  EXPECT_EQ(held.masks, options.masks);
  options.masks = {"window"};
  const SweepReport report = run_sweep(options);
  ASSERT_EQ(report.results.size(), 1u);
  const JobResult& r = report.results.front();
  ASSERT_EQ(r.status, JobStatus::failed);
  EXPECT_EQ(parse_case(r.counterexample).mask, "window");
  EXPECT_NE(rerun_command(options, r).find(" --masks window"), std::string::npos);
  options.masks = {"window:0"};
  EXPECT_THROW(run_sweep(options), Error);
}

// A sweep that draws some families asks coverage only for those: the attention properties'
// "mask F" rules of the others are left out, every other rule kept.
TEST(SweepMasks, CoverageAsksOnlyForTheFamiliesDrawn) {
  const std::vector<CoverageRule> rules = {{"mask causal"}, {"mask window"}, {"S fill"}};
  const auto options = [](const std::vector<CoverageRule>& kept) {
    std::vector<std::string> out;
    for (const CoverageRule& rule : kept) out.push_back(rule.option);
    return out;
  };
  EXPECT_EQ(options(rules_for_masks(rules, {})),
            (std::vector<std::string>{"mask causal", "mask window", "S fill"}));
  EXPECT_EQ(options(rules_for_masks(rules, {"window:4", "chunked"})),
            (std::vector<std::string>{"mask window", "S fill"}));
}

TEST(SweepCoverage, ADefaultSweepFailsNamingWhatItNeverDrew) {
  SweepOptions options;
  EXPECT_TRUE(coverage_required(options));
  options.cases = 100;
  EXPECT_FALSE(coverage_required(options));  // a short sweep reports coverage, it does not judge it
  JobResult r;
  r.status = JobStatus::passed;
  r.cases = r.passed = 500;
  r.combinations = {{"THD fill · packed · int · C=2", 4},
                    {"S fill dim2 · bshd+pad · byte · C=2", 0}};
  require_coverage(r);
  EXPECT_EQ(r.status, JobStatus::failed);
  EXPECT_EQ(r.message,
            "coverage: 1 of 2 declared combinations never drawn: S fill dim2 · bshd+pad · byte · "
            "C=2");
  r.combinations["S fill dim2 · bshd+pad · byte · C=2"] = 1;
  r.status = JobStatus::passed;
  require_coverage(r);
  EXPECT_EQ(r.status, JobStatus::passed);
}

}  // namespace
}  // namespace cplab::properties

namespace cplab::properties {
namespace {

// The time budget bounds the whole run, not just the start of jobs: a job of ten million cases is
// cut between cases, reported skipped (never passed) with the cases that held.
TEST(SweepStop, TheTimeBudgetCutsAJobBetweenCases) {
  SweepOptions options;
  options.seed = 11;
  options.cases = 10'000'000;
  options.impls = {"sim"};
  options.layouts = {a_cp_off_layout()};
  options.properties = {"shard_then_gather_is_identity"};
  options.time_budget_seconds = 0.5;
  const SweepReport report = run_sweep(options);
  ASSERT_EQ(report.results.size(), 1u);
  const JobResult& r = report.results.front();
  EXPECT_EQ(r.status, JobStatus::skipped);
  EXPECT_GT(r.cases, 0);
  EXPECT_LT(r.cases, options.cases);
  EXPECT_EQ(r.passed, r.cases);
  EXPECT_NE(r.message.find("time budget of 0.5 s spent after"), std::string::npos) << r.message;
  EXPECT_TRUE(report.complete);     // every job of the run is listed
  EXPECT_LT(report.seconds, 30.0);  // without the cut: hours
}

// A stop request (what SIGINT/SIGTERM make) ends the sweep after the running job is cut; the
// report lists the jobs that ran, marked incomplete, and a checkpoint follows every job.
TEST(SweepStop, AStopRequestLeavesAnIncompleteReportOfWhatRan) {
  SweepOptions options;
  options.seed = 12;
  options.cases = 3;
  options.impls = {"sim"};
  options.layouts = two_layouts();
  options.properties = {"shard_then_gather_is_identity"};
  std::vector<std::size_t> checkpoints;
  const auto progress = [&](const Job&, std::int64_t done, std::int64_t, const JobResult* fin) {
    if (fin != nullptr && done == 1) request_sweep_stop(SIGINT);
  };
  const SweepReport report = run_sweep(options, progress, [&](const SweepReport& so_far) {
    EXPECT_FALSE(so_far.complete);
    checkpoints.push_back(so_far.results.size());
  });
  request_sweep_stop(0);
  EXPECT_FALSE(report.complete);
  ASSERT_EQ(report.results.size(), 1u);  // the second job never started
  EXPECT_EQ(report.results[0].status, JobStatus::passed);
  EXPECT_EQ(checkpoints, std::vector<std::size_t>{1});
  // A request before the first case cuts the job at once.
  const auto early = [&](const Job&, std::int64_t, std::int64_t, const JobResult* fin) {
    if (fin == nullptr) request_sweep_stop(SIGTERM);
  };
  const SweepReport cut = run_sweep(options, early);
  request_sweep_stop(0);
  ASSERT_EQ(cut.results.size(), 1u);
  EXPECT_EQ(cut.results[0].status, JobStatus::skipped);
  EXPECT_EQ(cut.results[0].cases, 0);
  EXPECT_EQ(cut.results[0].message, "interrupted by SIGTERM after 0 of 3 cases (all held)");
}

}  // namespace
}  // namespace cplab::properties
