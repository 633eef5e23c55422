#pragma once
// contiguous's options (layouts/contiguous.cpp).
#include "core/layout_option.hpp"

namespace cplab::layouts {

extern const LayoutOption contiguous_pad_multiple;  // m: the row is padded to D = C·m

}  // namespace cplab::layouts
