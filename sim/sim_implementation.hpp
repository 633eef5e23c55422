#pragma once
// `sim`: the rank-local algorithms of SPEC §4-§7 on the host. Each call runs on one rank with its
// Comm; what it knows of the others comes through collectives or from the batch metadata every
// rank has. Stateless: one object serves all ranks of a World at once.
//
// The algorithm is decomposed into protected virtual steps (below, and the partition steps of
// PartitionRules). A variant under test, e.g. a deliberately broken mutant, overrides exactly the
// step it changes; everything else stays the standard algorithm.
#include <cstdint>
#include <string>
#include <vector>

#include "implementation/implementation.hpp"
#include "layouts/layout_map.hpp"
#include "layouts/partition.hpp"
#include "sim/attention/held_buffer.hpp"

namespace cplab::sim {

// The target of one local token in the shifted loss (SPEC §6).
struct Target {
  bool exists = false;     // g+k < L and, in packed rows, g+k is in the same document
  std::int64_t label = 0;  // labels[g+k] when it exists (may be IGNORE)
};

// One local token as the loss sees it.
struct LossToken {
  bool valid = false;
  Target target;
  bool contributes = false;
};

class SimImplementation : public Implementation, protected PartitionRules {
 public:
  std::string name() const override { return "sim"; }
  // Host loops and cplab's comm only: its ranks may take turns on one thread.
  bool ranks_share_a_thread() const override { return true; }

  std::string shift_unsupported() const override { return {}; }
  std::string ulysses_unsupported() const override { return {}; }
  std::string cp_attention_unsupported(AttentionAlgo /*algo*/) const override { return {}; }

 protected:
  // ---- The verbs (implementation.hpp checks their arguments before it calls these)
  std::vector<RankShard> do_shard(Comm& comm, const LayoutSpec& spec, const Batch& batch) override;
  Tensor do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                const Batch& micro_batch) override;
  Tensor do_shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                               std::int64_t seq_dim, std::optional<double> fill) override;
  Tensor do_gather_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                                std::int64_t seq_dim, bool trim) override;
  Tensor do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                         const Tensor& grad_gathered, std::int64_t seq_dim,
                                         bool trim) override;
  Tensor do_shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               std::int64_t seq_dim, std::int64_t depth, double fill) override;
  Tensor do_gather_tokens(Comm& comm, const Tensor& local) override;
  Tensor do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) override;
  LossOutput do_shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                                const Tensor& labels, const Tensor& valid,
                                std::int64_t depth) override;
  AttentionOutput do_attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& grad_out) override;
  CpAttentionOutput do_cp_attention(Comm& comm, const ShardLayout& layout,
                                    const std::vector<AttentionSchedule>& rows, const Tensor& q,
                                    const Tensor& k, const Tensor& v,
                                    const Tensor& grad_out) override;
  Tensor do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               const UlyssesHeads& heads, HeadKind kind) override;
  Tensor do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                       const Tensor& gathered, const UlyssesHeads& heads,
                                       HeadKind kind) override;

  // ---- Partition steps, inherited from PartitionRules (partition.hpp):
  //   document_slots    slots of a re-laid document: ceil_to(n, the layout's document unit)
  //   local_index       a rank's index map, from the layout's closed-form map
  //   balance_precedes  a greedy assignment's order: cost descending, equal costs higher index
  //   local_cu_seqlens  whole local documents: cu_seqlens_padded / C
  //   local_positions   the stream's positions (computed before partitioning), selected

  // ---- shard
  // The value of a slot the layout added, for keys padded with a constant (PadRule::constant) or
  // with the pad token (PadRule::pad_token): SPEC §2 per key and the layout's pad policy.
  virtual double pad_value(const std::string& key, const TokenField& field,
                           const ShardLayout& layout) const;

  // One key of one microbatch on this rank: caller tokens by caller position, added slots by the
  // key's pad rule; `stream` (the microbatch's stream) is needed only for continued positions.
  Tensor shard_field(const std::string& key, const TokenField& field, const ShardLayout& layout,
                     const StreamSlots* stream) const;

  // ---- gather_token_tensor
  // Puts the all-gathered shards (rank order along the seq dim, C·ℓ tokens per row) at their
  // global slots: gathered_slots[b][j] is the slot of the j-th gathered token of row b.
  virtual Tensor reorder_to_global(
      const Tensor& rank_ordered, std::int64_t seq_dim,
      const std::vector<std::vector<std::int64_t>>& gathered_slots) const;
  // Backward: blocks [C, ...] holds, for every rank p, this rank's gradient at p's tokens; the
  // result is the block of this rank summed over all ranks (reduce-scatter).
  virtual Tensor reduce_token_gradient(Comm& comm, const Tensor& blocks) const;

  // ---- gather_tokens backward: grad [C·ℓ, ...] → this rank's slice summed over ranks.
  virtual Tensor reduce_gathered_gradient(Comm& comm, const Tensor& grad_gathered) const;

  // ---- shifted_cp_loss
  // Each local token's target at depth k: labels[g+k] fetched from its owner (one exchange of just
  // the labels that live on other ranks, with their document ids, whichever ranks they are on),
  // none at the stream's end or across a document boundary. Result [row][k].
  virtual std::vector<std::vector<Target>> resolve_targets(Comm& comm, const ShardLayout& layout,
                                                           const Tensor& labels,
                                                           std::int64_t depth) const;
  // The slot whose label global slot g predicts at `depth`: g + depth, -1 past the stream's end
  // (`len` slots). Document boundaries are crosses_document's.
  virtual std::int64_t target_slot(std::int64_t g, std::int64_t depth, std::int64_t len) const;
  // Sends peer the (label, document id) pairs it needs from this rank, in its token order (one
  // message per peer that needs any, before any receive).
  virtual void send_target_labels(Comm& comm, int peer,
                                  const std::vector<std::int64_t>& pairs) const;
  // Who holds `slot` (the depth-`depth` target slot of a token of rank `asking`), from the
  // closed-form map. Both ends of the exchange use it, the sender to know what to send, the
  // receiver what to expect.
  virtual index_math::Slot target_owner(const LayoutMap& map, std::int64_t slot,
                                        std::int64_t asking, std::int64_t depth) const;
  // Whether a token of document `doc` may not take the label of a slot of `target_doc` (`depth`
  // slots ahead).
  virtual bool crosses_document(const ShardLayout& layout, std::int32_t doc,
                                std::int32_t target_doc, std::int64_t depth) const;
  // valid, a target, and the target is not IGNORE.
  virtual bool token_contributes(const LossToken& token) const;
  // This rank's contributing tokens.
  virtual std::int64_t count_contributing(const std::vector<std::vector<LossToken>>& tokens) const;
  // N: the local counts summed over the group (ranks hold disjoint tokens).
  virtual std::int64_t total_contributing(Comm& comm, std::int64_t local) const;
  // loss_r = scale · Σ CE and ∂loss_r/∂z = scale · (softmax - onehot): scale = C / N, 0 when N = 0.
  virtual double loss_scale(std::int64_t local, std::int64_t total, std::int64_t cp) const;

  // Gathered metadata of every rank's tokens, per row in rank order: global slot, caller position.
  struct GatheredSlots {
    std::vector<std::vector<std::int64_t>> slot;
    std::vector<std::vector<std::int64_t>> caller_pos;
  };
  GatheredSlots gather_slots(Comm& comm, const ShardLayout& layout) const;

  // ---- Ulysses all-to-all
  // The heads of the local tensor (of `kind`) that Ulysses rank u receives, in order: its head
  // group, KV heads fewer than U repeated (⌊u·H_kv/U⌋). -1 would be a zero head.
  virtual std::vector<std::int64_t> ulysses_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                                     std::int64_t group, std::int64_t u) const;

  // ---- CP attention by schedule (SPEC §13; sim/attention/sim_cp_attention.cpp, whose one
  // row's run, CpAttentionRun, calls these steps)
  friend class CpAttentionRun;
  // The softmax scale: 1/sqrt(d).
  virtual float softmax_scale(std::int64_t head_dim) const;
  // The dtype the running output is kept in between merges: f32.
  virtual DType attention_accumulation_dtype(DType input) const;
  // Whether block `block` of `step` is computed: every block the schedule lists.
  virtual bool block_computed(const AttentionSchedule& schedule, const RankStep& step,
                              std::size_t block) const;
  // The block as the kernel is launched on it: the schedule's mask and diagonal.
  virtual ScheduleBlock applied_block(const ScheduleBlock& block) const;
  // The row's mask as the kernels of step `step` apply it in per-token blocks: the schedule's.
  virtual MaskRule applied_mask(const AttentionSchedule& schedule, std::size_t step) const;
  // What the mask reads at each position of a buffer made of `pieces` that rank `rank` holds at
  // `step` (its keys, or its queries): the schedule's facts of the slots the pieces hold.
  virtual std::vector<TokenFacts> buffer_facts(const AttentionSchedule& schedule, std::int64_t rank,
                                               std::size_t step,
                                               const std::vector<BufferPiece>& pieces,
                                               bool keys) const;
  // The key positions a block of `step` reads in its key buffer of `key_tokens` tokens: block.k.
  virtual LocalRange block_key_range(const RankStep& step, const ScheduleBlock& block,
                                     std::int64_t key_tokens) const;
  // Merges a block's row into the running row: the stable form (block_attention.hpp).
  virtual void merge_block_row(float* out, float& lse, const float* out_b, float lse_b,
                               std::int64_t d) const;
  // The K/V a backward step recomputes against: the ones it holds at that step (`first`: what
  // it held at step 0).
  virtual const HeldKv& backward_step_kv(const HeldKv& held, const HeldKv& first,
                                         std::int64_t step) const;
  // Where K/V and dK/dV travel in the backward's ring: +1, to the next ring rank (as forward).
  virtual int backward_ring_shift() const;
  // After which step of `steps` the travelling dK/dV are delivered to their owners: the last.
  virtual std::int64_t dkv_delivery_step(std::int64_t steps) const;
};

}  // namespace cplab::sim
