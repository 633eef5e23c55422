// Mutants of the Ulysses head all-to-all (SPEC §10.5): which heads each rank receives. Each is a
// head-split bug that has shipped in a Ulysses implementation.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// KV heads fewer than U are not repeated: H_kv/U = 0 heads each, ranks left with no KV head
// (LlamaFactory 10794).
class KvHeadsNotRepeated final : public Mutant {
  using Mutant::Mutant;
  std::vector<std::int64_t> ulysses_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                             std::int64_t group, std::int64_t u) const override {
    const std::int64_t h = heads.of(kind), per = h / group;
    std::vector<std::int64_t> out;
    for (std::int64_t i = u * per; i < (u + 1) * per; ++i) out.push_back(i);
    return out;
  }
};

// The KV split reads a global head count another layer overwrote (the query heads'): H/U heads
// each, cut off at H_kv, so the first ranks get them all and the last none, [4, 4, 4, 0]-style
// (DeepSpeed 8316).
class ClobberedKvHeadCount final : public Mutant {
  using Mutant::Mutant;
  std::vector<std::int64_t> ulysses_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                             std::int64_t group, std::int64_t u) const override {
    if (kind == HeadKind::query) return SimImplementation::ulysses_heads_of(heads, kind, group, u);
    const std::int64_t per = heads.query / group;
    std::vector<std::int64_t> out;
    for (std::int64_t i = u * per; i < (u + 1) * per && i < heads.kv; ++i) out.push_back(i);
    return out;
  }
};

// KV heads padded up to U on their own, with zero heads after the real ones, as the query heads
// are padded: rank u gets KV head u (or zeros), not the one its query heads use, so the GQA ratio
// breaks (vllm-omni 5716).
class KvPaddedIndependently final : public Mutant {
  using Mutant::Mutant;
  std::vector<std::int64_t> ulysses_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                             std::int64_t group, std::int64_t u) const override {
    if (kind == HeadKind::query || heads.kv >= group)
      return SimImplementation::ulysses_heads_of(heads, kind, group, u);
    return {u < heads.kv ? u : -1};
  }
};

}  // namespace

std::vector<ImplementationInfo> ulysses_mutants() {
  std::vector<ImplementationInfo> entries = {
      entry<KvHeadsNotRepeated>(
          "ulysses_kv_heads_not_repeated",
          "Ulysses all-to-all: KV heads fewer than U split H_kv/U = 0 ways, ranks left without "
          "a KV head (LlamaFactory 10794)"),
      entry<ClobberedKvHeadCount>(
          "ulysses_clobbered_kv_head_count",
          "Ulysses all-to-all: the KV split uses a clobbered global head count, a [4,4,4,0] "
          "split (DeepSpeed 8316)"),
      entry<KvPaddedIndependently>(
          "ulysses_kv_padded_independently",
          "Ulysses all-to-all: KV heads padded to U independently of Q, the GQA ratio breaks "
          "(vllm-omni 5716)"),
  };
  return checked_first_by("ulysses_all_to_all_splits_heads", std::move(entries));
}

}  // namespace cplab::properties::mutants
