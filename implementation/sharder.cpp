#include "implementation/sharder.hpp"

#include "core/error.hpp"

namespace cplab::sim {

Sharder::Sharder(Implementation& impl, Comm& comm, LayoutSpec spec)
    : impl_(impl), comm_(comm), spec_(std::move(spec)) {
  CPLAB_CHECK(comm.size() == spec_.cp, "Sharder: the comm has {} ranks, the spec ({}) cp={}",
              comm.size(), spec_.layout, spec_.cp);
}

std::vector<Batch> Sharder::shard(const Batch& batch) {
  std::vector<Batch> locals;
  layouts_.clear();
  for (RankShard& shard : impl_.shard(comm_, spec_, batch)) {
    locals.push_back(std::move(shard.local));
    layouts_.push_back(std::move(shard.layout));
  }
  return locals;
}

const ShardLayout& Sharder::layout(std::int64_t microbatch) const {
  CPLAB_CHECK(!layouts_.empty(),
              "{}: no batch sharded yet; the verbs need the layout shard() records", spec_.layout);
  CPLAB_CHECK(microbatch >= 0 && microbatch < static_cast<std::int64_t>(layouts_.size()),
              "microbatch {} out of range: the last shard() made {}", microbatch, layouts_.size());
  return layouts_[static_cast<std::size_t>(microbatch)];
}

Tensor Sharder::shard_primary_later(const Batch& micro_batch, std::int64_t microbatch) {
  return impl_.shard_primary_later(comm_, layout(microbatch), micro_batch);
}

Tensor Sharder::shard_token_tensor(const Tensor& value, std::int64_t seq_dim,
                                   std::optional<double> fill, std::int64_t microbatch) {
  return impl_.shard_token_tensor(comm_, layout(microbatch), value, seq_dim, fill);
}

Tensor Sharder::gather_token_tensor(const Tensor& local, std::int64_t seq_dim, bool trim,
                                    std::int64_t microbatch) {
  return impl_.gather_token_tensor(comm_, layout(microbatch), local, seq_dim, trim);
}

Tensor Sharder::gather_token_tensor_backward(const Tensor& grad_gathered, std::int64_t seq_dim,
                                             bool trim, std::int64_t microbatch) {
  return impl_.gather_token_tensor_backward(comm_, layout(microbatch), grad_gathered, seq_dim,
                                            trim);
}

LossOutput Sharder::shifted_cp_loss(const Tensor& logits, const Tensor& labels, const Tensor& valid,
                                    std::int64_t microbatch, std::int64_t depth) {
  return impl_.shifted_cp_loss(comm_, layout(microbatch), logits, labels, valid, depth);
}

}  // namespace cplab::sim
