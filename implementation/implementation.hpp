#pragma once
// An implementation under test: the rank-local verbs of SPEC §5-§7. Each call runs on one rank,
// with its Comm and its local inputs. `sim` (host loops + ThreadComm), `gpu` (CUDA kernels) and the
// deliberately broken mutants implement it; properties iterate over the registered ones.
//
// Tensors cross this interface on the host; a device implementation uploads and downloads at the
// edge (its kernels are timed by the benchmarks, not here).
//
// As Comm's calls do (comm/comm.hpp), the public verbs check their arguments, once for every
// implementation and in the same words, and then call the protected do_* hook of the verb: an
// implementation overrides the hooks, and a hook never sees arguments the contract refuses.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/schedule.hpp"
#include "comm/comm.hpp"
#include "core/batch.hpp"
#include "core/error.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_layout.hpp"
#include "core/ulysses_heads.hpp"
#include "implementation/cp_attention.hpp"

namespace cplab {

// One rank's share of one microbatch: its local batch (token keys sharded, position_ids added,
// pass-through tensors unchanged; the primary left global when shard_primary is false) and the
// layout it recorded.
struct RankShard {
  Batch local;
  ShardLayout layout;
};

struct LossOutput {
  double loss = 0.0;  // loss_r of SPEC §6
  Tensor grad;        // ∂loss_r/∂logits, [B,ℓ,V] f32
  std::int64_t contributing_local = 0;
  std::int64_t contributing_total = 0;  // N, summed over the group
};

// Single-head attention of SPEC §7 on one rank: q, k, v local [B,ℓ,D] f32; keys and values are
// gathered from all ranks with gather_tokens; the mask is document-causal from global positions
// (index maps) and document ids; pad queries attend nothing (output 0).
struct AttentionOutput {
  Tensor out;     // [B,ℓ,D]
  Tensor grad_q;  // given grad_out [B,ℓ,D]: local dQ
  Tensor grad_k;  // local dK after the backward transport (sum over ranks to the owner)
  Tensor grad_v;
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  // False when the implementation cannot run here (gpu without a device); why() says why.
  virtual bool available() const { return true; }
  virtual std::string why_unavailable() const { return {}; }
  // True when the ranks keep no state bound to their thread (no device, no blocking call of a
  // library outside cplab's comm), so that a harness may run them as fibers taking turns on one
  // thread (comm/rank_fibers.hpp), which is far cheaper than a thread each on a small machine.
  virtual bool ranks_share_a_thread() const { return false; }

  // One RankShard per microbatch.
  std::vector<RankShard> shard(Comm& comm, const LayoutSpec& spec, const Batch& batch);
  // The primary of a batch sharded with shard_primary = false, sharded afterwards (SPEC §4).
  Tensor shard_primary_later(Comm& comm, const ShardLayout& layout, const Batch& micro_batch);

  // `value` holds the caller's rows (length S; padding them to L takes a fill unless they are
  // packed) or the padded stream's (length L) on `seq_dim`.
  Tensor shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                            std::int64_t seq_dim, std::optional<double> fill);
  Tensor gather_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                             std::int64_t seq_dim, bool trim);
  // Backward of gather_token_tensor: grad of the gathered tensor (as returned) → local grad.
  Tensor gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                      const Tensor& grad_gathered, std::int64_t seq_dim, bool trim);
  // A token tensor's shard shifted by `depth` slots along the global stream (SPEC §6.1: the inputs
  // of multi-token prediction depth k, Automodel's roll_tensor under CP): local token at slot g
  // takes the value at slot g + depth when that slot is in the stream and, in packed rows, in g's
  // document; else `fill`. `local` is this rank's shard (as shard_token_tensor returns it).
  // "" when the implementation has the verb; else why not (its property is then skipped).
  virtual std::string shift_unsupported() const {
    return name() + " does not implement shift_token_tensor";
  }
  Tensor shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                            std::int64_t seq_dim, std::int64_t depth, double fill);
  // [ℓ,...] on every rank → [C·ℓ,...] in rank order; backward sums every rank's slice to its owner.
  Tensor gather_tokens(Comm& comm, const Tensor& local);
  Tensor gather_tokens_backward(Comm& comm, const Tensor& grad_gathered);

  // `depth` k ≥ 1 (SPEC §6.1): each token's target is the label k slots ahead in its document;
  // depth 1 is the next-token loss. N and the scale C/N are depth k's own.
  LossOutput shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                             const Tensor& labels, const Tensor& valid, std::int64_t depth);
  AttentionOutput attention(Comm& comm, const ShardLayout& layout, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& grad_out);

  // CP attention run by a schedule (SPEC §13, implementation/cp_attention.hpp): one schedule per
  // row of the microbatch, all of one algorithm; q, k, v, grad_out local [B, ℓ, H(_kv), d].
  // "" when the implementation runs `algo`; else why not (its properties are then skipped).
  virtual std::string cp_attention_unsupported(sim::AttentionAlgo algo) const {
    return fmt::format("{} does not run CP attention by schedule ({})", name(),
                       sim::algo_name(algo));
  }
  CpAttentionOutput cp_attention(Comm& comm, const ShardLayout& layout,
                                 const std::vector<sim::AttentionSchedule>& rows, const Tensor& q,
                                 const Tensor& k, const Tensor& v, const Tensor& grad_out);

  // The Ulysses head all-to-all (SPEC §10.5) over the group of `comm` (U = C): local [B, ℓ, H, d]
  // (H = heads.of(kind)) → [B, L, n, d], the sequence in global order by the layout's index maps
  // and this rank's head group (n = H/U; KV heads fewer than U repeated up to U). The inverse takes
  // [B, L, n, d] back to [B, ℓ, H, d] (a repeated KV head from the first rank holding it).
  // "" when the implementation has the verb; else why not (its property is then skipped).
  virtual std::string ulysses_unsupported() const {
    return name() + " does not implement the Ulysses head all-to-all";
  }
  Tensor ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                            const UlyssesHeads& heads, HeadKind kind);
  Tensor ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout, const Tensor& gathered,
                                    const UlyssesHeads& heads, HeadKind kind);

 protected:
  // The verbs above, once their arguments are known to fit: a recorded layout checked by
  // check_recorded_layout, a comm of the layout's C and rank where the verb says so, and tensors
  // of the shapes (and dtypes) the verb names. What a hook still checks is its own: a dtype or a
  // form its kernels do not take, or facts only its algorithm derives.
  virtual std::vector<RankShard> do_shard(Comm& comm, const LayoutSpec& spec,
                                          const Batch& batch) = 0;
  virtual Tensor do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                        const Batch& micro_batch) = 0;
  virtual Tensor do_shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                                       std::int64_t seq_dim, std::optional<double> fill) = 0;
  virtual Tensor do_gather_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                                        std::int64_t seq_dim, bool trim) = 0;
  virtual Tensor do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                                 const Tensor& grad_gathered, std::int64_t seq_dim,
                                                 bool trim) = 0;
  // Reached only when shift_unsupported() is "", so an implementation that says it has the verb
  // overrides it.
  virtual Tensor do_shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                                       std::int64_t seq_dim, std::int64_t depth, double fill);
  virtual Tensor do_gather_tokens(Comm& comm, const Tensor& local) = 0;
  virtual Tensor do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) = 0;
  virtual LossOutput do_shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                                        const Tensor& labels, const Tensor& valid,
                                        std::int64_t depth) = 0;
  virtual AttentionOutput do_attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                                       const Tensor& k, const Tensor& v,
                                       const Tensor& grad_out) = 0;
  // Reached only when cp_attention_unsupported(algo) is "" for the rows' algorithm.
  virtual CpAttentionOutput do_cp_attention(Comm& comm, const ShardLayout& layout,
                                            const std::vector<sim::AttentionSchedule>& rows,
                                            const Tensor& q, const Tensor& k, const Tensor& v,
                                            const Tensor& grad_out);
  // Reached only when ulysses_unsupported() is "".
  virtual Tensor do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                                       const UlyssesHeads& heads, HeadKind kind);
  virtual Tensor do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                               const Tensor& gathered, const UlyssesHeads& heads,
                                               HeadKind kind);
};

}  // namespace cplab
