// shifted_cp_loss on the device (SPEC §6). The host plans which labels cross ranks from the
// closed-form map (gpu/host/shifted_target.hpp); the device packs them, one all-to-all moves them
// to the owners' neighbours, the device picks every token's target with the same map, the count is
// summed over the group, and the fused kernel writes loss and gradient in one pass per row.
#include "core/error.hpp"
#include "gpu/host/shifted_target.hpp"
#include "gpu/impl/device_layout.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"
#include "gpu/kernels/loss_shifted_ce.hpp"

namespace cplab::gpu {
namespace {

struct Exchange {
  std::int64_t width = 0;  // slots per (peer, row): the largest any pair needs
  std::vector<std::int64_t>
      send_k;  // [C][width]: local token whose label goes to peer p, -1 unused
  std::vector<std::int64_t> recv_index;
};

Exchange plan_exchange(RankContext& ctx, const DeviceLayout& layout, std::int64_t depth) {
  const TargetExchange plan = visit_map(layout.host_map(), [&](auto map) {
    return plan_target_exchange(map, ctx.rank(), layout.host_map().padded_len, depth);
  });
  // Every rank must use the same width: the largest message of any pair in the group.
  DeviceBuffer width(sizeof(std::int64_t));
  const std::int64_t mine = plan.max_send();
  width.upload(&mine, sizeof mine, ctx.stream());
  ctx.all_reduce(width, 1, DType::i64, ReduceOp::max);
  Exchange out;
  width.download(&out.width, sizeof out.width, ctx.stream());
  out.send_k.assign(static_cast<std::size_t>(ctx.size() * out.width), -1);
  for (std::size_t p = 0; p < plan.send.size(); ++p) {
    for (std::size_t i = 0; i < plan.send[p].size(); ++i)
      out.send_k[p * out.width + i] = plan.send[p][i];
  }
  out.recv_index = plan.recv_index;
  return out;
}

LossElem loss_elem(DType dtype) {
  CPLAB_CHECK(dtype == DType::f32 || dtype == DType::bf16,
              "gpu shifted_cp_loss: logits are {}; supported: f32, bf16", dtype_name(dtype));
  return dtype == DType::f32 ? LossElem::f32 : LossElem::bf16;
}

}  // namespace

LossOutput GpuImplementation::do_shifted_cp_loss(Comm& comm, const ShardLayout& layout,
                                                 const Tensor& logits, const Tensor& labels,
                                                 const Tensor& valid, std::int64_t depth) {
  RankContext ctx(comm, kind_);
  const std::int64_t rows = layout.rows, len = layout.local_len(), cp = ctx.size();
  // The kernels read a flag for every token, one byte each: the mask the contract leaves optional
  // (and of any dtype, as the twin reads it) must be here, as bool or u8.
  CPLAB_CHECK(valid.defined() && (valid.dtype() == DType::b8 || valid.dtype() == DType::u8),
              "gpu shifted_cp_loss: valid {} is not [B·ℓ={}] of bool or u8", tensor_brief(valid),
              rows * len);
  const std::int64_t vocab = logits.size(2);
  const LossElem elem = loss_elem(logits.dtype());
  const Stream s = ctx.stream();
  const DeviceLayout device_layout(layout, ctx.rank(), s);

  const DeviceBuffer d_labels = upload_tensor(labels.to(DType::i64), s);
  const DeviceBuffer d_valid = upload_tensor(valid, s);  // b8 and u8 are both one byte of 0 or 1
  std::vector<std::int32_t> docs;
  for (const auto& row : layout.doc_ids) docs.insert(docs.end(), row.begin(), row.end());
  const DeviceBuffer d_docs = upload_vector(docs, s);

  // The labels that live on other ranks: packed per (peer, row), exchanged in one all-to-all.
  const Exchange ex = plan_exchange(ctx, device_layout, depth);
  const std::size_t message =
      static_cast<std::size_t>(rows * ex.width * 2);  // (label, document) pairs
  DeviceBuffer sent(message * static_cast<std::size_t>(cp) * sizeof(std::int64_t)),
      received(sent.bytes());
  if (ex.width > 0) {
    const DeviceBuffer send_k = upload_vector(ex.send_k, s);
    pack_target_labels(d_labels.as<std::int64_t>(), d_docs.as<std::int32_t>(), rows, len,
                       send_k.as<std::int64_t>(), cp, ex.width, sent.as<std::int64_t>(), s);
    ctx.all_to_all(sent, received, message, DType::i64);
  }

  const DeviceBuffer recv_index = upload_vector(ex.recv_index, s);
  DeviceBuffer targets(static_cast<std::size_t>(rows * len) * sizeof(std::int64_t));
  DeviceBuffer count(sizeof(std::int64_t));
  count.fill_bytes(0, s);
  const ErrorSlot bad(s);
  shifted_targets({.map = device_layout.device_map(),
                   .rank = ctx.rank(),
                   .rows = rows,
                   .depth = depth,
                   .packed = layout.packed,
                   .labels = d_labels.as<std::int64_t>(),
                   .doc_ids = d_docs.as<std::int32_t>(),
                   .valid = d_valid.as<std::uint8_t>(),
                   .recv_index = recv_index.as<std::int64_t>(),
                   .received = received.as<std::int64_t>(),
                   .width = ex.width,
                   .vocab = vocab,
                   .targets = targets.as<std::int64_t>(),
                   .count = count.as<std::int64_t>(),
                   .bad = bad.get()},
                  s);
  const std::int64_t first_bad = bad.first_bad(s);
  CPLAB_CHECK(first_bad < 0,
              "gpu shifted_cp_loss: the target of local token {} of row {} is outside [0, V={})",
              first_bad % std::max<std::int64_t>(len, 1),
              first_bad / std::max<std::int64_t>(len, 1), vocab);

  LossOutput out;
  count.download(&out.contributing_local, sizeof(std::int64_t), s);
  ctx.all_reduce(count, 1, DType::i64, ReduceOp::sum);  // N: ranks hold disjoint tokens
  count.download(&out.contributing_total, sizeof(std::int64_t), s);
  const double scale = out.contributing_total > 0
                           ? static_cast<double>(cp) / static_cast<double>(out.contributing_total)
                           : 0.0;

  const DeviceBuffer d_logits = upload_tensor(logits, s);
  DeviceBuffer grad(static_cast<std::size_t>(rows * len * vocab) * sizeof(float));
  DeviceBuffer row_loss(static_cast<std::size_t>(rows * len) * sizeof(float)), sum(sizeof(double));
  fused_shifted_ce({.logits = d_logits.get(),
                    .logits_elem = elem,
                    .grad = grad.get(),
                    .grad_elem = LossElem::f32,
                    .rows = rows * len,
                    .vocab = vocab,
                    .targets = targets.as<std::int64_t>(),
                    .scale = static_cast<float>(scale),
                    .row_loss = row_loss.as<float>()},
                   s);
  sum_in_order(row_loss.as<float>(), rows * len, sum.as<double>(), s);
  double ce_sum = 0.0;
  sum.download(&ce_sum, sizeof ce_sum, s);
  out.loss = ce_sum * scale;
  out.grad = download_tensor(grad, DType::f32, {rows, len, vocab}, s);
  return out;
}

}  // namespace cplab::gpu
