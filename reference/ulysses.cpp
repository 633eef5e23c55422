// The Ulysses head all-to-all by construction: repeat, then split (SPEC §10.5).
#include "reference/ulysses.hpp"

#include <cstring>

#include "core/error.hpp"

namespace cplab::reference {

namespace {

// The heads of `kind` as the split sees them: each KV head repeated U/H_kv times when H_kv < U
// (repeat_interleave on the head dim), else every head once.
std::vector<std::int64_t> repeated_heads(const UlyssesHeads& heads, HeadKind kind,
                                         std::int64_t group) {
  check_ulysses_heads(heads, group);
  const std::int64_t h = heads.of(kind);
  const std::int64_t copies = h < group ? group / h : 1;
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < h; ++i) out.insert(out.end(), static_cast<std::size_t>(copies), i);
  return out;
}

void check_heads_tensor(const Tensor& t, const char* what) {
  CPLAB_CHECK(t.dim() == 4, "{}: {} is not [B, L, H, d]", what, tensor_brief(t));
}

}  // namespace

std::vector<std::int64_t> ulysses_head_group(const UlyssesHeads& heads, HeadKind kind,
                                             std::int64_t group, std::int64_t u) {
  CPLAB_CHECK(u >= 0 && u < group, "Ulysses rank {} of a group of {}", u, group);
  const std::vector<std::int64_t> all = repeated_heads(heads, kind, group);
  const auto per = static_cast<std::int64_t>(all.size()) / group;
  return {all.begin() + u * per, all.begin() + (u + 1) * per};
}

Tensor ulysses_head_split(const Tensor& global, const UlyssesHeads& heads, HeadKind kind,
                          std::int64_t group, std::int64_t u) {
  check_heads_tensor(global, "ulysses_head_split");
  CPLAB_CHECK(global.size(2) == heads.of(kind), "ulysses_head_split: {} has {} heads, expected {}",
              tensor_brief(global), global.size(2), heads.of(kind));
  const std::vector<std::int64_t> mine = ulysses_head_group(heads, kind, group, u);
  const std::int64_t tokens = global.size(0) * global.size(1), h = global.size(2);
  const std::size_t head_bytes =
      static_cast<std::size_t>(global.size(3)) * dtype_size(global.dtype());
  Tensor out(global.dtype(), {global.size(0), global.size(1),
                              static_cast<std::int64_t>(mine.size()), global.size(3)});
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < mine.size(); ++j) {
      std::memcpy(out.raw() + (static_cast<std::size_t>(t) * mine.size() + j) * head_bytes,
                  global.raw() + static_cast<std::size_t>(t * h + mine[j]) * head_bytes,
                  head_bytes);
    }
  }
  return out;
}

Tensor head_slice(const Tensor& t, std::int64_t h) {
  check_heads_tensor(t, "head_slice");
  Tensor out(t.dtype(), {t.size(0), t.size(1), t.size(3)});
  const std::int64_t tokens = t.size(0) * t.size(1), d = t.size(3);
  for (std::int64_t i = 0; i < tokens; ++i) {
    for (std::int64_t e = 0; e < d; ++e) out.set(i * d + e, t.get((i * t.size(2) + h) * d + e));
  }
  return out;
}

void set_head(Tensor& t, std::int64_t h, const Tensor& slice) {
  check_heads_tensor(t, "set_head");
  const std::int64_t tokens = t.size(0) * t.size(1), d = t.size(3);
  CPLAB_CHECK(slice.numel() == tokens * d, "set_head: {} into {}", tensor_brief(slice),
              tensor_brief(t));
  for (std::int64_t i = 0; i < tokens; ++i) {
    for (std::int64_t e = 0; e < d; ++e) t.set((i * t.size(2) + h) * d + e, slice.get(i * d + e));
  }
}

}  // namespace cplab::reference
