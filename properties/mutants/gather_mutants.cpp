// Mutants of the gathers and their backwards (SPEC §5).
#include <cstring>

#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// The all-gathered shards are returned in rank order, never put back at their global slots. Right
// for contiguous (rank order is the stream order there), wrong for every load-balanced layout.
class GatherWithoutReorder final : public Mutant {
  using Mutant::Mutant;
  Tensor reorder_to_global(const Tensor& rank_ordered, std::int64_t,
                           const std::vector<std::vector<std::int64_t>>&) const override {
    return rank_ordered;
  }
};

// gather_token_tensor's backward keeps this rank's own gradient of its tokens and drops what the
// other ranks computed for them (a missing reduce-scatter).
class TokenBackwardKeepsLocal final : public Mutant {
  using Mutant::Mutant;
  Tensor reduce_token_gradient(Comm& comm, const Tensor& blocks) const override {
    const std::int64_t count = blocks.size(1);
    Tensor mine(blocks.dtype(), {count});
    const std::size_t bytes = mine.nbytes();
    std::memcpy(mine.raw(), blocks.raw() + static_cast<std::size_t>(comm.rank()) * bytes, bytes);
    return mine;
  }
};

// gather_tokens' backward slices this rank's own gradient instead of summing every rank's slice
// (keys/values used by every rank's queries lose the other ranks' gradient).
class GatherTokensBackwardWithoutSum final : public Mutant {
  using Mutant::Mutant;
  Tensor reduce_gathered_gradient(Comm& comm, const Tensor& grad_gathered) const override {
    Shape shape = grad_gathered.shape();
    shape[0] /= comm.size();
    Tensor mine(grad_gathered.dtype(), shape);
    std::memcpy(mine.raw(),
                grad_gathered.raw() + static_cast<std::size_t>(comm.rank()) * mine.nbytes(),
                mine.nbytes());
    return mine;
  }
};

}  // namespace

std::vector<ImplementationInfo> gather_mutants() {
  std::vector<ImplementationInfo> forward = checked_first_by(
      "shard_then_gather_is_identity",
      {on_claiming_layouts<GatherWithoutReorder>(
          "gather_without_reorder", "gather_token_tensor concatenates in rank order, no reorder")});
  std::vector<ImplementationInfo> backward = checked_first_by(
      "gather_backward_sums_to_owner",
      {entry<TokenBackwardKeepsLocal>(
           "token_backward_keeps_local",
           "gather_token_tensor backward keeps only the local contribution (no reduce-scatter)"),
       entry<GatherTokensBackwardWithoutSum>(
           "gather_tokens_backward_without_sum",
           "gather_tokens backward takes the own slice without the sum over ranks")});
  forward.insert(forward.end(), backward.begin(), backward.end());
  return forward;
}

}  // namespace cplab::properties::mutants
