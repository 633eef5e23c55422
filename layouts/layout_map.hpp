#pragma once
// The one closed-form map of one row, for every layout: it owns the arrays its MapView points
// into, validates them once (through the layout's descriptor), and answers global_index(r, k) and
// owner(g) for every rank on the host. The twin, the properties and the GPU path (which uploads
// the same arrays and hands the view to its kernels) all use it.
#include <cstdint>
#include <vector>

#include "core/map_params.hpp"
#include "core/shard_layout.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {

class LayoutMap {
 public:
  // Every layout at C = 1 is the identity (SPEC §3); beyond it the layout's own form, from params.
  LayoutMap(const LayoutDescriptor& layout, std::int64_t cp, std::int64_t padded_len,
            MapParams params = {});
  // Row `row` of a recorded layout.
  static LayoutMap of(const ShardLayout& layout, std::size_t row);

  const LayoutDescriptor& layout() const { return *layout_; }
  std::int64_t cp() const { return cp_; }
  std::int64_t padded_len() const { return padded_len_; }
  std::int64_t local_len() const { return padded_len_ / cp_; }
  const MapParams& params() const { return params_; }
  const std::vector<std::int64_t>& aux() const { return aux_; }
  // The plain value over this object's arrays (valid while it lives and is not moved).
  index_math::MapView view() const;

  std::int64_t global_index(std::int64_t rank, std::int64_t k) const;  // checked
  index_math::Slot owner(std::int64_t g) const;                        // checked
  std::vector<std::int64_t> local_index(std::int64_t rank) const;      // rank's index map
  // f(map) with the index_math map of this row's form.
  template <typename F>
  decltype(auto) visit(F&& f) const {
    return index_math::visit_form(view(), std::forward<F>(f));
  }

 private:
  const LayoutDescriptor* layout_;
  int form_;
  std::int64_t cp_;
  std::int64_t padded_len_;
  MapParams params_;
  std::vector<std::int64_t> aux_;
};

}  // namespace cplab::sim
