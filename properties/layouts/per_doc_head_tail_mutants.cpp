// Mutants of per-doc-head-tail (SPEC §10.1), each overriding one generic step of the partition.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

using Index = std::vector<std::int64_t>;

// torch's per-document head-tail before PR 189902: every document's per-rank chunks concatenated
// document-major (document i: rank 0's head and tail, rank 1's, ...), then the flattened stream
// cut into C contiguous pieces. Every token is still held once and every output is right, but the
// early documents land on the first ranks and the causal work piles up (SPEC §9.10: 25 / 21 on
// documents 8 and 4, 26 / 62 on 4 and 12, instead of equal work). The document bounds are the
// map's own table, so it reads no layout name.
class PerDocDocumentMajor final : public Mutant {
  using Mutant::Mutant;
  Index local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                    std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    const Index& bounds = map.params().table;
    if (cp == 1 || bounds.size() < 2) return Mutant::local_index(stream, map, rank);
    return document_major_piece(bounds, cp, rank);
  }
};

}  // namespace

std::vector<ImplementationInfo> per_doc_head_tail_mutants() {
  return {
      entry<PerDocDocumentMajor>(
          "per_doc_document_major",
          "per-document head-tail laid out document-major and cut into C contiguous pieces "
          "(torch PR 189902: outputs right, balance wrong)",
          {"per-doc-head-tail"}),
  };
}

}  // namespace cplab::properties::mutants
