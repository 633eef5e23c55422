#pragma once
// The closed-form map a launcher takes: the MapView of layouts/layout_map.hpp (which owns,
// validates and derives its arrays) over device memory, so a launcher takes one argument and
// dispatches once to a kernel templated on the map type. Host planning uses the same view over host
// arrays.
#include <cstdint>

#include "gpu/kernels/launch_check.hpp"
#include "layouts/closed_forms.hpp"

namespace cplab::gpu {

using index_math::MapView;

// Checks what can be checked without reading the arrays; `what` names the caller in the message.
inline void validate_map(const MapView& m, const char* what) {
  CPLAB_LAUNCH_CHECK(m.cp >= 1 && m.padded_len >= 0 && m.padded_len % m.cp == 0, what,
                     ": padded length L=", m.padded_len, " does not split over cp=", m.cp,
                     " ranks");
  CPLAB_LAUNCH_CHECK(m.form >= 0 && m.form < index_math::form_count(), what, ": map form ", m.form,
                     " is not one of the ", index_math::form_count(), " registered");
  CPLAB_LAUNCH_CHECK(
      (m.table_len == 0 || m.table != nullptr) && (m.aux_len == 0 || m.aux != nullptr), what,
      ": map arrays missing (", m.table_len, " table and ", m.aux_len, " derived entries)");
}

// f(map) with the index_math map of the view's form: the one dispatch on maps.
template <typename F>
decltype(auto) visit_map(const MapView& m, F&& f) {
  return index_math::visit_form(m, static_cast<F&&>(f));
}

}  // namespace cplab::gpu
