// Mutants of the varlen segments ranks attend through (SPEC §10.3), each a bug that has shipped in
// code preparing cu_seqlens for llama3-style context parallelism.
#include <algorithm>

#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// Causal cu_seqlens_k not extended to the rank's end: the last key segment (and the key slice) runs
// to the end of the rank's last document, as the non-causal branch of prepare_cu_seqlens has it.
// With a causal kernel aligning the diagonal bottom-right, that segment's queries then see keys of
// their future (SPEC §9.12: rank 2 gets cu_seqlens_k [0,6,13] and slice [7,20)).
class VarlenKeysNotExtended final : public Mutant {
  using Mutant::Mutant;
  VarlenSegments varlen_segments(const std::vector<std::int64_t>& doc_bounds,
                                 std::int64_t padded_len, std::int64_t cp,
                                 std::int64_t rank) const override {
    VarlenSegments s = Mutant::varlen_segments(doc_bounds, padded_len, cp, rank);
    std::vector<std::int64_t> cu = doc_bounds;
    if (cu.empty() || cu.back() < padded_len) cu.push_back(padded_len);
    const std::int64_t rank_end = (rank + 1) * (padded_len / cp);
    const std::int64_t doc_end = *std::lower_bound(cu.begin(), cu.end(), rank_end);
    s.cu_seqlens_k.back() = doc_end - s.k_begin;
    s.k_end = doc_end;
    return s;
  }
};

}  // namespace

std::vector<ImplementationInfo> llama3_varlen_mutants() {
  return {
      entry<VarlenKeysNotExtended>(
          "varlen_keys_not_extended",
          "llama3 varlen: causal cu_seqlens_k not extended to the rank's end (the last query "
          "document sees keys of its future)",
          {"llama3-varlen"}),
  };
}

}  // namespace cplab::properties::mutants
