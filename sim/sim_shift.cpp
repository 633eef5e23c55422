// shift_token_tensor on one rank (SPEC §6.1): each local token takes the token `depth` slots ahead
// on the global stream, in its document, wherever that token lives (the fill where that slot holds
// no caller token). The shards, their document ids and caller positions are all-gathered once
// (C·ℓ tokens a row), then every local token reads its source from the owner the closed-form map
// names. An all-gather rather than point-to-point: a shift of inputs is called once a step, and at
// depth k and short chunks (k > ℓ) its sources span several ranks.
#include <cstring>

#include "core/error.hpp"
#include "core/token_moves.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {

Tensor SimImplementation::do_shift_token_tensor(Comm& comm, const ShardLayout& layout,
                                                const Tensor& local, std::int64_t seq_dim,
                                                std::int64_t depth, double fill) {
  const TokenAxes axes = token_axes(local, seq_dim, "shift_token_tensor");
  const std::int64_t len = layout.local_len(), cp = layout.cp;
  // Every rank's shard, and per token its document id and caller position (-1: a slot the layout
  // added), in rank order.
  Tensor shards(local.dtype(), {cp * local.numel()}, Uninitialized{});
  comm.all_gather(bytes_of(local), bytes_of(shards), static_cast<std::size_t>(local.numel()),
                  local.dtype());
  std::vector<std::int64_t> facts;
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      facts.push_back(layout.doc_ids[b][k]);
      facts.push_back(layout.caller_pos[b][k]);
    }
  }
  std::vector<std::int64_t> all_facts(static_cast<std::size_t>(cp) * facts.size());
  comm.all_gather(bytes_of(facts), bytes_of(all_facts), facts.size(), DType::i64);

  Tensor out(local.dtype(), local.shape(), Uninitialized{});
  Tensor fill_token(local.dtype(), {axes.inner}, Uninitialized{});
  for (std::int64_t e = 0; e < axes.inner; ++e) fill_token.set(e, fill);
  const std::size_t token = axes.token_bytes(), shard_bytes = local.numel() * axes.elem;
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    const LayoutMap map = LayoutMap::of(layout, static_cast<std::size_t>(b));
    for (std::int64_t k = 0; k < len; ++k) {
      const std::int64_t g = layout.index[b][k];
      const std::byte* source = nullptr;  // the fill
      index_math::Slot owner{-1, -1};
      if (depth < layout.padded_len - g) {  // g + depth in the stream (never overflowing)
        const std::int64_t ahead = g + depth;
        owner = map.owner(ahead);
        CPLAB_CHECK(owner.rank >= 0 && owner.rank < cp && owner.offset >= 0 && owner.offset < len,
                    "shift_token_tensor: row {}: slot {} is owned by rank {} at offset {}, outside "
                    "cp={} ranks of ℓ={} tokens",
                    b, ahead, owner.rank, owner.offset, cp, len);
        const std::int64_t doc = layout.doc_ids[b][k];
        const std::size_t there =
            2 * static_cast<std::size_t>((owner.rank * layout.rows + b) * len + owner.offset);
        const bool same_document = !layout.packed || (doc != 0 && all_facts[there] == doc);
        if (same_document && all_facts[there + 1] >= 0) source = shards.raw();
      }
      for (std::int64_t o = 0; o < axes.outer; ++o) {
        const std::byte* from = source == nullptr ? fill_token.raw()
                                                  : source + owner.rank * shard_bytes +
                                                        axes.token(o, b, owner.offset) * token;
        std::memcpy(out.raw() + axes.token(o, b, k) * token, from, token);
      }
    }
  }
  return out;
}

}  // namespace cplab::sim
