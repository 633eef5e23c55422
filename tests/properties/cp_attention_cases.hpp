#pragma once
// CP attention by schedule on sim (SPEC §13), shared by the generic tests
// (tests/properties/cp_attention_test.cpp) and each layout's own worked cases
// (tests/properties/layouts/ID_test.cpp):
// - CpAttentionOnSim: a worked case, one case line, passes properties 14 and 15 within the derived
//   tolerance (the test is written once; each layout's file instantiates it with its own cases);
// - expect_bytes_scale_as_scheduled: what rank r sends, measured by the twin, changes with the
//   input dtype exactly as the schedules count it (SPEC §13.2).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"
#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "properties/implementation_registry.hpp"
#include "reference/verbs.hpp"

namespace cplab::properties {

// The parameter is the case line ("NAME cp=.. dtype=.. rows=.. S=.. dim=.. seed=..").
class CpAttentionOnSim : public ::testing::TestWithParam<const char*> {};

// Bytes rank `rank` sends running `algo` on the case's first microbatch in `dtype` with H query
// and H_kv KV heads: what the twin measures, and what the schedules count (SPEC §13.2).
struct Moved {
  std::int64_t measured = 0, scheduled = 0;
};
inline Moved bytes_moved(const Case& c, sim::AttentionAlgo algo, DType dtype, std::int64_t heads,
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
// again in its backward. Checked on every rank of the case (its dtype is not read).
inline void expect_bytes_scale_as_scheduled(const std::string& case_line, sim::AttentionAlgo algo,
                                            std::int64_t heads, std::int64_t kv_heads) {
  const Case c = parse_case(case_line);
  for (std::int64_t r = 0; r < c.spec.cp; ++r) {
    const Moved wide = bytes_moved(c, algo, DType::f32, heads, kv_heads, r);
    const Moved narrow = bytes_moved(c, algo, DType::bf16, heads, kv_heads, r);
    EXPECT_EQ(wide.measured - narrow.measured, wide.scheduled - narrow.scheduled)
        << case_line << " " << sim::algo_name(algo) << " rank " << r << ": measured "
        << wide.measured << " (f32) and " << narrow.measured << " (bf16), scheduled "
        << wide.scheduled << " and " << narrow.scheduled;
  }
}

}  // namespace cplab::properties
