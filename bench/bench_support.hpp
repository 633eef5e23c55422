#pragma once
// What the benchmark suites share: one large row's partition per layout (from the sim's rank-local
// partition, the same metadata the implementations use), self-locating token values, and the
// counters every benchmark reports.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference/types/shard_layout.hpp"

namespace cplab::bench {

// A row of `len` tokens on `cp` ranks: BSHD for contiguous, head-tail and magi (K = 512); thd
// packs documents of varied lengths into it. Every rank's index map, rank 0's layout.
struct RowPartition {
  std::string layout;
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;
  std::vector<std::vector<std::int64_t>> index;  // [C][ℓ]
  ShardLayout rank0;
};
RowPartition partition_row(const std::string& layout, std::int64_t cp, std::int64_t len);

// The 16-bit value element e of global token g holds: a wrong element says where it came from.
inline std::uint16_t token_bits(std::int64_t g, std::int64_t e) {
  return static_cast<std::uint16_t>((g * 7919 + e * 31 + 1) & 0xffff);
}

// bytes_processed, and from the seconds the loop measured itself: GB/s and the ratio to a baseline
// measured in the same process (1.0 = as fast as a plain copy of the same bytes).
void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration, double seconds,
                      double baseline_gbps);

}  // namespace cplab::bench
