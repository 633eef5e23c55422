#pragma once
// Every layout's index maps on the device, computed per token from the closed forms of
// layouts/index_math.hpp (the functions the CPU tests run). magi's come from the host-computed
// chunk assignment and its inverse; thd's from cu_seqlens_padded by binary search.
#include <cstdint>

#include "gpu/device.hpp"
#include "gpu/kernels/layout_map.hpp"

namespace cplab::gpu {

// out[(r - first_rank)·ℓ + k] = global slot of local token k of rank r, r in [first_rank, +ranks).
void index_map(const MapView& map, std::int64_t first_rank, std::int64_t ranks, std::int64_t* out,
               Stream stream);
// The inverse permutation: out[g] = r·ℓ + k where (r, k) = owner(g), g in [0, L); that is g's
// position in the all-gather of the C local shards.
void owner_map(const MapView& map, std::int64_t* out, Stream stream);

}  // namespace cplab::gpu
