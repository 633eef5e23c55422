#pragma once
// magi's options (layouts/magi.cpp).
#include <cstdint>

#include "core/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutOption magi_chunk_size;  // K: the stream is padded to a multiple of K·C
// At C = 1, pad to a multiple of K as MagiAttention's own dispatch does ("identity + chunk
// padding"), instead of the identity every layout falls back to.
extern const LayoutOption magi_chunk_pad_at_cp1;

// MagiAttention caps K for short rows at ceil(S / (8·C)), so that every rank still gets several
// chunks to balance: min(cap, ceil(S / (8·C))), at least 1 (`--chunk-size auto`, `K=auto`).
std::int64_t magi_auto_chunk_size(std::int64_t cap, std::int64_t seq_len, std::int64_t cp);

}  // namespace cplab::layouts
