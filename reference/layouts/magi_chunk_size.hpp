#pragma once
// magi's chunk size for short rows: MagiAttention caps K at ceil(S / (8·C)), so that every rank
// still gets several chunks to balance (`--chunk-size auto`).
#include <cstdint>

namespace cplab::reference {

// min(cap, ceil(S / (8·C))), at least 1.
std::int64_t magi_auto_chunk_size(std::int64_t cap, std::int64_t seq_len, std::int64_t cp);

}  // namespace cplab::reference
