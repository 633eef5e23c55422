// Mutants of head-tail (SPEC §3.3): bugs of its chunk map and of its zigzag ring, each
// overriding one generic step of the twin.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

using Index = std::vector<std::int64_t>;

// head-tail's tail chunk 2C - r instead of 2C - 1 - r (wrapped into range, as a modulo in the
// index arithmetic would): rank 0 holds chunk 0 twice and chunk 2C-1 is lost.
class TailChunkTwoCMinusR final : public Mutant {
  using Mutant::Mutant;
  Index local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                    std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1) return Mutant::local_index(stream, map, rank);
    const std::int64_t chunk = map.padded_len() / (2 * cp);
    Index index;
    for (std::int64_t k = 0; k < chunk; ++k) index.push_back(rank * chunk + k);
    const std::int64_t tail = (2 * cp - rank) % (2 * cp);
    for (std::int64_t k = 0; k < chunk; ++k) index.push_back(tail * chunk + k);
    return index;
  }
};

// Zigzag's two halves of a received K/V swapped: a block that reads keys in one half of the shard
// received from another rank reads the same positions of the other half (its front and back
// chunks confused).
class ZigzagHalvesSwapped final : public Mutant {
  using Mutant::Mutant;
  sim::LocalRange block_key_range(const sim::RankStep& step, const sim::ScheduleBlock& block,
                                  std::int64_t key_tokens) const override {
    const std::int64_t half = key_tokens / 2;
    sim::LocalRange k = block.k;
    // Only a shard received from another rank of the ring is in zigzag's two halves.
    if (step.kv_from < 0 || step.kv_from == step.rank || key_tokens % 2 != 0 || half == 0) return k;
    if (k.end <= half) return {k.begin + half, k.end + half};
    if (k.begin >= half) return {k.begin - half, k.end - half};
    return k;
  }
};

}  // namespace

std::vector<ImplementationInfo> head_tail_mutants() {
  std::vector<ImplementationInfo> out = {
      entry<TailChunkTwoCMinusR>("tail_chunk_2c_minus_r",
                                 "head-tail's tail chunk 2C - r instead of 2C - 1 - r",
                                 {"head-tail"}),
  };
  const std::vector<ImplementationInfo> ring =
      checked_first_by("cp_attention_matches_unsharded",
                       {entry<ZigzagHalvesSwapped>("attention_zigzag_halves_swapped",
                                                   "zigzag ring: the held K/V's two halves swapped",
                                                   {"head-tail"})});
  out.insert(out.end(), ring.begin(), ring.end());
  return out;
}

}  // namespace cplab::properties::mutants
