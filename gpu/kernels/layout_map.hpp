#pragma once
// One plain descriptor for the closed-form map of any layout (sim/index_math.hpp), so a launcher
// takes one argument and dispatches once to a kernel templated on the map type. Its pointers are
// device memory when handed to a launcher, host memory when the host plans with the same maps.
#include <cstdint>

#include "gpu/kernels/launch_check.hpp"
#include "sim/index_math.hpp"

namespace cplab::gpu {

// identity is contiguous with C = 1; BSHD and packed rows share the maps except thd.
enum class MapKind : std::uint8_t { contiguous, head_tail, thd, magi };

struct LayoutMapDesc {
  MapKind kind = MapKind::contiguous;
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;  // L
  // thd: [0, cumsum(P_i)] with every P_i a multiple of 2C; n_docs + 1 entries.
  const std::int64_t* cu_padded = nullptr;
  std::int64_t n_docs = 0;
  // magi: rank-major chunk assignment and its inverse (gpu/host/magi_slots.hpp), L / K entries
  // each.
  std::int64_t chunk_size = 0;
  const std::int64_t* rank_chunks = nullptr;
  const std::int64_t* chunk_slot = nullptr;

  std::int64_t local_len() const { return padded_len / cp; }
};

// Checks what can be checked without reading the arrays; `what` names the caller in the message.
inline void validate_map(const LayoutMapDesc& m, const char* what) {
  CPLAB_LAUNCH_CHECK(m.cp >= 1 && m.padded_len >= 0 && m.padded_len % m.cp == 0, what,
                     ": padded length L=", m.padded_len, " does not split over cp=", m.cp,
                     " ranks");
  switch (m.kind) {
    case MapKind::contiguous:
      return;
    case MapKind::head_tail:
      CPLAB_LAUNCH_CHECK(m.padded_len % (2 * m.cp) == 0, what, ": head-tail needs L=", m.padded_len,
                         " to be a multiple of 2C=", 2 * m.cp);
      return;
    case MapKind::thd:
      CPLAB_LAUNCH_CHECK(m.cu_padded != nullptr && m.n_docs >= 1, what,
                         ": thd needs cu_seqlens_padded of at least one "
                         "document, got ",
                         m.n_docs);
      return;
    case MapKind::magi:
      CPLAB_LAUNCH_CHECK(m.chunk_size >= 1 && m.padded_len % (m.chunk_size * m.cp) == 0 &&
                             m.rank_chunks != nullptr && m.chunk_slot != nullptr,
                         what, ": magi needs L=", m.padded_len,
                         " to be a multiple of K·C=", m.chunk_size, "·", m.cp,
                         " and both chunk arrays");
      return;
  }
  CPLAB_LAUNCH_CHECK(false, what, ": unknown map kind ", static_cast<int>(m.kind));
}

// f(map) with the index_math map of the descriptor's kind: the one place that switches on layouts.
template <typename F>
decltype(auto) visit_map(const LayoutMapDesc& m, F&& f) {
  namespace im = index_math;
  switch (m.kind) {
    case MapKind::head_tail:
      return f(im::HeadTailMap{m.cp, m.padded_len});
    case MapKind::thd:
      return f(im::ThdMap{m.cp, m.cu_padded, m.n_docs});
    case MapKind::magi:
      return f(im::MagiMap{m.cp, m.chunk_size, m.padded_len / (m.chunk_size * m.cp), m.rank_chunks,
                           m.chunk_slot});
    case MapKind::contiguous:
      break;
  }
  return f(im::ContiguousMap{m.cp, m.padded_len});
}

}  // namespace cplab::gpu
