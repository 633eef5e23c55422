#pragma once
// One recorded microbatch layout on the device: the closed-form map of its layout (the one
// sim::LayoutMap, its arrays uploaded, its view handed to the kernels; the same view over host
// arrays for host planning) and this rank's index map computed by the device from that map,
// checked against what the partition recorded: two derivations that must agree.
#include <cstdint>
#include <vector>

#include "core/shard_layout.hpp"
#include "gpu/device.hpp"
#include "gpu/kernels/layout_map.hpp"
#include "layouts/layout_map.hpp"

namespace cplab::gpu {

class DeviceLayout {
 public:
  // Every row of the layout must share one map (BSHD rows do; packed microbatches have one row).
  // doc_lens (a packed row whose layout re-lays its documents, C > 1, when the batch is at hand):
  // the documents' real lengths, so the device partition's positions, document ids and real flags
  // are checked too.
  DeviceLayout(const ShardLayout& layout, std::int64_t rank, Stream stream,
               const std::vector<std::int64_t>* doc_lens = nullptr);

  const MapView& device_map() const { return device_; }
  const MapView& host_map() const { return host_; }
  const std::int64_t* index() const { return index_.as<std::int64_t>(); }  // device [ℓ]
  std::int64_t local_len() const { return device_.local_len(); }

 private:
  sim::LayoutMap map_;
  DeviceBuffer d_table_, d_aux_, index_;
  MapView host_, device_;
};

}  // namespace cplab::gpu
