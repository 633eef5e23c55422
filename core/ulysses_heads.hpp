#pragma once
// The attention heads a Ulysses group splits (SPEC §10.5): H query heads and H_kv key/value heads
// over U ranks. Rank u gets query heads [u·H/U, (u+1)·H/U). KV heads fewer than U are repeated up
// to U, each U/H_kv times (as DeepSpeed-Ulysses and yunchang do), so every rank holds the KV head
// its query heads use; otherwise rank u gets KV heads [u·H_kv/U, (u+1)·H_kv/U).
#include <cstdint>

namespace cplab {

enum class HeadKind : std::uint8_t { query, kv };

struct UlyssesHeads {
  std::int64_t query = 0;  // H
  std::int64_t kv = 0;     // H_kv
  std::int64_t of(HeadKind kind) const { return kind == HeadKind::query ? query : kv; }
};

// Throws a one-line error naming H, H_kv and U unless: H > 0, H_kv > 0, H % U = 0, H % H_kv = 0
// (GQA), and H_kv % U = 0 or (H_kv < U and U % H_kv = 0).
void check_ulysses_heads(const UlyssesHeads& heads, std::int64_t group);

// How many heads of `kind` every rank holds after the all-to-all: H/U, or H_kv/U (1 when the KV
// heads are repeated up to U).
std::int64_t heads_per_rank(const UlyssesHeads& heads, HeadKind kind, std::int64_t group);

}  // namespace cplab
