// Mutants of thd (SPEC §3.4, TransformerEngine's per-document head-tail): bugs of its document
// re-laying, its chunk order and its local cu_seqlens, each overriding one generic step.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

using Index = std::vector<std::int64_t>;

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
    return document_major_piece(stream.doc_bounds, cp, rank);
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

}  // namespace

std::vector<ImplementationInfo> thd_mutants() {
  return {
      entry<ThdDocumentMajor>("thd_document_major",
                              "THD chunks laid out document-major (load-balance bug only)",
                              {"thd"}),
      entry<ThdUnpaddedCuSeqlens>("thd_unpadded_cu_seqlens",
                                  "THD local cu_seqlens from the unpadded cu_seqlens", {"thd"}),
      entry<ThdLengthRoundedDown>(
          "thd_length_rounded_down",
          "THD document length rounded down to a multiple of 2C (last tokens lost)", {"thd"}),
  };
}

}  // namespace cplab::properties::mutants
