// Mutants of ptrr (SPEC §10.2), each overriding one generic step of the partition.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// The blocks priced under the plain causal mask over the whole padded stream while the model
// attends document-causally: the balancer is built from one mask and the model uses another
// (torchtitan 3368, a PTRR balancer fed a full causal BlockMask for a model whose layers mask
// otherwise). Every block then costs its index + 1, whatever the documents, so the assignment no
// longer follows the work.
class PtrrPlainCausalCosts final : public Mutant {
  using Mutant::Mutant;
  std::vector<sim::SlotSpan> balance_documents(const sim::RowStream& stream) const override {
    return {{0, stream.padded_len}};
  }
};

}  // namespace

std::vector<ImplementationInfo> ptrr_mutants() {
  return {
      entry<PtrrPlainCausalCosts>(
          "ptrr_plain_causal_costs",
          "PTRR block costs from the plain causal mask, the model document-causal (torchtitan "
          "3368)",
          {"ptrr"}),
  };
}

}  // namespace cplab::properties::mutants
