// Mutants of the partition (SPEC §3), each overriding one generic step (the map, the pads, the
// greedy order, the local documents) with a bug that has shipped for one layout; the registry
// entry names the layouts it is meant for.
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

// THD laid out document-major: the per-document chunk lists concatenated document by document
// (document i: rank 0's two chunks, rank 1's two, ...) and the flattened stream cut into C equal
// contiguous pieces. Every token is still held once (a permutation), but causal work piles up on
// the last ranks (SPEC §9 ex. 4: 26 / 62 instead of 44 / 44).
class ThdDocumentMajor final : public Mutant {
  using Mutant::Mutant;
  Index local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                    std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1 || !stream.relaid) return Mutant::local_index(stream, map, rank);
    const std::vector<std::int64_t>& doc_bounds = stream.doc_bounds;
    Index flat;
    for (std::size_t i = 0; i + 1 < doc_bounds.size(); ++i) {
      const std::int64_t start = doc_bounds[i], chunk = (doc_bounds[i + 1] - start) / (2 * cp);
      for (std::int64_t p = 0; p < cp; ++p) {
        for (std::int64_t k = 0; k < chunk; ++k) flat.push_back(start + p * chunk + k);
        for (std::int64_t k = 0; k < chunk; ++k)
          flat.push_back(start + (2 * cp - 1 - p) * chunk + k);
      }
    }
    const std::int64_t local = static_cast<std::int64_t>(flat.size()) / cp;
    return Index(flat.begin() + rank * local, flat.begin() + (rank + 1) * local);
  }
};

// Local cu_seqlens from the unpadded cu_seqlens (real tokens) instead of cu_seqlens_padded.
class ThdUnpaddedCuSeqlens final : public Mutant {
  using Mutant::Mutant;
  Index local_cu_seqlens(const std::vector<std::int64_t>&, const std::vector<std::int64_t>& cu_real,
                         std::int64_t cp) const override {
    Index local;
    for (std::int64_t bound : cu_real) local.push_back(bound / cp);
    return local;
  }
};

// A document's length rounded down to a multiple of 2C instead of up: its last tokens are lost.
class ThdLengthRoundedDown final : public Mutant {
  using Mutant::Mutant;
  std::int64_t document_slots(std::int64_t seq_len, std::int64_t unit) const override {
    return seq_len - seq_len % unit;
  }
};

// magi's equal-area chunks taken lower index first (the heap's comparison the other way round).
// Balance is just as good; the assignment differs from the specified one.
class MagiTiesReversed final : public Mutant {
  using Mutant::Mutant;
  bool balance_precedes(std::int64_t area_a, std::int64_t a, std::int64_t area_b,
                        std::int64_t b) const override {
    return area_a != area_b ? area_a > area_b : a < b;
  }
};

}  // namespace

std::vector<ImplementationInfo> partition_mutants() {
  return {
      on_claiming_layouts<TailChunkTwoCMinusR>(
          "tail_chunk_2c_minus_r", "head-tail's tail chunk 2C - r instead of 2C - 1 - r"),
      on_claiming_layouts<ThdDocumentMajor>(
          "thd_document_major", "THD chunks laid out document-major (load-balance bug only)"),
      on_claiming_layouts<ThdUnpaddedCuSeqlens>(
          "thd_unpadded_cu_seqlens", "THD local cu_seqlens from the unpadded cu_seqlens"),
      on_claiming_layouts<ThdLengthRoundedDown>(
          "thd_length_rounded_down",
          "THD document length rounded down to a multiple of 2C (last tokens lost)"),
      on_claiming_layouts<MagiTiesReversed>("magi_ties_reversed",
                                            "magi equal-area chunks ordered lower index first"),
  };
}

}  // namespace cplab::properties::mutants
