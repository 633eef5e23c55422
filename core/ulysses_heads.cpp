#include "core/ulysses_heads.hpp"

#include "core/error.hpp"

namespace cplab {

void check_ulysses_heads(const UlyssesHeads& heads, std::int64_t group) {
  CPLAB_CHECK(group >= 1, "Ulysses all-to-all: a group of U = {} ranks", group);
  CPLAB_CHECK(heads.query >= 1 && heads.kv >= 1,
              "Ulysses all-to-all: H = {} query heads and H_kv = {} KV heads; both must be >= 1",
              heads.query, heads.kv);
  CPLAB_CHECK(heads.query % group == 0,
              "Ulysses all-to-all: H = {} query heads do not split over U = {} ranks (H % U must "
              "be 0)",
              heads.query, group);
  CPLAB_CHECK(heads.query % heads.kv == 0,
              "Ulysses all-to-all: H = {} query heads are not a multiple of H_kv = {} KV heads",
              heads.query, heads.kv);
  CPLAB_CHECK(heads.kv % group == 0 || (heads.kv < group && group % heads.kv == 0),
              "Ulysses all-to-all: H_kv = {} KV heads neither split over U = {} ranks nor repeat "
              "up to U (H_kv % U = 0, or H_kv < U with U % H_kv = 0)",
              heads.kv, group);
}

std::int64_t heads_per_rank(const UlyssesHeads& heads, HeadKind kind, std::int64_t group) {
  check_ulysses_heads(heads, group);
  const std::int64_t h = heads.of(kind);
  return h < group ? 1 : h / group;
}

}  // namespace cplab
