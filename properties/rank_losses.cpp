#include "properties/rank_losses.hpp"

#include "comm/thread_comm.hpp"

namespace cplab::properties {

std::vector<LossOutput> run_rank_losses(Implementation& impl, const LayoutSpec& spec,
                                        const Batch& batch, const Tensor& logits,
                                        std::int64_t depth) {
  std::vector<LossOutput> outputs(static_cast<std::size_t>(spec.cp));
  sim::World world(static_cast<int>(spec.cp));
  world.run([&](sim::RankContext& ctx) {
    const RankShard shard = impl.shard(ctx.comm, spec, batch).at(0);
    const Tensor local = impl.shard_token_tensor(ctx.comm, shard.layout, logits, 1, 0.0);
    outputs[static_cast<std::size_t>(ctx.rank)] =
        impl.shifted_cp_loss(ctx.comm, shard.layout, local, shard.local.at(keys::labels),
                             shard.local.at(keys::loss_mask), depth);
  });
  return outputs;
}

}  // namespace cplab::properties
