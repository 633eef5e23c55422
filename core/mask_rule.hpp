#pragma once
// The part of an attention mask kernels read (SPEC §13.5; core/attention_mask.hpp has the mask as
// data): each token's facts and the one predicate, host and device, in C++17 for nvcc.
#include <cstdint>

#include "core/host_device.hpp"

namespace cplab::sim {

enum class MaskFamily : std::int32_t { causal = 0, window = 1, chunked = 2, bidirectional = 3 };

// What the predicate reads of one token, per global slot of the padded stream. Trivial (no member
// initialisers), so that kernels can stage it in shared memory; value-initialise it ({}) on hosts.
struct TokenFacts {
  std::int64_t slot;  // global slot
  std::int64_t pos;   // position in its document (real tokens only)
  std::int32_t doc;   // document id, 0 = row padding
  std::int32_t span;  // 1-based bidirectional span holding the token, 0 = none
  std::uint8_t real;  // a real token (not document or row padding)
};

// The mask as kernels take it, by value: its family and size (W or K; 0 for the others).
struct MaskRule {
  MaskFamily family = MaskFamily::causal;
  std::int64_t size = 0;
};

CPLAB_HD constexpr bool mask_visible(const MaskRule& m, const TokenFacts& q, const TokenFacts& k) {
  if (q.real == 0 || k.real == 0 || q.doc != k.doc) return false;
  if (m.family == MaskFamily::bidirectional && q.span != 0 && q.span == k.span) return true;
  if (k.pos > q.pos) return false;
  switch (m.family) {
    case MaskFamily::window:
      return q.pos - k.pos < m.size;
    case MaskFamily::chunked:
      return q.pos / m.size == k.pos / m.size;
    default:
      return true;
  }
}

}  // namespace cplab::sim
