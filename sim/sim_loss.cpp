// The shifted cross-boundary loss of SPEC §6 on one rank. A token's target at depth k is the label
// of the global slot k ahead; when another rank holds that slot, its label (and document id) comes
// from that rank by one exchange of just the labels needed: 16 bytes a label, one message per pair
// of ranks that needs any, whichever rank holds it (at depth k and short chunks, several ranks
// ahead). One exchange per depth. N is depth k's, summed over the group.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "sim/cross_entropy_row.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {
namespace {

constexpr int kLabelExchangeTag = 0x1ab;

// What one target slot carries over the wire: its label and its document id.
struct LabelAndDoc {
  std::int64_t label;
  std::int64_t doc;
};

}  // namespace

void SimImplementation::send_target_labels(Comm& comm, int peer,
                                           const std::vector<std::int64_t>& pairs) const {
  comm.send(bytes_of(pairs), pairs.size(), DType::i64, peer, kLabelExchangeTag);
}

index_math::Slot SimImplementation::target_owner(const LayoutMap& map, std::int64_t slot,
                                                 std::int64_t /*asking*/,
                                                 std::int64_t /*depth*/) const {
  return map.owner(slot);
}

std::int64_t SimImplementation::target_slot(std::int64_t g, std::int64_t depth,
                                            std::int64_t len) const {
  return depth < len - g ? g + depth : -1;  // never overflowing, whatever the depth
}

bool SimImplementation::crosses_document(const ShardLayout& layout, std::int32_t doc,
                                         std::int32_t target_doc, std::int64_t /*depth*/) const {
  // Packed rows only: row padding (document 0) belongs to no document, so it has no target.
  return layout.packed && (doc == 0 || target_doc != doc);
}

std::vector<std::vector<Target>> SimImplementation::resolve_targets(Comm& comm,
                                                                    const ShardLayout& layout,
                                                                    const Tensor& labels,
                                                                    std::int64_t depth) const {
  const std::int64_t rows = layout.rows, len = layout.local_len(), cp = layout.cp, me = layout.rank;
  const std::int64_t stream_len = layout.padded_len;
  auto label_at = [&](std::int64_t b, std::int64_t k) {
    return static_cast<std::int64_t>(labels.get(b * len + k));
  };
  // Every rank derives the same transfer lists from the closed-form maps: for each token of rank q
  // whose target slot rank p holds, p sends q that slot's label, in q's token order.
  std::vector<std::vector<std::int64_t>> outgoing(
      static_cast<std::size_t>(cp));  // per peer, flat pairs
  std::vector<std::size_t> incoming(static_cast<std::size_t>(cp), 0);
  std::vector<LayoutMap> maps;
  // The owner the (possibly overridden) step names is checked before the exchange indexes its
  // per-peer lists and this rank's labels by it.
  auto owner_of = [&](std::int64_t b, std::int64_t slot, std::int64_t asking) {
    const index_math::Slot owner = target_owner(maps[b], slot, asking, depth);
    CPLAB_CHECK(owner.rank >= 0 && owner.rank < cp && owner.offset >= 0 && owner.offset < len,
                "shifted_cp_loss: row {}: target slot {} is owned by rank {} at offset {}, outside "
                "cp={} ranks of ℓ={} tokens",
                b, slot, owner.rank, owner.offset, cp, len);
    return owner;
  };
  for (std::int64_t b = 0; b < rows; ++b) {
    maps.push_back(LayoutMap::of(layout, static_cast<std::size_t>(b)));
    for (std::int64_t q = 0; q < cp; ++q) {
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t next = target_slot(
            q == me ? layout.index[b][k] : maps[b].global_index(q, k), depth, stream_len);
        if (next < 0) continue;
        const index_math::Slot owner = owner_of(b, next, q);
        if (owner.rank == q) continue;
        if (q == me) ++incoming[owner.rank];
        if (owner.rank == me) {
          outgoing[q].push_back(label_at(b, owner.offset));
          outgoing[q].push_back(layout.doc_ids[b][owner.offset]);
        }
      }
    }
  }
  std::vector<std::vector<LabelAndDoc>> received(static_cast<std::size_t>(cp));
  for (std::int64_t p = 0; p < cp; ++p) {  // buffered sends first, then the receives
    if (!outgoing[p].empty()) send_target_labels(comm, static_cast<int>(p), outgoing[p]);
  }
  for (std::int64_t p = 0; p < cp; ++p) {
    if (incoming[p] == 0) continue;
    std::vector<std::int64_t> pairs(2 * incoming[p]);
    comm.recv(bytes_of(pairs), pairs.size(), DType::i64, static_cast<int>(p), kLabelExchangeTag);
    for (std::size_t i = 0; i < incoming[p]; ++i)
      received[p].push_back({pairs[2 * i], pairs[2 * i + 1]});
  }
  std::vector<std::size_t> taken(static_cast<std::size_t>(cp), 0);
  std::vector<std::vector<Target>> targets(static_cast<std::size_t>(rows),
                                           std::vector<Target>(static_cast<std::size_t>(len)));
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      const std::int64_t next = target_slot(layout.index[b][k], depth, stream_len);
      if (next < 0) continue;
      const index_math::Slot owner = owner_of(b, next, me);
      CPLAB_CHECK(owner.rank == me || taken[owner.rank] < received[owner.rank].size(),
                  "shifted_cp_loss: row {}: more targets owned by rank {} than it was asked for", b,
                  owner.rank);
      const LabelAndDoc at =
          owner.rank == me ? LabelAndDoc{label_at(b, owner.offset), layout.doc_ids[b][owner.offset]}
                           : received[owner.rank][taken[owner.rank]++];
      if (crosses_document(layout, layout.doc_ids[b][k], static_cast<std::int32_t>(at.doc), depth))
        continue;
      targets[b][k] = Target{.exists = true, .label = at.label};
    }
  }
  return targets;
}

bool SimImplementation::token_contributes(const LossToken& token) const {
  return token.valid && token.target.exists && token.target.label != kIgnoreIndex;
}

std::int64_t SimImplementation::count_contributing(
    const std::vector<std::vector<LossToken>>& tokens) const {
  std::int64_t count = 0;
  for (const auto& row : tokens) {
    for (const LossToken& token : row) count += token.contributes ? 1 : 0;
  }
  return count;
}

std::int64_t SimImplementation::total_contributing(Comm& comm, std::int64_t local) const {
  std::int64_t total = local;
  comm.all_reduce({&total, sizeof total}, 1, DType::i64, ReduceOp::sum);
  return total;
}

double SimImplementation::loss_scale(std::int64_t /*local*/, std::int64_t total,
                                     std::int64_t cp) const {
  return total > 0 ? static_cast<double>(cp) / static_cast<double>(total) : 0.0;
}

LossOutput SimImplementation::do_shifted_cp_loss(Comm& comm, const ShardLayout& layout,
                                                 const Tensor& logits, const Tensor& labels,
                                                 const Tensor& valid, std::int64_t depth) {
  const std::int64_t rows = layout.rows, len = layout.local_len();
  const std::int64_t vocab = logits.size(2);
  const std::vector<std::vector<Target>> targets = resolve_targets(comm, layout, labels, depth);
  std::vector<std::vector<LossToken>> tokens(static_cast<std::size_t>(rows));
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      LossToken token{.valid = !valid.defined() || valid.get(b * len + k) != 0.0,
                      .target = targets[b][k],
                      .contributes = false};
      token.contributes = token_contributes(token);
      tokens[b].push_back(token);
    }
  }
  LossOutput out;
  out.contributing_local = count_contributing(tokens);
  out.contributing_total = total_contributing(comm, out.contributing_local);
  const double scale = loss_scale(out.contributing_local, out.contributing_total, layout.cp);
  // f32 logits are read where they are; other dtypes once widened.
  const Tensor widened = logits.dtype() == DType::f32 ? Tensor() : logits.to(DType::f32);
  const float* z_all = (logits.dtype() == DType::f32 ? logits : widened).data<float>().data();
  out.grad = Tensor(DType::f32, {rows, len, vocab}, Uninitialized{});
  float* grad = out.grad.data<float>().data();
  double total = 0.0;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      const LossToken& token = tokens[b][k];
      const std::int64_t at = (b * len + k) * vocab;
      if (!token.contributes) {
        std::fill_n(grad + at, vocab, 0.0f);
        continue;
      }
      const std::int64_t y = token.target.label;
      CPLAB_CHECK(y >= 0 && y < vocab,
                  "shifted_cp_loss: row {} slot {}: target label {} outside the vocabulary [0, {})",
                  b, layout.index[b][k], y, vocab);
      // The next row of logits (the kernel fetches it while it computes this one).
      const float* next = b * len + k + 1 < rows * len ? z_all + at + vocab : nullptr;
      total += cross_entropy_row(z_all + at, vocab, y, scale, grad + at, next);
    }
  }
  out.loss = total * scale;
  return out;
}

}  // namespace cplab::sim
