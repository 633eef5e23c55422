#include "layouts/layout_map.hpp"

#include "core/error.hpp"
#include "core/map_checks.hpp"

namespace cplab::sim {

LayoutMap::LayoutMap(const LayoutDescriptor& layout, std::int64_t cp, std::int64_t padded_len,
                     MapParams params)
    : layout_(&layout),
      form_(layout.map.form),
      cp_(cp),
      padded_len_(padded_len),
      params_(std::move(params)) {
  CPLAB_CHECK(cp >= 1 && padded_len >= 0 && padded_len % cp == 0,
              "{} map: L={} does not divide over cp={} ranks", layout.name, padded_len, cp);
  if (cp == 1) {  // every layout at C = 1 is the identity: the caller row as it is
    form_ = index_math::form_of<index_math::ContiguousMap>();
    params_ = {};
    return;
  }
  CPLAB_CHECK(form_ >= 0 && form_ < index_math::form_count(),
              "{} map: closed form {} is not registered ({} forms)", layout.name, form_,
              index_math::form_count());
  if (layout.map.prepare != nullptr) aux_ = layout.map.prepare(cp, padded_len, params_);
}

LayoutMap LayoutMap::of(const ShardLayout& layout, std::size_t row) {
  CPLAB_CHECK(row < layout.index.size(), "row {} of a layout with {} rows", row,
              layout.index.size());
  return LayoutMap(layout_descriptor(layout.layout), layout.cp, layout.padded_len,
                   row < layout.map.size() ? layout.map[row] : MapParams{});
}

index_math::MapView LayoutMap::view() const {
  return {.form = form_,
          .cp = cp_,
          .padded_len = padded_len_,
          .unit = params_.unit,
          .table = params_.table.data(),
          .table_len = static_cast<std::int64_t>(params_.table.size()),
          .aux = aux_.data(),
          .aux_len = static_cast<std::int64_t>(aux_.size())};
}

// The closed form is the implementation's: what it answers is checked before anyone indexes by it.
std::int64_t LayoutMap::global_index(std::int64_t rank, std::int64_t k) const {
  CPLAB_CHECK(rank >= 0 && rank < cp_ && k >= 0 && k < local_len(),
              "global_index({}, {}) outside cp={} ranks of ℓ={} tokens", rank, k, cp_, local_len());
  const std::int64_t g = visit([&](const auto& map) { return map.global_index(rank, k); });
  CPLAB_CHECK(g >= 0 && g < padded_len_,
              "{} closed form: global_index({}, {}) = {}, outside the stream [0, L={})",
              layout_->name, rank, k, g, padded_len_);
  return g;
}

index_math::Slot LayoutMap::owner(std::int64_t g) const {
  CPLAB_CHECK(g >= 0 && g < padded_len_, "owner({}) outside the stream of L={}", g, padded_len_);
  const index_math::Slot slot = visit([&](const auto& map) { return map.owner(g); });
  CPLAB_CHECK(slot.rank >= 0 && slot.rank < cp_ && slot.offset >= 0 && slot.offset < local_len(),
              "{} closed form: owner({}) = rank {} offset {}, outside cp={} ranks of ℓ={} tokens",
              layout_->name, g, slot.rank, slot.offset, cp_, local_len());
  return slot;
}

std::vector<std::int64_t> LayoutMap::local_index(std::int64_t rank) const {
  CPLAB_CHECK(rank >= 0 && rank < cp_, "rank {} out of range for cp={}", rank, cp_);
  std::vector<std::int64_t> index(static_cast<std::size_t>(local_len()));
  visit([&](const auto& map) {
    for (std::int64_t k = 0; k < local_len(); ++k) index[k] = map.global_index(rank, k);
  });
  const MapFault fault = find_map_fault(index, 0, padded_len_, true);
  CPLAB_CHECK(!fault, "{} closed form: rank {}'s index map: {}", layout_->name, rank,
              describe_map_fault(fault, 0, padded_len_));
  return index;
}

}  // namespace cplab::sim
