#pragma once
// The sharder of SPEC §5 as training code holds it: an implementation, this rank's Comm and the
// LayoutSpec bound once. shard() records every microbatch's ShardLayout, and the verbs use it, so
// a data-dependent layout (thd, magi) refuses them until a batch has been sharded.
#include <cstdint>
#include <optional>
#include <vector>

#include "implementation/implementation.hpp"

namespace cplab::sim {

class Sharder {
 public:
  Sharder(Implementation& impl, Comm& comm, LayoutSpec spec);

  // One local batch per microbatch (SPEC §4); their layouts are kept for the verbs below.
  std::vector<Batch> shard(const Batch& batch);
  const ShardLayout& layout(std::int64_t microbatch = 0) const;
  const LayoutSpec& spec() const { return spec_; }

  Tensor shard_primary_later(const Batch& micro_batch, std::int64_t microbatch = 0);
  Tensor shard_token_tensor(const Tensor& value, std::int64_t seq_dim = 1,
                            std::optional<double> fill = std::nullopt, std::int64_t microbatch = 0);
  Tensor gather_token_tensor(const Tensor& local, std::int64_t seq_dim = 1, bool trim = false,
                             std::int64_t microbatch = 0);
  Tensor gather_token_tensor_backward(const Tensor& grad_gathered, std::int64_t seq_dim = 1,
                                      bool trim = false, std::int64_t microbatch = 0);
  Tensor gather_tokens(const Tensor& local) { return impl_.gather_tokens(comm_, local); }
  Tensor gather_tokens_backward(const Tensor& grad) {
    return impl_.gather_tokens_backward(comm_, grad);
  }
  LossOutput shifted_cp_loss(const Tensor& logits, const Tensor& labels, const Tensor& valid,
                             std::int64_t microbatch = 0, std::int64_t depth = 1);
  // The Ulysses head all-to-all (SPEC §10.5) of a microbatch's [B, ℓ, H, d] and its inverse.
  Tensor ulysses_all_to_all(const Tensor& local, const UlyssesHeads& heads, HeadKind kind,
                            std::int64_t microbatch = 0) {
    return impl_.ulysses_all_to_all(comm_, layout(microbatch), local, heads, kind);
  }
  Tensor ulysses_all_to_all_inverse(const Tensor& gathered, const UlyssesHeads& heads,
                                    HeadKind kind, std::int64_t microbatch = 0) {
    return impl_.ulysses_all_to_all_inverse(comm_, layout(microbatch), gathered, heads, kind);
  }

 private:
  Implementation& impl_;
  Comm& comm_;
  LayoutSpec spec_;
  std::vector<ShardLayout> layouts_;
};

}  // namespace cplab::sim
