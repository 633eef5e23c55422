// Mutants of usp (SPEC §10.4), each a shipped way of getting the two levels of unified sequence
// parallelism wrong: every token is still held exactly once, but not by the rank that should.
#include "layouts/usp_map.hpp"
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

using Index = std::vector<std::int64_t>;

bool is_usp_map(const sim::LayoutMap& map) {
  return map.cp() > 1 && map.layout().map.form == index_math::form_of<index_math::UspMap>();
}

// The process groups built in the other order (yunchang's use_ulysses_low = False, ring groups of
// consecutive ranks) while the data is laid out for the default order: global rank r is taken as
// ring rank r mod R and Ulysses rank ⌊r/R⌋, i.e. the rank of (q, u) is u·R + q instead of q·U + u.
// Identical at R = 1 and R = C; two levels give ranks each other's parts.
class UspRanksUlyssesMajor final : public Mutant {
  using Mutant::Mutant;
  Index local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                    std::int64_t rank) const override {
    if (!is_usp_map(map)) return Mutant::local_index(stream, map, rank);
    const auto usp = index_math::UspMap::of(map.view());
    const std::int64_t ring_rank = rank % usp.ring, ulysses_rank = rank / usp.ring;
    const std::int64_t holds = ring_rank * usp.ulysses() + ulysses_rank;
    Index index;
    for (std::int64_t k = 0; k < usp.local_len(); ++k) index.push_back(usp.global_index(holds, k));
    return index;
  }
};

// The Ulysses split taken before the head-tail split: the stream cut into U contiguous parts for
// the Ulysses ranks first, then head-tail over 2R chunks of each part for the ring ranks. A
// permutation too, equal to usp at R = 1 (one chunk pair) and U = 1, wrong in between.
class UspUlyssesSplitFirst final : public Mutant {
  using Mutant::Mutant;
  Index local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                    std::int64_t rank) const override {
    if (!is_usp_map(map)) return Mutant::local_index(stream, map, rank);
    const auto usp = index_math::UspMap::of(map.view());
    const std::int64_t ring = usp.ring, ulysses = usp.ulysses();
    const std::int64_t q = rank / ulysses, u = rank % ulysses;
    const std::int64_t part = usp.padded_len / ulysses, chunk = part / (2 * ring);
    Index index;
    for (std::int64_t k = 0; k < chunk; ++k) index.push_back(u * part + q * chunk + k);
    for (std::int64_t k = 0; k < chunk; ++k)
      index.push_back(u * part + (2 * ring - 1 - q) * chunk + k);
    return index;
  }
};

}  // namespace

std::vector<ImplementationInfo> usp_mutants() {
  return {
      entry<UspRanksUlyssesMajor>(
          "usp_ranks_ulysses_major",
          "usp global rank formed as ulysses_rank·R + ring_rank (process groups built in the "
          "other order, yunchang use_ulysses_low=False)",
          {"usp"}),
      entry<UspUlyssesSplitFirst>(
          "usp_ulysses_split_first",
          "usp Ulysses split taken before the zigzag split (each Ulysses part cut head and tail)",
          {"usp"}),
  };
}

}  // namespace cplab::properties::mutants
