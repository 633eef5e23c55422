#pragma once
// ptrr's options (layouts/ptrr.cpp).
#include "core/layout_option.hpp"

namespace cplab::layouts {

// B: the stream is cut into blocks of B tokens, balanced by their processing time; torch's
// flex_attention BlockMask default, 128.
extern const LayoutOption ptrr_block_size;

}  // namespace cplab::layouts
