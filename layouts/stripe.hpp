#pragma once
// stripe's options (layouts/stripe.cpp).
#include "core/layout_option.hpp"

namespace cplab::layouts {

// g: the stream is dealt round robin in stripes of g consecutive tokens (g = 1: token by token,
// striped attention's own form; g > 1: the stripes that block-kernel ports of it deal out).
extern const LayoutOption stripe_granularity;

}  // namespace cplab::layouts
