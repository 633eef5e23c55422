#pragma once
// The inverse of a magi chunk assignment, computed on the host once per row and uploaded next to
// the assignment, so that index_math::MagiMap::owner is one lookup on the device.
#include <cstdint>
#include <vector>

namespace cplab::gpu {

// rank_chunks is rank-major (rank r's chunks at [r·n/C, (r+1)·n/C)), as ShardLayout records it.
// Returns chunk_slot with chunk_slot[j] = the position of chunk j in rank_chunks. Throws unless
// rank_chunks is a permutation of [0, n) with n a positive multiple of cp.
std::vector<std::int64_t> magi_chunk_slots(const std::vector<std::int64_t>& rank_chunks,
                                           std::int64_t cp);

}  // namespace cplab::gpu
