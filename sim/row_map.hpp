#pragma once
// The closed-form map of one row of a recorded ShardLayout: global_index(r, k) and owner(g) for
// every rank, from the layout's parameters alone (no index map of another rank is needed). It owns
// the arrays the index_math maps point into and dispatches to the right one.
#include <cstdint>
#include <string>
#include <vector>

#include "reference/types/shard_layout.hpp"
#include "sim/index_math.hpp"

namespace cplab::sim {

class RowMap {
 public:
  // Every layout at C = 1 is the identity; beyond it: contiguous, head-tail, thd (from the
  // document bounds cu_seqlens_padded), magi (from the rank-major chunk assignment).
  RowMap(const std::string& layout, std::int64_t cp, std::int64_t padded_len,
         std::vector<std::int64_t> doc_bounds, std::vector<std::int64_t> rank_chunks,
         std::int64_t chunk_size);
  static RowMap of(const ShardLayout& layout, std::size_t row);

  RowMap(const RowMap& other);
  RowMap& operator=(const RowMap&) = delete;

  const std::string& layout() const { return layout_; }
  std::int64_t cp() const { return cp_; }
  std::int64_t padded_len() const { return padded_len_; }
  std::int64_t local_len() const { return padded_len_ / cp_; }
  std::int64_t global_index(std::int64_t rank, std::int64_t k) const;
  index_math::Slot owner(std::int64_t g) const;

 private:
  enum class Kind : std::uint8_t { contiguous, head_tail, thd, magi };
  void bind();  // points the maps at this object's arrays

  Kind kind_ = Kind::contiguous;
  std::string layout_;
  std::int64_t cp_;
  std::int64_t padded_len_;
  std::vector<std::int64_t> doc_bounds_;
  std::vector<std::int64_t> rank_chunks_;
  std::vector<std::int64_t> chunk_slot_;
  std::int64_t chunk_size_;
  index_math::ContiguousMap contiguous_{};
  index_math::HeadTailMap head_tail_{};
  index_math::ThdMap thd_{};
  index_math::MagiMap magi_{};
};

}  // namespace cplab::sim
