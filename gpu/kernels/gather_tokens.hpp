#pragma once
// Trim of a gather: the all-gathered caller positions of every rank's tokens (rank order) turned
// into, per caller position, which gathered token holds it. copy_tokens then reads the gathered
// shards straight into caller coordinates. (The untrimmed gather reads through owner_map.)
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

// positions: device [rows][n] (caller position of gathered token j, -1 = a pad slot);
// inverse: device [rows][m], set to j for the token holding caller position c, -1 where none does.
// A position outside [-1, m) or held twice lowers `bad` (ErrorSlot) to row·n + j.
void invert_positions(const std::int64_t* positions, std::int64_t rows, std::int64_t n,
                      std::int64_t* inverse, std::int64_t m, std::int64_t* bad, Stream stream);

}  // namespace cplab::gpu
