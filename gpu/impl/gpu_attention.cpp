// attention (SPEC §7) on the device: keys, values and their document metadata all-gathered from
// every rank, the document-causal mask from the closed-form index maps, and the K/V gradients
// summed back to their owners by a reduce-scatter (the gather_tokens backward).
#include "core/error.hpp"
#include "gpu/impl/device_layout.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"
#include "gpu/kernels/attention_doc_causal.hpp"
#include "gpu/kernels/index_map.hpp"
#include "layouts/partition.hpp"
#include "layouts/varlen_windows.hpp"

namespace cplab::gpu {
namespace {

template <typename T>
std::vector<T> flatten(const std::vector<std::vector<T>>& rows) {
  std::vector<T> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

// [B, ℓ, 2] key windows of a layout whose ranks attend through varlen segments (prepared on this
// rank from each row's document bounds, as the twin prepares them); empty for the others.
std::vector<std::int64_t> key_windows(const ShardLayout& layout) {
  std::vector<std::int64_t> flat;
  if (!sim::layout_descriptor(layout.layout).attention.varlen_segments) return flat;
  CPLAB_CHECK(static_cast<std::int64_t>(layout.cu_seqlens_padded.size()) == layout.rows,
              "gpu attention: {} attends through varlen segments, but the layout records no "
              "document bounds for its rows",
              layout.layout);
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    const VarlenSegments segments = sim::standard_rules().varlen_segments(
        layout.cu_seqlens_padded[b], layout.padded_len, layout.cp, layout.rank);
    for (const sim::KeyWindow& w :
         sim::query_key_windows(segments, layout.local_len(), layout.padded_len)) {
      flat.push_back(w.begin);
      flat.push_back(w.end);
    }
  }
  return flat;
}

}  // namespace

AttentionOutput GpuImplementation::do_attention(Comm& comm, const ShardLayout& layout,
                                                const Tensor& q, const Tensor& k, const Tensor& v,
                                                const Tensor& grad_out) {
  RankContext ctx(comm, kind_);
  const std::int64_t rows = layout.rows, len = layout.local_len(), cp = ctx.size();
  const Stream s = ctx.stream();
  const DeviceLayout device_layout(layout, ctx.rank(), s);
  const std::size_t local_bytes = q.nbytes(),
                    all_bytes = local_bytes * static_cast<std::size_t>(cp);
  const auto tokens = static_cast<std::size_t>(rows * len);

  const DeviceBuffer d_q = upload_tensor(q, s), d_k = upload_tensor(k, s),
                     d_v = upload_tensor(v, s);
  DeviceBuffer k_all(all_bytes), v_all(all_bytes);
  ctx.all_gather(d_k, k_all, static_cast<std::size_t>(k.numel()), DType::f32);
  ctx.all_gather(d_v, v_all, static_cast<std::size_t>(v.numel()), DType::f32);
  const DeviceBuffer docs = upload_vector(flatten(layout.doc_ids), s),
                     real = upload_vector(flatten(layout.real), s);
  DeviceBuffer docs_all(tokens * sizeof(std::int32_t) * static_cast<std::size_t>(cp)),
      real_all(tokens * static_cast<std::size_t>(cp));
  ctx.all_gather(docs, docs_all, tokens, DType::i32);
  ctx.all_gather(real, real_all, tokens, DType::u8);
  DeviceBuffer key_slot(static_cast<std::size_t>(cp * len) * sizeof(std::int64_t));
  index_map(device_layout.device_map(), 0, cp, key_slot.as<std::int64_t>(), s);
  const std::vector<std::int64_t> windows = key_windows(layout);
  const DeviceBuffer key_window = windows.empty() ? DeviceBuffer() : upload_vector(windows, s);
  const std::int64_t* windows_on_device = windows.empty() ? nullptr : key_window.as<std::int64_t>();

  const DocCausalAttention a{.rows = rows,
                             .local = len,
                             .cp = cp,
                             .head = q.size(2),
                             .q = d_q.as<float>(),
                             .k = k_all.as<float>(),
                             .v = v_all.as<float>(),
                             .query_slot = device_layout.index(),
                             .query_doc = docs.as<std::int32_t>(),
                             .query_real = real.as<std::uint8_t>(),
                             .key_slot = key_slot.as<std::int64_t>(),
                             .key_doc = docs_all.as<std::int32_t>(),
                             .key_real = real_all.as<std::uint8_t>(),
                             .key_window = windows_on_device};
  DeviceBuffer out(local_bytes), lse(tokens * sizeof(float));
  attention_forward(a, out.as<float>(), lse.as<float>(), s);

  const DeviceBuffer d_grad_out = upload_tensor(grad_out, s);
  DeviceBuffer grad_q(local_bytes), grad_k_all(all_bytes), grad_v_all(all_bytes),
      grad_k(local_bytes), grad_v(local_bytes);
  grad_k_all.fill_bytes(0, s);
  grad_v_all.fill_bytes(0, s);
  attention_backward(a, out.as<float>(), lse.as<float>(), d_grad_out.as<float>(),
                     grad_q.as<float>(), grad_k_all.as<float>(), grad_v_all.as<float>(), s);
  ctx.reduce_scatter(grad_k_all, grad_k, static_cast<std::size_t>(k.numel()), DType::f32,
                     ReduceOp::sum);
  ctx.reduce_scatter(grad_v_all, grad_v, static_cast<std::size_t>(v.numel()), DType::f32,
                     ReduceOp::sum);
  return {.out = download_tensor(out, DType::f32, q.shape(), s),
          .grad_q = download_tensor(grad_q, DType::f32, q.shape(), s),
          .grad_k = download_tensor(grad_k, DType::f32, q.shape(), s),
          .grad_v = download_tensor(grad_v, DType::f32, q.shape(), s)};
}

}  // namespace cplab::gpu
