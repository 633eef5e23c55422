// Mutants of the shifted cross-boundary loss (SPEC §6): each overrides one step of sim's loss.
// Every one of these has shipped in CP training code; SPEC §6 lists most of them by name.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

std::vector<std::vector<sim::Target>> Mutant::shifted_locally(const ShardLayout& layout,
                                                              const Tensor& labels,
                                                              std::int64_t depth) const {
  const std::int64_t len = layout.local_len();
  std::vector<std::vector<sim::Target>> targets(
      static_cast<std::size_t>(layout.rows),
      std::vector<sim::Target>(static_cast<std::size_t>(len)));
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    for (std::int64_t k = 0; k + depth < len; ++k) {
      if (crosses_document(layout, layout.doc_ids[b][k], layout.doc_ids[b][k + depth], depth))
        continue;
      targets[b][k] = {.exists = true,
                       .label = static_cast<std::int64_t>(labels.get(b * len + k + depth))};
    }
  }
  return targets;
}

namespace {

using sim::LossToken;
using sim::Target;
using Targets = std::vector<std::vector<Target>>;

// `labels[:, k:]` applied to the local shard after the split: each token takes the label k *local*
// tokens ahead, so every chunk boundary gets a wrong target and the last k local tokens none.
class LabelsShiftedLocally final : public Mutant {
  using Mutant::Mutant;
  Targets resolve_targets(Comm&, const ShardLayout& layout, const Tensor& labels,
                          std::int64_t depth) const override {
    return shifted_locally(layout, labels, depth);
  }
};

// Each rank shifts what it has and never asks its neighbours: a token whose target lives on
// another rank gets none (the tokens at every chunk end silently drop out of the loss).
class CrossRankTargetsDropped final : public Mutant {
  using Mutant::Mutant;
  Targets resolve_targets(Comm& comm, const ShardLayout& layout, const Tensor& labels,
                          std::int64_t depth) const override {
    Targets targets = SimImplementation::resolve_targets(comm, layout, labels, depth);
    for (std::size_t b = 0; b < targets.size(); ++b) {
      const sim::LayoutMap map = sim::LayoutMap::of(layout, b);
      for (std::size_t k = 0; k < targets[b].size(); ++k) {
        const std::int64_t next = layout.index[b][k] + depth;
        if (next < layout.padded_len && map.owner(next).rank != layout.rank) targets[b][k] = {};
      }
    }
    return targets;
  }
};

// The next slot of the last rank's early chunk is its own tail chunk's first token (head-tail puts
// chunks C-1 and C on rank C-1), but the code asks the "next" rank (r + 1 mod C = rank 0) for it.
class LastRankTargetFromWrongNeighbour final : public Mutant {
  using Mutant::Mutant;
  index_math::Slot target_owner(const sim::LayoutMap& map, std::int64_t slot,
                                std::int64_t /*asking*/, std::int64_t /*depth*/) const override {
    const index_math::Slot owner = map.owner(slot);
    if (map.cp() > 1 && owner.rank == map.cp() - 1 && owner.offset == map.local_len() / 2)
      return {0, owner.offset};
    return owner;
  }
};

// A protocol bug: the label exchange only sends "forward" (to higher ranks), so rank r never sends
// rank r-1 the labels it needs, and rank r-1 waits for them for ever while the others go on to the
// count's all-reduce. Only the comm's deadlock check ends it quickly.
class LabelSendToLowerNeighbourSkipped final : public Mutant {
  using Mutant::Mutant;
  void send_target_labels(Comm& comm, int peer,
                          const std::vector<std::int64_t>& pairs) const override {
    if (peer == comm.rank() - 1) return;
    SimImplementation::send_target_labels(comm, peer, pairs);
  }
};

// Packed rows: the last token of a document takes the first label of the next one.
class ShiftCrossesDocuments final : public Mutant {
  using Mutant::Mutant;
  bool crosses_document(const ShardLayout&, std::int32_t, std::int32_t,
                        std::int64_t) const override {
    return false;
  }
};

// The valid (keep) mask is never consulted.
class ValidMaskIgnored final : public Mutant {
  using Mutant::Mutant;
  bool token_contributes(const LossToken& token) const override {
    return token.target.exists && token.target.label != kIgnoreIndex;
  }
};

// N counts every valid token with a target, IGNORE targets included (a count taken from the
// attention mask instead of the labels).
class IgnoreTargetsCounted final : public Mutant {
  using Mutant::Mutant;
  std::int64_t count_contributing(
      const std::vector<std::vector<LossToken>>& tokens) const override {
    std::int64_t count = 0;
    for (const auto& row : tokens) {
      for (const LossToken& token : row) count += token.valid && token.target.exists ? 1 : 0;
    }
    return count;
  }
};

// The count is all-reduced over a group that already holds it on every rank: C × N.
class CountSummedOverCopies final : public Mutant {
  using Mutant::Mutant;
  std::int64_t total_contributing(Comm& comm, std::int64_t local) const override {
    std::int64_t total = SimImplementation::total_contributing(comm, local);
    comm.all_reduce({&total, sizeof total}, 1, DType::i64, ReduceOp::sum);
    return total;
  }
};

// N taken from one rank (rank 0's local count, broadcast) instead of summed over the group.
class CountFromOneRank final : public Mutant {
  using Mutant::Mutant;
  std::int64_t total_contributing(Comm& comm, std::int64_t local) const override {
    std::int64_t total = comm.rank() == 0 ? local : 0;
    comm.all_reduce({&total, sizeof total}, 1, DType::i64, ReduceOp::sum);
    return total;
  }
};

// Each rank returns its local mean; their mean is the mean of per-rank means.
class MeanOfRankMeans final : public Mutant {
  using Mutant::Mutant;
  double loss_scale(std::int64_t local, std::int64_t, std::int64_t) const override {
    return local > 0 ? 1.0 / static_cast<double>(local) : 0.0;
  }
};

// The global mean on every rank, without the factor C that FSDP's gradient averaging over the CP
// group divides away again.
class FactorCForgotten final : public Mutant {
  using Mutant::Mutant;
  double loss_scale(std::int64_t, std::int64_t total, std::int64_t) const override {
    return total > 0 ? 1.0 / static_cast<double>(total) : 0.0;
  }
};

// C / N with no guard for a microbatch whose labels are all IGNORE: NaN loss and gradients.
class ZeroCountNotGuarded final : public Mutant {
  using Mutant::Mutant;
  double loss_scale(std::int64_t, std::int64_t total, std::int64_t cp) const override {
    return static_cast<double>(cp) / static_cast<double>(total);
  }
};

}  // namespace

std::vector<ImplementationInfo> loss_mutants() {
  std::vector<ImplementationInfo> entries = {
      entry<LabelsShiftedLocally>(
          "labels_shifted_locally",
          "labels shifted locally after the split (labels[:, 1:] on the shard)"),
      entry<CrossRankTargetsDropped>(
          "cross_rank_targets_dropped",
          "no neighbour exchange: tokens whose target lives on another rank get none"),
      entry<LastRankTargetFromWrongNeighbour>(
          "last_rank_target_from_wrong_neighbour",
          "the last rank's early-chunk target fetched from rank (r+1) mod C instead of itself"),
      // A protocol bug: every comm's deadlock detection reports it at once (no timeout).
      entry<LabelSendToLowerNeighbourSkipped>(
          "label_send_to_lower_neighbour_skipped",
          "the label exchange never sends to rank r-1, which waits for ever (a deadlock)"),
      entry<ShiftCrossesDocuments>("shift_crosses_documents",
                                   "the shift crosses document boundaries in packed rows"),
      entry<ValidMaskIgnored>("valid_mask_ignored", "the valid (keep) mask is ignored by the loss"),
      entry<IgnoreTargetsCounted>("ignore_targets_counted",
                                  "N counts tokens whose target is IGNORE"),
      entry<CountSummedOverCopies>("count_summed_over_copies",
                                   "N summed over a group that holds copies of it (C × N)"),
      entry<CountFromOneRank>("count_from_one_rank", "N taken from rank 0 only"),
      entry<MeanOfRankMeans>("mean_of_rank_means",
                             "each rank returns its local mean: the mean of per-rank means"),
      entry<FactorCForgotten>("factor_c_forgotten", "loss_r = Σ CE / N without the factor C"),
      entry<ZeroCountNotGuarded>("zero_count_not_guarded",
                                 "C / N without the N = 0 guard: NaN when every label is IGNORE"),
  };
  return checked_first_by("rank_losses_average_to_global_shifted_loss", std::move(entries));
}

}  // namespace cplab::properties::mutants
