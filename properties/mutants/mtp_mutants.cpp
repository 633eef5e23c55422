// Mutants of the multi-token prediction loss (SPEC §6.1): each is right at depth 1, where the
// next-token loss has always been checked, and wrong at depth k ≥ 2 only, the way an MTP head
// bolted onto a CP-correct next-token loss goes wrong. Each has shipped, or is what a single-GPU
// `roll` becomes under CP.
#include <cstring>

#include "core/token_moves.hpp"
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

using Targets = std::vector<std::vector<sim::Target>>;

// torch.roll(labels, -k) over the row: the last k slots take the row's first k labels (wrapping
// around) instead of none.
class MtpRollWrapsAround final : public Mutant {
  using Mutant::Mutant;
  std::int64_t target_slot(std::int64_t g, std::int64_t depth, std::int64_t len) const override {
    return depth == 1 ? SimImplementation::target_slot(g, depth, len) : (g + depth % len) % len;
  }
};

// The depth-k targets taken from the packed row without the document mask: a document's last
// k - 1 tokens predict the next document's first tokens.
class MtpShiftCrossesDocuments final : public Mutant {
  using Mutant::Mutant;
  bool crosses_document(const ShardLayout& layout, std::int32_t doc, std::int32_t target_doc,
                        std::int64_t depth) const override {
    return depth == 1 && SimImplementation::crosses_document(layout, doc, target_doc, depth);
  }
};

// The MTP labels rolled on the local shard after the split (a single-GPU roll run under CP): the
// targets of every chunk's last k tokens are wrong or missing.
class MtpShiftedLocally final : public Mutant {
  using Mutant::Mutant;
  Targets resolve_targets(Comm& comm, const ShardLayout& layout, const Tensor& labels,
                          std::int64_t depth) const override {
    return depth == 1 ? SimImplementation::resolve_targets(comm, layout, labels, depth)
                      : shifted_locally(layout, labels, depth);
  }
};

// Depth k's CE sum divided by depth 1's count N₁ instead of its own N_k (fewer tokens have a
// target k ahead, so the MTP terms come out too small).
class MtpNormalisedByDepthOneCount final : public Mutant {
  using Mutant::Mutant;
  LossOutput do_shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                                const Tensor& labels, const Tensor& valid,
                                std::int64_t depth) override {
    LossOutput out =
        SimImplementation::do_shifted_cp_loss(comm, layout, logits, labels, valid, depth);
    if (depth == 1) return out;
    const std::int64_t first =
        SimImplementation::do_shifted_cp_loss(comm, layout, logits, labels, valid, 1)
            .contributing_total;
    const double factor =
        first > 0 ? static_cast<double>(out.contributing_total) / static_cast<double>(first) : 0.0;
    out.loss *= factor;
    for (float& x : out.grad.data<float>()) x = static_cast<float>(x * factor);
    return out;
  }
};

// The exchange asks only the next rank (r + 1) for targets: right while every target lives on this
// rank or the next, wrong once a depth reaches past the next rank's chunk (chunks shorter than k,
// at large C) and the label comes from rank r + 1's slot at the same offset.
class MtpTargetsFromNextRankOnly final : public Mutant {
  using Mutant::Mutant;
  index_math::Slot target_owner(const sim::LayoutMap& map, std::int64_t slot, std::int64_t asking,
                                std::int64_t depth) const override {
    const index_math::Slot owner = map.owner(slot);
    if (depth == 1 || owner.rank <= asking + 1) return owner;
    return {asking + 1, owner.offset};
  }
};

// The depth-k inputs (input_ids, position_ids) rolled on the local shard, as a single-GPU
// roll_tensor does at every depth past the first: every chunk's last k tokens take the next local
// tokens, the shard's last k wrap around to its first.
class MtpInputsRolledLocally final : public Mutant {
  using Mutant::Mutant;
  Tensor do_shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               std::int64_t seq_dim, std::int64_t depth, double fill) override {
    if (depth == 1)
      return SimImplementation::do_shift_token_tensor(comm, layout, local, seq_dim, 1, fill);
    const TokenAxes axes = token_axes(local, seq_dim, "shift_token_tensor");
    Tensor out(local.dtype(), local.shape(), Uninitialized{});
    const std::size_t token = axes.token_bytes();
    for (std::int64_t o = 0; o < axes.outer; ++o) {
      for (std::int64_t b = 0; b < layout.rows; ++b) {
        for (std::int64_t k = 0; k < axes.seq; ++k) {
          std::memcpy(out.raw() + axes.token(o, b, k) * token,
                      local.raw() + axes.token(o, b, (k + depth % axes.seq) % axes.seq) * token,
                      token);
        }
      }
    }
    return out;
  }
};

}  // namespace

std::vector<ImplementationInfo> mtp_mutants() {
  std::vector<ImplementationInfo> entries = {
      entry<MtpRollWrapsAround>(
          "mtp_roll_wraps_around",
          "depth-k targets by torch.roll over the row: the last k slots take its first labels"),
      entry<MtpShiftCrossesDocuments>(
          "mtp_shift_crosses_documents",
          "depth-k targets cross document boundaries in packed rows (depth 1 is masked)"),
      entry<MtpShiftedLocally>("mtp_shifted_locally",
                               "depth-k labels rolled on the local shard after the split"),
      entry<MtpNormalisedByDepthOneCount>("mtp_normalised_by_depth_one_count",
                                          "depth k's loss divided by depth 1's count N₁, not N_k"),
      entry<MtpTargetsFromNextRankOnly>(
          "mtp_targets_from_next_rank_only",
          "depth-k targets two or more ranks ahead fetched from rank r+1 at the same offset"),
  };
  entries = checked_first_by("mtp_rank_losses_average_to_global_depth_k_loss", std::move(entries));
  for (ImplementationInfo& info : checked_first_by(
           "shifted_shards_are_the_global_shift",
           {entry<MtpInputsRolledLocally>(
               "mtp_inputs_rolled_locally",
               "depth-k input_ids rolled on the local shard (torch.roll on one GPU)")}))
    entries.push_back(std::move(info));
  return entries;
}

}  // namespace cplab::properties::mutants
