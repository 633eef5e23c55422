// The multi-token prediction loss (SPEC §6.1): the shifted loss check of property 5 at depths 2-4,
// each depth with its own logits, its own count N_k and its own scale C/N_k. Depth 1 is property 5
// itself; the combination λ/(D−1)·Σ L_k is arithmetic on these terms (reference::combine_depths).
#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// Depth 4 at C up to 64 puts targets on ranks two and three ahead of short chunks, and past the
// end of short documents.
constexpr std::int64_t kDeepest = 4;

std::string check_mtp_loss(const Case& c, Implementation& impl, CheckNotes& notes) {
  return check_loss_depths(c, impl, notes, 2, kDeepest);
}

}  // namespace

extern const PropertyInfo mtp_loss_property;
const PropertyInfo mtp_loss_property{
    .name = "mtp_rank_losses_average_to_global_depth_k_loss",
    .invariant =
        "at every depth k of 2-4, mean_r loss_r is the global mean CE of the labels k slots ahead "
        "in the same document, N_k is depth k's count, and each loss_r and its gradient are the "
        "rank's share (C × the global gradient on its tokens)",
    .check = check_mtp_loss,
    .coverage = {{"N_k>0", {}, Cross::cp}, {"N_k=0"}},
};

}  // namespace cplab::properties
