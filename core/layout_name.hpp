#pragma once
// A layout's user name (`--layout head-tail`, case lines, reports, Python's layout=) is its
// identifier in the one list of layouts (core/layouts.def), the stem of its own files, with '-'
// for '_': head_tail is "head-tail". No registry spells a name of its own, and a layout's files are
// found by its user name with '.' for '-': `git ls-files | grep -i 'head.tail'`.
#include <cstddef>

namespace cplab {

template <std::size_t N>
struct LayoutNameText {
  char text[N] = {};
  // NOLINTNEXTLINE(google-explicit-constructor): made from the identifier's string literal
  constexpr LayoutNameText(const char (&id)[N]) {
    for (std::size_t i = 0; i < N; ++i) text[i] = id[i] == '_' ? '-' : id[i];
  }
};

template <LayoutNameText Name>
inline constexpr const char* layout_name_of = Name.text;

}  // namespace cplab

// CPLAB_LAYOUT_NAME(head_tail) is "head-tail": a constant with static storage, made at compile
// time.
#define CPLAB_LAYOUT_NAME(id) (::cplab::layout_name_of<::cplab::LayoutNameText(#id)>)
