#include "sim/row_map.hpp"

#include "reference/types/error.hpp"

namespace cplab::sim {

RowMap::RowMap(const std::string& layout, std::int64_t cp, std::int64_t padded_len,
               std::vector<std::int64_t> doc_bounds, std::vector<std::int64_t> rank_chunks,
               std::int64_t chunk_size)
    : layout_(layout),
      cp_(cp),
      padded_len_(padded_len),
      doc_bounds_(std::move(doc_bounds)),
      rank_chunks_(std::move(rank_chunks)),
      chunk_size_(chunk_size) {
  CPLAB_CHECK(cp >= 1 && padded_len >= 0 && padded_len % cp == 0,
              "{} row map: L={} does not divide over cp={} ranks", layout, padded_len, cp);
  if (cp == 1 || layout == "identity" || layout == "contiguous") {
    kind_ = Kind::contiguous;
  } else if (layout == "head-tail") {
    CPLAB_CHECK(padded_len % (2 * cp) == 0, "head-tail row map: L={} is not a multiple of 2C={}",
                padded_len, 2 * cp);
    kind_ = Kind::head_tail;
  } else if (layout == "thd") {
    CPLAB_CHECK(
        doc_bounds_.size() >= 2 && doc_bounds_.front() == 0 && doc_bounds_.back() == padded_len,
        "thd row map: document bounds must run from 0 to L={} ({} bounds given)", padded_len,
        doc_bounds_.size());
    for (std::size_t i = 1; i < doc_bounds_.size(); ++i) {
      const std::int64_t slots = doc_bounds_[i] - doc_bounds_[i - 1];
      CPLAB_CHECK(slots >= 0 && slots % (2 * cp) == 0,
                  "thd row map: document {} occupies {} slots, not a multiple of 2C={}", i - 1,
                  slots, 2 * cp);
    }
    kind_ = Kind::thd;
  } else if (layout == "magi") {
    CPLAB_CHECK(chunk_size >= 1 && padded_len % (chunk_size * cp) == 0,
                "magi row map: L={} is not a multiple of K·C={}·{}", padded_len, chunk_size, cp);
    const std::int64_t chunks = padded_len / chunk_size;
    CPLAB_CHECK(static_cast<std::int64_t>(rank_chunks_.size()) == chunks,
                "magi row map: {} assigned chunks for L/K={} chunks", rank_chunks_.size(), chunks);
    chunk_slot_.assign(static_cast<std::size_t>(chunks), -1);
    for (std::size_t s = 0; s < rank_chunks_.size(); ++s) {
      const std::int64_t chunk = rank_chunks_[s];
      CPLAB_CHECK(chunk >= 0 && chunk < chunks && chunk_slot_[chunk] < 0,
                  "magi row map: chunk {} assigned twice or out of range [0, {})", chunk, chunks);
      chunk_slot_[chunk] = static_cast<std::int64_t>(s);
    }
    kind_ = Kind::magi;
  } else {
    CPLAB_FAIL("no closed-form map for layout '{}'", layout);
  }
  bind();
}

RowMap RowMap::of(const ShardLayout& layout, std::size_t row) {
  CPLAB_CHECK(row < layout.index.size(), "row {} of a layout with {} rows", row,
              layout.index.size());
  std::vector<std::int64_t> bounds;
  if (row < layout.cu_seqlens_padded.size()) bounds = layout.cu_seqlens_padded[row];
  std::vector<std::int64_t> chunks;
  if (row < layout.magi_rank_chunks.size()) chunks = layout.magi_rank_chunks[row];
  return RowMap(layout.layout, layout.cp, layout.padded_len, std::move(bounds), std::move(chunks),
                layout.chunk_size);
}

RowMap::RowMap(const RowMap& other)
    : kind_(other.kind_),
      layout_(other.layout_),
      cp_(other.cp_),
      padded_len_(other.padded_len_),
      doc_bounds_(other.doc_bounds_),
      rank_chunks_(other.rank_chunks_),
      chunk_slot_(other.chunk_slot_),
      chunk_size_(other.chunk_size_) {
  bind();
}

void RowMap::bind() {
  contiguous_ = {cp_, padded_len_};
  head_tail_ = {cp_, padded_len_};
  thd_ = {cp_, doc_bounds_.data(), static_cast<std::int64_t>(doc_bounds_.size()) - 1};
  const std::int64_t per_rank = chunk_size_ > 0 ? padded_len_ / chunk_size_ / cp_ : 0;
  magi_ = {cp_, chunk_size_, per_rank, rank_chunks_.data(), chunk_slot_.data()};
}

std::int64_t RowMap::global_index(std::int64_t rank, std::int64_t k) const {
  CPLAB_CHECK(rank >= 0 && rank < cp_ && k >= 0 && k < local_len(),
              "global_index({}, {}) outside cp={} ranks of ℓ={} tokens", rank, k, cp_, local_len());
  switch (kind_) {
    case Kind::contiguous:
      return contiguous_.global_index(rank, k);
    case Kind::head_tail:
      return head_tail_.global_index(rank, k);
    case Kind::thd:
      return thd_.global_index(rank, k);
    case Kind::magi:
      return magi_.global_index(rank, k);
  }
  CPLAB_FAIL("unknown row map kind {}", static_cast<int>(kind_));
}

index_math::Slot RowMap::owner(std::int64_t g) const {
  CPLAB_CHECK(g >= 0 && g < padded_len_, "owner({}) outside the stream of L={}", g, padded_len_);
  switch (kind_) {
    case Kind::contiguous:
      return contiguous_.owner(g);
    case Kind::head_tail:
      return head_tail_.owner(g);
    case Kind::thd:
      return thd_.owner(g);
    case Kind::magi:
      return magi_.owner(g);
  }
  CPLAB_FAIL("unknown row map kind {}", static_cast<int>(kind_));
}

}  // namespace cplab::sim
