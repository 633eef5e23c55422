#include "bench/bench_support.hpp"

#include "sim/partition.hpp"

namespace cplab::bench {

RowPartition partition_row(const std::string& layout, std::int64_t cp, std::int64_t len) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  spec.chunk_size = 512;
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = len;
  if (!sim::layout_descriptor(layout).bshd_rows) {
    // A layout of packed rows: documents of 1/2, 1/4, 1/8, ... of the row and a remainder, room
    // left for each to be padded to 2C.
    rows.packed = true;
    std::int64_t left = len - 4 * 2 * cp;  // room for every document's padding
    for (std::int64_t part = len / 2; part >= 64 && left > 0; part /= 2) {
      const std::int64_t n = std::min(part - 3, left);
      rows.seq_lens.push_back(n);
      left -= n + 2 * cp;
    }
  }
  RowPartition out;
  out.layout = layout;
  out.cp = cp;
  for (std::int64_t r = 0; r < cp; ++r) {
    ShardLayout mine = sim::partition_rank(spec, r, rows);
    out.padded_len = mine.padded_len;
    out.index.push_back(mine.index[0]);
    if (r == 0) out.rank0 = std::move(mine);
  }
  return out;
}

void report_bandwidth(benchmark::State& state, std::int64_t bytes_per_iteration, double seconds,
                      double baseline_gbps) {
  const double bytes =
      static_cast<double>(bytes_per_iteration) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  const double gbps = seconds > 0.0 ? bytes / seconds / 1e9 : 0.0;
  state.counters["GB/s"] = gbps;
  state.counters["baseline_GB/s"] = baseline_gbps;
  state.counters["vs_baseline"] = baseline_gbps > 0.0 ? gbps / baseline_gbps : 0.0;
}

}  // namespace cplab::bench
