// CP attention by schedule on sim (SPEC §13): worked cases of every algorithm pass within the
// derived tolerance, with what they measured against it printed; a misrouted ring names the step
// and the rank; and the stable merge's property fails the unstable merge at large logits.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/runner.hpp"
#include "properties/sweep.hpp"
#include "reference/verbs.hpp"
#include "sim/attention/schedule.hpp"
#include "sim/layout_descriptor.hpp"
#include "tests/properties/test_seed.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& line : lines) s += line + "\n";
  return s;
}

class CpAttentionOnSim : public ::testing::TestWithParam<const char*> {};

TEST_P(CpAttentionOnSim, MatchesUnshardedWithinTheDerivedTolerance) {
  const auto sim = find_implementation("sim").make();
  for (const char* property : {"cp_attention_matches_unsharded", "lse_merge_is_stable"}) {
    const CaseOutcome out = run_case(find_property(property), parse_case(GetParam()), *sim);
    EXPECT_EQ(out.failure, "") << property;
    // What the case measured against its tolerance (the last note), for the record.
    std::cout << property << " " << GetParam() << ": " << out.notes.notes.back() << "\n";
  }
}

// Every algorithm: ring and all-gather and Ulysses on head-tail, thd and contiguous; usp's two
// levels at R = 2, U = 2; bf16, f16 and f32; GQA drawn from the seed.
INSTANTIATE_TEST_SUITE_P(Cases, CpAttentionOnSim,
                         ::testing::Values("head-tail cp=4 dtype=bf16 rows=2 S=48 dim=4 seed=3",
                                           "usp cp=4 R=2 dtype=bf16 rows=1 S=40 dim=4 seed=5",
                                           "thd cp=3 dtype=bf16 docs=13,7+1,20 dim=3 seed=11",
                                           "contiguous cp=2 dtype=f16 rows=1 S=30 dim=4 seed=2",
                                           "stripe cp=3 dtype=f32 rows=1 S=24 dim=2 seed=9"));

// Ulysses with fewer KV heads than ranks repeats them (SPEC §10.5): their gradients come back
// summed over the ranks that held a copy. The seeds draw such cases among others.
TEST(CpAttentionHeads, RepeatedKvHeadsPassOnEveryAlgorithm) {
  const auto sim = find_implementation("sim").make();
  int repeated = 0;
  for (int seed = 0; seed < 24; ++seed) {
    const Case c =
        parse_case(fmt::format("contiguous cp=4 dtype=bf16 rows=1 S=12 dim=2 seed={}", seed));
    const CaseOutcome out = run_case(find_property("cp_attention_matches_unsharded"), c, *sim);
    EXPECT_EQ(out.failure, "");
    for (const std::string& tag : out.notes.tags) {
      if (tag.find("H_kv=1") != std::string::npos || tag.find("H_kv=2") != std::string::npos)
        ++repeated;
    }
  }
  EXPECT_GT(repeated, 0) << "no case drew fewer KV heads than ranks";
}

// Seed 1 draws the ring among the algorithms contiguous runs (one per case, by the seed).
TEST(CpAttentionRouting, AReversedBackwardRingNamesTheStepAndTheRank) {
  const auto broken = find_implementation("attention_backward_ring_reversed").make();
  const CaseOutcome out =
      run_case(find_property("cp_attention_matches_unsharded"),
               parse_case("contiguous cp=3 dtype=f32 rows=1 S=6 seed=1"), *broken);
  EXPECT_NE(out.failure.find("cp_attention backward: at step 1 rank 0 holds keys rank 1 local "
                             "[0, 2); the schedule says rank 2 local [0, 2)"),
            std::string::npos)
      << out.failure;
}

TEST(CpAttentionStability, TheUnstableMergePassesAtModerateLogitsAndFailsAtLarge) {
  const auto broken = find_implementation("attention_lse_merge_unstable").make();
  const Case c = parse_case("head-tail cp=4 dtype=f32 rows=1 S=32 dim=4 seed=1");
  const CaseOutcome moderate =
      run_case(find_property("cp_attention_matches_unsharded"), c, *broken);
  EXPECT_EQ(moderate.failure, "") << joined(moderate.notes.notes);
  const CaseOutcome large = run_case(find_property("lse_merge_is_stable"), c, *broken);
  EXPECT_NE(large.failure, "");
}

// Bytes rank `rank` sends running `algo` on the case's first microbatch in `dtype` with H query
// and H_kv KV heads: what the twin measures, and what the schedules count (SPEC §13.2).
struct Moved {
  std::int64_t measured = 0, scheduled = 0;
};
Moved bytes_moved(const Case& c, sim::AttentionAlgo algo, DType dtype, std::int64_t heads,
                  std::int64_t kv_heads, std::int64_t rank) {
  const Subject subject(c);
  const ShardPlan& plan = subject.microbatches.front();
  const sim::AttentionShape shape{
      .heads = heads, .kv_heads = kv_heads, .head_dim = c.dim, .dtype = dtype};
  std::vector<sim::AttentionSchedule> schedules;
  Moved moved;
  for (const RowPlan& row : plan.rows) {
    schedules.push_back(
        sim::build_schedule(sim::layout_descriptor(c.spec.layout), c.spec, row, algo, shape));
    for (const sim::ScheduleStep& step : schedules.back().steps) {
      const sim::RankStep& rs = step.ranks[static_cast<std::size_t>(rank)];
      moved.scheduled += rs.bytes_sent + rs.backward_bytes_sent;
    }
  }
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len;
  const auto impl = find_implementation("sim").make();
  const auto sent = on_ranks(c.spec.cp, [&](Comm& comm, std::int64_t r) {
    const auto local = [&](std::uint64_t stream, std::int64_t h) {
      return reference::select_rank(
          plan, float_tensor(c.seed, stream, {rows, len, h, c.dim}, 1.0f).to(dtype), 1, r);
    };
    const std::uint64_t before = comm.bytes_sent();
    impl->cp_attention(comm, reference_layout(plan, r), schedules, local(1, heads),
                       local(2, kv_heads), local(3, kv_heads), local(4, heads));
    return static_cast<std::int64_t>(comm.bytes_sent() - before);
  });
  moved.measured = sent[static_cast<std::size_t>(rank)];
  return moved;
}

// What changes with the input dtype is what the schedule counts in it: K, V, Q, dO and the output
// everywhere, and Ulysses' dQ, dK, dV back (the pieces' headers, the held-buffer checks, the LSE
// and the ring's f32 dK/dV are the same in both dtypes, so they cancel). All-gather gathers K/V
// again in its backward.
TEST(CpAttentionBytes, WhatScalesWithTheDtypeIsWhatTheScheduleCounts) {
  struct Run {
    const char* c;
    sim::AttentionAlgo algo;
    std::int64_t heads, kv_heads;
  };
  const Run runs[] = {
      {"contiguous cp=2 rows=1 S=8 dim=2", sim::AttentionAlgo::all_gather, 2, 2},
      {"contiguous cp=2 rows=1 S=8 dim=2", sim::AttentionAlgo::ring, 2, 1},
      {"contiguous cp=2 rows=1 S=8 dim=2", sim::AttentionAlgo::ulysses, 2, 1},
      {"head-tail cp=4 rows=2 S=16 dim=3", sim::AttentionAlgo::ulysses, 4, 4},
      {"usp cp=4 R=2 rows=1 S=16 dim=2", sim::AttentionAlgo::usp, 4, 1},
  };
  for (const Run& run : runs) {
    const Case c = parse_case(run.c);
    for (std::int64_t r = 0; r < c.spec.cp; ++r) {
      const Moved wide = bytes_moved(c, run.algo, DType::f32, run.heads, run.kv_heads, r);
      const Moved narrow = bytes_moved(c, run.algo, DType::bf16, run.heads, run.kv_heads, r);
      EXPECT_EQ(wide.measured - narrow.measured, wide.scheduled - narrow.scheduled)
          << run.c << " " << sim::algo_name(run.algo) << " rank " << r << ": measured "
          << wide.measured << " (f32) and " << narrow.measured << " (bf16), scheduled "
          << wide.scheduled << " and " << narrow.scheduled;
    }
  }
}

// Runs sim's cp_attention on "contiguous cp=3 rows=1 S=12 dim=2" by `algo` (H = 3, H_kv = 3),
// the schedules of rank r first passed through `spoil(schedules, r)` and the inputs through
// `inputs`; returns the error's message ("" when it ran).
std::string attention_error(
    sim::AttentionAlgo algo,
    const std::function<void(std::vector<sim::AttentionSchedule>&, std::int64_t)>& spoil,
    const std::function<void(Tensor& q, Tensor& k)>& inputs = {}) {
  const Case c = parse_case("contiguous cp=3 rows=1 S=12 dim=2");
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
           "cp_attention: the schedule's facts are for 5 documents' slots and 12 real flags; its "
           "rows are 12 slots");
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

}  // namespace
}  // namespace cplab::properties
