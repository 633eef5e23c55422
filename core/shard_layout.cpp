#include "core/shard_layout.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <span>

#include "core/error.hpp"
#include "core/map_checks.hpp"

namespace cplab {
namespace {

// Every row of a per-row array has ℓ entries.
template <typename T>
void check_rows(const ShardLayout& layout, const std::vector<std::vector<T>>& rows,
                const char* what, const char* where) {
  const std::int64_t len = layout.local_len();
  CPLAB_CHECK(static_cast<std::int64_t>(rows.size()) == layout.rows,
              "{}: rank {} records {} rows of {}, the layout has B={}", where, layout.rank,
              rows.size(), what, layout.rows);
  for (std::size_t b = 0; b < rows.size(); ++b) {
    CPLAB_CHECK(static_cast<std::int64_t>(rows[b].size()) == len,
                "{}: rank {} row {}: {} has {} entries for ℓ = L/C = {}/{} = {} local tokens",
                where, layout.rank, b, what, rows[b].size(), layout.padded_len, layout.cp, len);
  }
}

void check_map(const ShardLayout& layout, std::span<const std::int64_t> map, std::size_t b,
               const char* what, std::int64_t lo, std::int64_t hi, bool distinct,
               const char* where) {
  const MapFault fault = find_map_fault(map, lo, hi, distinct);
  CPLAB_CHECK(!fault, "{}: rank {} row {}: {} {}", where, layout.rank, b, what,
              describe_map_fault(fault, lo, hi));
}

// Bounds that rise from 0 to at most `last`.
void check_bounds(const ShardLayout& layout, const std::vector<std::int64_t>& bounds, std::size_t b,
                  const char* what, std::int64_t last, const char* where) {
  const bool rising = std::is_sorted(bounds.begin(), bounds.end());
  CPLAB_CHECK(!bounds.empty() && bounds.front() == 0 && bounds.back() <= last && rising,
              "{}: rank {} row {}: {} [{}] must rise from 0 to at most {}", where, layout.rank, b,
              what, fmt::join(bounds, ","), last);
}

}  // namespace

void check_recorded_layout(const ShardLayout& layout, const char* where) {
  CPLAB_CHECK(layout.rows > 0 && static_cast<std::int64_t>(layout.index.size()) == layout.rows,
              "{}: no recorded layout ({} rows, {} index maps); shard a batch first", where,
              layout.rows, layout.index.size());
  CPLAB_CHECK(layout.cp >= 1 && layout.rank >= 0 && layout.rank < layout.cp &&
                  layout.padded_len >= 0 && layout.padded_len % layout.cp == 0 &&
                  layout.caller_len >= 0,
              "{}: a layout of rank {} of cp={} over L={} (S={}): the rank must lie in [0, C) and "
              "L be a multiple of C",
              where, layout.rank, layout.cp, layout.padded_len, layout.caller_len);
  check_rows(layout, layout.index, "the index map", where);
  check_rows(layout, layout.caller_pos, "the caller positions", where);
  check_rows(layout, layout.positions, "the position ids", where);
  check_rows(layout, layout.doc_ids, "the document ids", where);
  check_rows(layout, layout.real, "the real-token flags", where);
  CPLAB_CHECK(static_cast<std::int64_t>(layout.valid_tokens.size()) == layout.rows,
              "{}: rank {} records valid_tokens for {} rows, the layout has B={}", where,
              layout.rank, layout.valid_tokens.size(), layout.rows);
  const std::int64_t len = layout.local_len();
  for (std::size_t b = 0; b < layout.index.size(); ++b) {
    check_map(layout, layout.index[b], b, "index map:", 0, layout.padded_len, true, where);
    check_map(layout, layout.caller_pos[b], b, "caller positions:", -1, layout.caller_len, false,
              where);
  }
  const auto optional_rows = [&](std::size_t n, const char* what) {
    CPLAB_CHECK(n == 0 || static_cast<std::int64_t>(n) == layout.rows,
                "{}: rank {} records {} for {} rows, the layout has B={}", where, layout.rank, what,
                n, layout.rows);
  };
  optional_rows(layout.cu_seqlens.size(), "local cu_seqlens");
  optional_rows(layout.cu_seqlens_padded.size(), "document bounds (cu_seqlens_padded)");
  optional_rows(layout.varlen.size(), "varlen segments");
  optional_rows(layout.map.size(), "map parameters");
  for (std::size_t b = 0; b < layout.cu_seqlens.size(); ++b) {
    if (!layout.cu_seqlens[b].empty())
      check_bounds(layout, layout.cu_seqlens[b], b, "local cu_seqlens", len, where);
  }
  for (std::size_t b = 0; b < layout.cu_seqlens_padded.size(); ++b) {
    if (!layout.cu_seqlens_padded[b].empty()) {
      check_bounds(layout, layout.cu_seqlens_padded[b], b, "document bounds", layout.padded_len,
                   where);
    }
  }
  for (std::size_t b = 0; b < layout.varlen.size(); ++b) {
    const VarlenSegments& s = layout.varlen[b];
    check_bounds(layout, s.cu_seqlens_q, b, "cu_seqlens_q", len, where);
    CPLAB_CHECK(s.cu_seqlens_k.size() == s.cu_seqlens_q.size() && s.k_begin >= 0 &&
                    s.k_begin <= s.k_end && s.k_end <= layout.padded_len,
                "{}: rank {} row {}: varlen key slice [{}, {}) of L={} with {} key bounds for {} "
                "query bounds",
                where, layout.rank, b, s.k_begin, s.k_end, layout.padded_len, s.cu_seqlens_k.size(),
                s.cu_seqlens_q.size());
    check_bounds(layout, s.cu_seqlens_k, b, "cu_seqlens_k", s.k_end - s.k_begin, where);
  }
}

}  // namespace cplab
