// CP attention by schedule on sim (SPEC §13): worked cases of every algorithm pass within the
// derived tolerance, with what they measured against it printed; repeated KV heads pass; a
// misrouted ring names the step and the rank; the bytes sent scale with the dtype as scheduled;
// bad schedules are one-line errors. The worked cases are each layout's own (its file in
// tests/properties/layouts/ instantiates CpAttentionOnSim, cp_attention_cases.hpp); the tests
// here run on a layout of a kind the registry names (tests/support/layouts.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"
#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/runner.hpp"
#include "properties/sweep.hpp"
#include "reference/verbs.hpp"
#include "tests/properties/cp_attention_cases.hpp"
#include "tests/properties/test_seed.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

TEST_P(CpAttentionOnSim, MatchesUnshardedWithinTheDerivedTolerance) {
  const auto sim = find_implementation("sim").make();
  for (const char* property : {"cp_attention_matches_unsharded", "lse_merge_is_stable"}) {
    const CaseOutcome out = run_case(find_property(property), parse_case(GetParam()), *sim);
    EXPECT_EQ(out.failure, "") << property;
    // What the case measured against its tolerance (the last note), for the record.
    std::cout << property << " " << GetParam() << ": " << out.notes.notes.back() << "\n";
  }
}

// Every algorithm (ring and all-gather and Ulysses, usp's two levels), bf16, f16 and f32, GQA
// drawn from the seed: the cases are instantiated in the layouts' own files.

// Ulysses with fewer KV heads than ranks repeats them (SPEC §10.5): their gradients come back
// summed over the ranks that held a copy. The seeds draw such cases among others, and the
// algorithms a plainly sharding layout runs.
TEST(CpAttentionHeads, RepeatedKvHeadsPassOnEveryAlgorithm) {
  const auto sim = find_implementation("sim").make();
  const std::string layout = testsupport::a_plain_layout();
  int repeated = 0;
  for (int seed = 0; seed < 24; ++seed) {
    const Case c =
        parse_case(fmt::format("{} cp=4 dtype=bf16 rows=1 S=12 dim=2 seed={}", layout, seed));
    const CaseOutcome out = run_case(find_property("cp_attention_matches_unsharded"), c, *sim);
    EXPECT_EQ(out.failure, "");
    for (const std::string& tag : out.notes.tags) {
      if (tag.find("H_kv=1") != std::string::npos || tag.find("H_kv=2") != std::string::npos)
        ++repeated;
    }
  }
  EXPECT_GT(repeated, 0) << "no case drew fewer KV heads than ranks";
}

// Seed 1 draws the ring among the algorithms a plainly sharding layout runs (one per case, by the
// seed); its ranks hold L / C = 2 slots each.
TEST(CpAttentionRouting, AReversedBackwardRingNamesTheStepAndTheRank) {
  const auto broken = find_implementation("attention_backward_ring_reversed").make();
  const CaseOutcome out = run_case(
      find_property("cp_attention_matches_unsharded"),
      parse_case(testsupport::a_plain_layout() + " cp=3 dtype=f32 rows=1 S=6 seed=1"), *broken);
  EXPECT_NE(out.failure.find("cp_attention backward: at step 1 rank 0 holds keys rank 1 local "
                             "[0, 2); the schedule says rank 2 local [0, 2)"),
            std::string::npos)
      << out.failure;
}

// The schedule coverage property holds for any C cplab takes, not only C <= 64: it once kept one
// bit per rank and failed every case past 64 ranks with nothing on stderr.
TEST(ScheduleCoverage, HoldsPastSixtyFourRanks) {
  const auto sim = find_implementation("sim").make();
  for (const int cp : {64, 65, 128}) {
    const CaseOutcome out =
        run_case(find_property("ring_schedule_covers_mask_once"),
                 parse_case(fmt::format("{} cp={} rows=1 S={} seed=1",
                                        testsupport::a_plain_layout(), cp, 2 * cp)),
                 *sim);
    EXPECT_EQ(out.failure, "") << "C=" << cp;
  }
}

// What scales with the dtype is what the schedules count, on a plainly sharding layout for every
// algorithm it runs (cp_attention_cases.hpp); the layouts' own files add theirs (two rows of
// Ulysses, usp's two levels).
TEST(CpAttentionBytes, WhatScalesWithTheDtypeIsWhatTheScheduleCounts) {
  struct Run {
    sim::AttentionAlgo algo;
    std::int64_t heads, kv_heads;
  };
  const Run runs[] = {
      {sim::AttentionAlgo::all_gather, 2, 2},
      {sim::AttentionAlgo::ring, 2, 1},
      {sim::AttentionAlgo::ulysses, 2, 1},
  };
  const std::string c = testsupport::a_plain_layout() + " cp=2 rows=1 S=8 dim=2";
  for (const Run& run : runs) expect_bytes_scale_as_scheduled(c, run.algo, run.heads, run.kv_heads);
}

// Runs sim's cp_attention on "PLAIN cp=3 rows=1 S=12 dim=2" (PLAIN: a plainly sharding layout,
// its ranks holding 4 slots each) by `algo` (H = 3, H_kv = 3), the schedules of rank r first
// passed through `spoil(schedules, r)` and the inputs through `inputs`; returns the error's
// message ("" when it ran).
std::string attention_error(
    sim::AttentionAlgo algo,
    const std::function<void(std::vector<sim::AttentionSchedule>&, std::int64_t)>& spoil,
    const std::function<void(Tensor& q, Tensor& k)>& inputs = {}) {
  const Case c = parse_case(testsupport::a_plain_layout() + " cp=3 rows=1 S=12 dim=2");
  const Subject subject(c);
  const ShardPlan& plan = subject.microbatches.front();
  const sim::AttentionShape shape{.heads = 3, .kv_heads = 3, .head_dim = 2, .dtype = DType::f32};
  std::vector<sim::AttentionSchedule> schedules;
  for (const RowPlan& row : plan.rows) {
    schedules.push_back(
        sim::build_schedule(sim::layout_descriptor(c.spec.layout), c.spec, row, algo, shape));
  }
  const auto impl = find_implementation("sim").make();
  try {
    run_ranks(c.spec.cp, [&](Comm& comm, std::int64_t r) {
      auto mine = schedules;
      spoil(mine, r);
      const auto local = [&](std::uint64_t stream, std::int64_t h) {
        return reference::select_rank(
            plan, float_tensor(c.seed, stream, {1, plan.rows.front().padded_len, h, 2}, 1.0f), 1,
            r);
      };
      Tensor q = local(1, 3), k = local(2, 3);
      if (inputs) inputs(q, k);
      impl->cp_attention(comm, reference_layout(plan, r), mine, q, k, k, q);
    });
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A bad schedule or bad tensors handed in: one line naming what is wrong, never a hang or a
// crash, also where only one rank's schedule is bad (the others are then in a collective).
TEST(CpAttentionErrors, BadSchedulesAndTensorsAreOneLineErrors) {
  using sim::AttentionAlgo;
  const auto one_line = [](const std::string& message, const std::string& says) {
    EXPECT_NE(message.find(says), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  };
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t) { s.front().steps.pop_back(); }),
           "a ring schedule of 2 steps, expected 3");
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t r) {
                             if (r == 1) s.front().steps[1].ranks[1].blocks.front().k.end = 99;
                           }),
           "rank 1's block 0 reads queries");
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t r) {
                             if (r == 2)
                               std::swap(s.front().steps[2].ranks[0], s.front().steps[2].ranks[2]);
                           }),
           "step 2 of the schedule lists 3 ranks, not rank 2 of 3");
  one_line(attention_error(AttentionAlgo::ulysses,
                           [](auto& s, std::int64_t r) {
                             if (r == 0) s.front().steps[0].ranks[0].keys.pop_back();
                           }),
           "cp_attention forward: at step 0 rank 0 holds keys");
  one_line(attention_error(AttentionAlgo::all_gather,
                           [](auto& s, std::int64_t) { s.front().shape.heads = 6; }),
           "schedule is for 6 / 3 heads, the tensors have 3 / 3");
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t r) {
                             if (r == 1) s.front().doc_ids.resize(5);
                           }),
           "cp_attention: the schedule's facts are for 5 documents' slots, 12 real flags and 12 "
           "tokens; its rows are 12 slots");
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t r) {
                             if (r == 2) s.front().facts.pop_back();
                           }),
           "cp_attention: the schedule's facts are for 12 documents' slots, 12 real flags and 11 "
           "tokens; its rows are 12 slots");
  one_line(attention_error(AttentionAlgo::ring,
                           [](auto& s, std::int64_t) { s.front().index[2].pop_back(); }),
           "cp_attention: the schedule maps 3 local tokens of rank 2; the ranks hold 4");
  one_line(attention_error(
               AttentionAlgo::ring, [](auto&, std::int64_t) {},
               [](Tensor& q, Tensor& k) {
                 q = q.to(DType::i64);
                 k = k.to(DType::i64);
               }),
           "attention runs in f32, bf16 or f16, not i64");
  one_line(attention_error(
               AttentionAlgo::ring, [](auto&, std::int64_t) {},
               [](Tensor& /*q*/, Tensor& k) { k = k.to(DType::bf16); }),
           "cp_attention: k is");
}

// bf16's dK bound can be as large as a dK that cancels (SPEC §13.3), so a 2× gradient error is
// f32's to catch: a job of the default size declares f32 at C > 1 as coverage and draws it (the
// job of a plainly sharding layout, tests/support/layouts.hpp).
TEST(CpAttentionCoverage, EveryJobDrawsF32CasesAtCAboveOne) {
  const JobSpec job{&find_property("cp_attention_matches_unsharded"),
                    &layout_entry(testsupport::a_plain_layout()), &find_implementation("sim")};
  RunOptions options;
  options.cases = kDefaultCasesPerJob;
  options.seed = job_seed(test_seed(), job);
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::passed) << result.message;
  int declared = 0;
  for (const auto& [name, count] : result.combinations) {
    if (name.rfind("f32 · ", 0) != 0) continue;
    ++declared;
    EXPECT_GT(count, 0) << name;
  }
  EXPECT_GT(declared, 0) << "f32 is not declared as coverage";
}

// Past C = 16 the head-splitting algorithm runs H = C heads over the whole row (20-60 times the
// narrow draws' work): it is drawn there in one case of four, never with two heads per rank, and
// still drawn (cp_attention.cpp, kWideHeadsUpTo).
TEST(CpAttentionDraws, PastSixteenRanksHeadSplittingIsRareButDrawnWithOneHeadPerRank) {
  const JobSpec job{&find_property("cp_attention_matches_unsharded"),
                    &layout_entry(testsupport::a_plain_layout()), &find_implementation("sim")};
  RunOptions options;
  options.cases = 80;
  options.seed = job_seed(test_seed(), job);
  options.gen.cp = {24, 32};
  const JobResult result = run_job(job, options);
  ASSERT_EQ(result.status, JobStatus::passed) << result.message;
  std::int64_t splitting = 0, narrow = 0;
  for (const auto& [tag, count] : result.coverage) {
    if (tag.find(" H=") == std::string::npos) continue;  // not an algorithm's tag
    bool splits = false;  // the tag names a head-splitting algorithm, then the mask
    for (sim::AttentionAlgo algo : sim::all_algos()) {
      if (algo != sim::AttentionAlgo::all_gather && algo != sim::AttentionAlgo::ring)
        splits =
            splits || tag.find(std::string(" ") + sim::algo_name(algo) + " ") != std::string::npos;
    }
    (splits ? splitting : narrow) += count;
    if (splits) {
      EXPECT_TRUE(tag.find(" H=24 ") != std::string::npos ||
                  tag.find(" H=32 ") != std::string::npos)
          << tag;
    }
  }
  EXPECT_GT(splitting, 0) << "no head-splitting draw past C = 16";
  EXPECT_LT(4 * splitting, narrow)
      << splitting << " head-splitting draws of " << splitting + narrow;
}

}  // namespace
}  // namespace cplab::properties
