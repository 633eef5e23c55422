#pragma once
// The gpu implementation's class (internal; gpu/implementation.hpp makes one). Verbs live in one
// file each group: gpu_shard.cpp, gpu_gather.cpp, gpu_loss.cpp, gpu_attention.cpp,
// gpu_cp_attention.cpp, gpu_ulysses.cpp.
#include "gpu/comm/device_comm.hpp"
#include "implementation/implementation.hpp"

namespace cplab::gpu {

class GpuImplementation final : public Implementation {
 public:
  explicit GpuImplementation(GpuCommKind kind) : kind_(kind) {}

  std::string name() const override;
  bool available() const override;
  std::string why_unavailable() const override;

  std::string cp_attention_unsupported(sim::AttentionAlgo algo) const override;
  std::string ulysses_unsupported() const override;

 protected:
  // The verbs, on arguments implementation.hpp has checked; what these still check is the
  // device's own (the dtypes its kernels take, one index map for every row).
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
  Tensor do_gather_tokens(Comm& comm, const Tensor& local) override;
  Tensor do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) override;
  LossOutput do_shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                                const Tensor& labels, const Tensor& valid,
                                std::int64_t depth) override;
  AttentionOutput do_attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& grad_out) override;
  CpAttentionOutput do_cp_attention(Comm& comm, const ShardLayout& layout,
                                    const std::vector<sim::AttentionSchedule>& rows,
                                    const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& grad_out) override;
  Tensor do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               const UlyssesHeads& heads, HeadKind kind) override;
  Tensor do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                       const Tensor& gathered, const UlyssesHeads& heads,
                                       HeadKind kind) override;

 private:
  GpuCommKind kind_;
};

}  // namespace cplab::gpu
