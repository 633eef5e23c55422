// Mutants of magi (SPEC §3.5, MagiAttention's dispatch): a bug of its greedy assignment,
// overriding one generic step.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

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

std::vector<ImplementationInfo> magi_mutants() {
  return {
      entry<MagiTiesReversed>("magi_ties_reversed",
                              "magi equal-area chunks ordered lower index first", {"magi"}),
  };
}

}  // namespace cplab::properties::mutants
