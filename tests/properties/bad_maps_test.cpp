// An implementation that hands shared code wrong maps (tests/properties/bad_maps.hpp) fails every
// property that reads its partition with a shrunk counterexample that fails again on replay; the
// sweep over it runs every job to the end and writes a whole report; and each crossing names the
// rank, the entry and the bad value. Under AddressSanitizer (the ASan stage of .ci/run runs this
// test) no byte is read or written through a wrong map on the way.
#include "tests/properties/bad_maps.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "properties/harness.hpp"
#include "properties/runner.hpp"
#include "properties/sweep.hpp"
#include "reports/sweep_report.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

using testing::BadMapsImplementation;
using testing::MapFault;

ImplementationInfo bad_maps_info(MapFault fault) {
  return {.name = BadMapsImplementation(fault).name(),
          .summary =
              "sim whose last rank hands shared code " + testing::map_fault_name(fault) + " maps",
          .mutant = false,
          .in_default_sweep = false,
          .make = [fault] { return std::make_unique<BadMapsImplementation>(fault); }};
}

// Properties 12-15 never read the implementation's maps: 12 and 13 check the schedule alone (the
// same on every implementation), 14 and 15 hand the verb the reference's layout (they test CP
// attention, not the partition). On bad maps they pass; every other property fails.
bool reads_the_partition(const std::string& property) {
  static const std::set<std::string> schedule_or_verb_only{
      "ring_schedule_covers_mask_once", "attention_critical_path_is_balanced",
      "cp_attention_matches_unsharded", "lse_merge_is_stable"};
  return !schedule_or_verb_only.contains(property);
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class BadMapsSweep : public ::testing::TestWithParam<MapFault> {};

// Every property on every layout: a failed job with a shrunk counterexample, never a crash, an
// abort, a hang or a job that could not run; the report lists every job and reads back whole.
TEST_P(BadMapsSweep, FailsEveryPropertyAndTheReportIsWhole) {
  const ImplementationInfo info = bad_maps_info(GetParam());
  SweepOptions options;
  options.seed = 1;
  options.cases = 40;
  options.impls = {info.name};
  std::vector<Job> jobs;
  for (const PropertyInfo& property : property_table()) {
    for (const LayoutEntry& layout : layout_table()) {
      jobs.push_back({static_cast<std::int64_t>(jobs.size()), JobSpec{&property, &layout, &info}});
    }
  }
  const SweepReport report = run_jobs(options, jobs);
  ASSERT_TRUE(report.complete);
  ASSERT_EQ(report.results.size(), jobs.size());
  const auto impl = info.make();
  std::int64_t must_fail = 0;
  for (const JobResult& result : report.results) {
    const std::string job = result.property + " on " + result.layout;
    if (!reads_the_partition(result.property)) {
      // Passed, or skipped where the property checks the schedule alone (its jobs run on sim).
      EXPECT_NE(result.status, JobStatus::failed) << job << ": " << result.message;
      continue;
    }
    ++must_fail;
    ASSERT_EQ(result.status, JobStatus::failed) << job << ": " << result.message;
    EXPECT_EQ(result.failed, 1) << job;
    ASSERT_FALSE(result.counterexample.empty()) << job << ": " << result.message;
    EXPECT_EQ(result.message.find("could not run its cases"), std::string::npos) << job;
    EXPECT_NE(result.replay.find("--impl " + info.name), std::string::npos) << job;
    // The counterexample is the shrunk case: it parses and fails again the same way.
    const CaseOutcome again =
        run_case(find_property(result.property), parse_case(result.counterexample), *impl);
    EXPECT_EQ(again.failure, result.message) << job;
  }
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("bad-maps-" + testing::map_fault_name(GetParam()));
  std::filesystem::remove_all(dir);
  reports::write_all(report, dir);
  const SweepReport back = reports::read_json_file(dir / "report.json");
  EXPECT_TRUE(back.complete);
  ASSERT_EQ(back.results.size(), jobs.size());
  EXPECT_EQ(back.count(JobStatus::failed), must_fail);
  const std::string junit = slurp(dir / "junit.xml");
  EXPECT_NE(junit.find("</testsuites>"), std::string::npos);
  // The summary carries the counterexamples (the last failed job's, say).
  const auto last_failed =
      std::find_if(report.results.rbegin(), report.results.rend(),
                   [](const JobResult& r) { return r.status == JobStatus::failed; });
  ASSERT_NE(last_failed, report.results.rend());
  ASSERT_FALSE(last_failed->counterexample.empty());
  EXPECT_NE(slurp(dir / "summary.md").find(last_failed->counterexample), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(EveryFault, BadMapsSweep,
                         ::testing::Values(MapFault::past_end, MapFault::repeat,
                                           MapFault::negative),
                         [](const auto& param_info) {
                           std::string name = testing::map_fault_name(param_info.param);
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

// Each crossing names the rank, the entry and the bad value, on a plainly sharding layout
// (tests/support/layouts.hpp) at C = 2, L = 8: the last rank holds ℓ = 4 slots.
std::string crossing_case() {
  return testsupport::a_plain_layout() + " cp=2 rows=1 S=8 docs=- vocab=11 dtype=f32 seed=3";
}

std::string failure_of(const std::string& property, MapFault fault) {
  BadMapsImplementation impl(fault);
  return run_case(find_property(property), parse_case(crossing_case()), impl).failure;
}

// What the repeat fault names twice: the last rank's first slot (row 0), which its last entry
// becomes.
std::string repeated_entry() {
  const Subject subject(parse_case(crossing_case()));
  return fmt::format("entry 3 is {}, a slot an earlier entry",
                     reference_layout(subject.microbatches.front(), 1).index[0][0]);
}

void expect_names(const std::string& failure, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) EXPECT_NE(failure.find(part), std::string::npos) << failure;
}

TEST(BadMapsCrossings, ThePartitionNamesTheRankEntryAndValue) {
  expect_names(failure_of("index_maps_are_a_closed_form_permutation", MapFault::past_end),
               {"rank 1/2", "rank 1's index map: entry 3 is 8, outside [0, 8)"});
  expect_names(failure_of("index_maps_are_a_closed_form_permutation", MapFault::negative),
               {"rank 1/2", "rank 1's index map: entry 0 is -1, outside [0, 8)"});
  expect_names(failure_of("index_maps_are_a_closed_form_permutation", MapFault::repeat),
               {"rank 1/2", "rank 1's index map: " + repeated_entry()});
}

TEST(BadMapsCrossings, TheLossExchangeNamesTheTargetOwner) {
  expect_names(failure_of("rank_losses_average_to_global_shifted_loss", MapFault::past_end),
               {"rank 1/2", "shifted_cp_loss: row 0: target slot", "at offset 4, outside cp=2"});
  expect_names(failure_of("rank_losses_average_to_global_shifted_loss", MapFault::negative),
               {"rank 1/2", "at offset -1, outside cp=2"});
}

TEST(BadMapsCrossings, AttentionNamesTheLayoutEntry) {
  expect_names(failure_of("attention_matches_unsharded", MapFault::past_end),
               {"attention: rank 1 row 0: index map: entry 3 is 8, outside [0, 8)"});
  expect_names(failure_of("attention_matches_unsharded", MapFault::repeat),
               {"attention: rank 1 row 0: index map: " + repeated_entry()});
}

// The gather's own slots (all ranks' maps, gathered) reach the token moves: place_tokens refuses
// them before a byte moves.
TEST(BadMapsCrossings, TheGatherRefusesItsSlotsBeforeMovingTokens) {
  const Case c = parse_case(crossing_case());
  const Subject subject(c);
  for (const MapFault fault : {MapFault::past_end, MapFault::repeat, MapFault::negative}) {
    BadMapsImplementation impl(fault);
    std::string failure;
    try {
      run_ranks(2, [&](Comm& comm, std::int64_t r) {
        const ShardLayout layout = reference_layout(subject.microbatches.front(), r);
        const Tensor local(DType::f32, {1, layout.local_len(), 3});
        impl.gather_token_tensor(comm, layout, local, 1, false);
      });
    } catch (const Error& e) {
      failure = e.what();
    }
    const char* want = fault == MapFault::past_end ? "entry 7 is 8, outside [0, 8)"
                       : fault == MapFault::repeat ? "entry 7 is"
                                                   : "entry 0 is -1, outside [0, 8)";
    expect_names(failure, {"rank 1/2", "place_tokens: row 0 map:", want});
  }
}

// Each rank checks its own caller positions against its own S; the trimmed gather indexes by every
// rank's, so it checks the gathered ones against this rank's S too. Rank 1 records a longer caller
// row than rank 0 and a position inside it but past rank 0's.
TEST(BadMapsCrossings, TheTrimmedGatherChecksEveryRanksCallerPositions) {
  const Case c = parse_case(crossing_case());
  const Subject subject(c);
  sim::SimImplementation sim;
  std::string failure;
  try {
    run_ranks(2, [&](Comm& comm, std::int64_t r) {
      ShardLayout layout = reference_layout(subject.microbatches.front(), r);
      if (r == 1) {
        layout.caller_len += 4;
        layout.caller_pos[0][0] = layout.caller_len - 1;
      }
      const Tensor local(DType::f32, {1, layout.local_len(), 3});
      sim.gather_token_tensor(comm, layout, local, 1, true);
    });
  } catch (const Error& e) {
    failure = e.what();
  }
  expect_names(failure, {"rank 0/2", "gather_token_tensor: row 0: the gathered caller positions:",
                         "entry 4 is 11, outside [-1, 8)"});
}

}  // namespace
}  // namespace cplab::properties
