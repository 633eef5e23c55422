#pragma once
// usp's options (layouts/usp.cpp).
#include "core/layout_option.hpp"

namespace cplab::layouts {

// R: the ring degree, U = C/R the Ulysses degree (R must divide C; 1: Ulysses only).
extern const LayoutOption usp_ring_degree;

}  // namespace cplab::layouts
