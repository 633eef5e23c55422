#pragma once
// magi: fixed chunks of K tokens (the unit); rank r holds its assigned chunks in ascending order.
// The table is the rank-major assignment, rank_chunks[r · per_rank + i] = rank r's i-th chunk; the
// aux array chunk_slot[j] = r · per_rank + i inverts it (layouts/magi.cpp derives it once).
#include "layouts/index_math.hpp"

namespace cplab::index_math {

struct MagiMap {
  std::int64_t cp;
  std::int64_t chunk_size;
  std::int64_t per_rank;  // chunks per rank
  const std::int64_t* rank_chunks;
  const std::int64_t* chunk_slot;
  CPLAB_HD static MagiMap of(const MapView& v) {
    return {v.cp, v.unit, v.padded_len / (v.unit * v.cp), v.table, v.aux};
  }
  CPLAB_HD std::int64_t local_len() const { return per_rank * chunk_size; }
  CPLAB_HD std::int64_t global_index(std::int64_t r, std::int64_t k) const {
    return rank_chunks[r * per_rank + k / chunk_size] * chunk_size + k % chunk_size;
  }
  CPLAB_HD Slot owner(std::int64_t g) const {
    const std::int64_t slot = chunk_slot[g / chunk_size];
    return {slot / per_rank, (slot % per_rank) * chunk_size + g % chunk_size};
  }
};

}  // namespace cplab::index_math
