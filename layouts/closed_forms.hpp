#pragma once
// The registry of closed-form maps (host and device): one include and one list entry per map
// type. MapView::form is a position in ClosedForms; visit_form calls f with the map of that form,
// which is how every kernel launcher and the host dispatch once on a map.
#include <type_traits>
#include <utility>

#include "layouts/contiguous_map.hpp"
#include "layouts/head_tail_map.hpp"
#include "layouts/index_math.hpp"
#include "layouts/magi_map.hpp"
#include "layouts/stripe_map.hpp"
#include "layouts/thd_map.hpp"
#include "layouts/usp_map.hpp"

namespace cplab::index_math {

template <typename... Maps>
struct FormList {
  static constexpr int size = static_cast<int>(sizeof...(Maps));
};

// One line per map type (kept one a line so adding a layout adds one line).
// clang-format off
using ClosedForms = FormList<
    ContiguousMap,
    HeadTailMap,
    MagiMap,
    StripeMap,
    ThdMap,
    UspMap>;
// clang-format on

namespace detail {

template <typename Map, typename First, typename... Rest>
constexpr int index_in(FormList<First, Rest...>) {
  if constexpr (std::is_same_v<Map, First>) {
    return 0;
  } else {
    static_assert(sizeof...(Rest) > 0, "map type missing from ClosedForms");
    return 1 + index_in<Map>(FormList<Rest...>{});
  }
}

template <typename F, typename First, typename... Rest>
decltype(auto) visit_in(FormList<First, Rest...>, int i, const MapView& v, F&& f) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(First::of(v));
  } else {
    if (i <= 0) return f(First::of(v));
    return visit_in(FormList<Rest...>{}, i - 1, v, std::forward<F>(f));
  }
}

}  // namespace detail

// The form number of map type Map (a compile error when Map is not registered).
template <typename Map>
constexpr int form_of() {
  return detail::index_in<Map>(ClosedForms{});
}

constexpr int form_count() { return ClosedForms::size; }

// f(Map::of(v)) for the map type v.form names. Callers validate v first (layouts/layout_map.hpp,
// gpu/kernels/layout_map.hpp); every f must return the same type for every map.
template <typename F>
decltype(auto) visit_form(const MapView& v, F&& f) {
  return detail::visit_in(ClosedForms{}, v.form, v, std::forward<F>(f));
}

}  // namespace cplab::index_math
