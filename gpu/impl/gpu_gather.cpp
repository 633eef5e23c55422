// gather_token_tensor (and its backward) and gather_tokens on the device: the local shards are
// all-gathered in rank order, then every global slot reads its token through the closed-form
// inverse permutation (owner_map); caller coordinates read through the gathered caller positions.
#include <numeric>

#include "core/error.hpp"
#include "gpu/impl/device_layout.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"
#include "gpu/kernels/gather_tokens.hpp"
#include "gpu/kernels/index_map.hpp"

namespace cplab::gpu {
namespace {

// Every rank's caller positions, per row in rank order: device [rows][C·ℓ] (-1 = an added slot).
DeviceBuffer gathered_caller_positions(RankContext& ctx, const ShardLayout& layout) {
  const std::int64_t rows = layout.rows, local = layout.local_len(), cp = ctx.size();
  const DeviceBuffer mine = upload_rows(layout.caller_pos, ctx.stream());
  DeviceBuffer blocks(static_cast<std::size_t>(cp * rows * local) * sizeof(std::int64_t));
  ctx.all_gather(mine, blocks, static_cast<std::size_t>(rows * local), DType::i64);
  // [C][rows][ℓ] → [rows][C·ℓ]: the token copy with an identity index turns blocks into rows.
  std::vector<std::int64_t> identity(static_cast<std::size_t>(cp * local));
  std::iota(identity.begin(), identity.end(), 0);
  const DeviceBuffer source = upload_vector(identity, ctx.stream());
  DeviceBuffer plain(blocks.bytes());
  TokenCopy c{.src = blocks.get(),
              .dst = plain.get(),
              .outer = 1,
              .rows = rows,
              .src_rows = rows,
              .token_bytes = sizeof(std::int64_t),
              .element_bytes = sizeof(std::int64_t),
              .src_tokens = cp * local,
              .src_block = local,
              .dst_tokens = cp * local,
              .source = source.as<std::int64_t>()};
  copy_tokens(c, ctx.stream());
  synchronize(ctx.stream());
  return plain;
}

}  // namespace

Tensor GpuImplementation::do_gather_token_tensor(Comm& comm, const ShardLayout& layout,
                                                 const Tensor& local, std::int64_t seq_dim,
                                                 bool trim) {
  RankContext ctx(comm, kind_);
  const TokenAxes axes = token_axes(local, seq_dim, "gpu gather_token_tensor");
  const DeviceLayout device_layout(layout, ctx.rank(), ctx.stream());
  const std::int64_t cp = ctx.size(), len = layout.local_len();
  const DeviceBuffer mine = upload_tensor(local, ctx.stream());
  DeviceBuffer gathered(local.nbytes() * static_cast<std::size_t>(cp));
  ctx.all_gather(mine, gathered, local.nbytes(), DType::u8);

  const std::int64_t out_len = trim ? layout.caller_len : layout.padded_len;
  DeviceBuffer source, callers;
  if (trim) {
    callers = gathered_caller_positions(ctx, layout);
    source = DeviceBuffer(static_cast<std::size_t>(layout.rows * out_len) * sizeof(std::int64_t));
    const ErrorSlot bad(ctx.stream());
    invert_positions(callers.as<std::int64_t>(), layout.rows, cp * len, source.as<std::int64_t>(),
                     out_len, bad.get(), ctx.stream());
    CPLAB_CHECK(bad.first_bad(ctx.stream()) < 0,
                "gpu gather_token_tensor: the ranks' caller positions are not a "
                "partial permutation of [0, S={})",
                out_len);
  } else {
    source = DeviceBuffer(static_cast<std::size_t>(out_len) * sizeof(std::int64_t));
    owner_map(device_layout.device_map(), source.as<std::int64_t>(), ctx.stream());
  }
  DeviceBuffer out(static_cast<std::size_t>(axes.outer * axes.rows * out_len) * axes.token_bytes());
  const ErrorSlot bad(ctx.stream());
  TokenCopy c = token_copy(axes);
  c.src = gathered.get();
  c.dst = out.get();
  c.src_tokens = cp * len;
  c.src_block = len;
  c.dst_tokens = out_len;
  c.source = source.as<std::int64_t>();
  c.source_rows = trim ? layout.rows : 1;
  c.bad = bad.get();
  copy_tokens(c, ctx.stream());  // caller slots no rank holds (thd's dropped caller padding) get 0
  check_sources(bad, ctx.stream(), "gather_token_tensor");
  return download_tensor(out, local.dtype(), token_shape(local, seq_dim, axes.rows, out_len),
                         ctx.stream());
}

Tensor GpuImplementation::do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                                          const Tensor& grad_gathered,
                                                          std::int64_t seq_dim, bool trim) {
  RankContext ctx(comm, kind_);
  const TokenAxes axes = token_axes(grad_gathered, seq_dim, "gpu gather_token_tensor_backward");
  const DeviceLayout device_layout(layout, ctx.rank(), ctx.stream());
  const std::int64_t cp = ctx.size(), len = layout.local_len();
  // Block p: this rank's gradient at rank p's tokens; the reduce-scatter sums block r to rank r.
  DeviceBuffer source;
  if (trim) {
    source = gathered_caller_positions(ctx, layout);
  } else {
    source = DeviceBuffer(static_cast<std::size_t>(cp * len) * sizeof(std::int64_t));
    index_map(device_layout.device_map(), 0, cp, source.as<std::int64_t>(), ctx.stream());
  }
  const DeviceBuffer grad = upload_tensor(grad_gathered, ctx.stream());
  const std::size_t local_bytes =
      static_cast<std::size_t>(axes.outer * axes.rows * len) * axes.token_bytes();
  DeviceBuffer blocks(local_bytes * static_cast<std::size_t>(cp)), mine(local_bytes);
  const ErrorSlot bad(ctx.stream());
  TokenCopy c = token_copy(axes);
  c.src = grad.get();
  c.dst = blocks.get();
  c.src_tokens = axes.seq;
  c.dst_tokens = cp * len;
  c.dst_block = len;
  c.source = source.as<std::int64_t>();
  c.source_rows = trim ? layout.rows : 1;
  c.bad = bad.get();
  copy_tokens(c, ctx.stream());  // slots the trim dropped (padding) get no gradient
  check_sources(bad, ctx.stream(), "gather_token_tensor_backward");
  ctx.reduce_scatter(blocks, mine,
                     static_cast<std::size_t>(axes.outer * axes.rows * len * axes.inner),
                     grad_gathered.dtype(), ReduceOp::sum);
  return download_tensor(mine, grad_gathered.dtype(),
                         token_shape(grad_gathered, seq_dim, axes.rows, len), ctx.stream());
}

Tensor GpuImplementation::do_gather_tokens(Comm& comm, const Tensor& local) {
  RankContext ctx(comm, kind_);
  const DeviceBuffer mine = upload_tensor(local, ctx.stream());
  DeviceBuffer all(local.nbytes() * static_cast<std::size_t>(ctx.size()));
  // Counts are checked by the comm: ranks with other local lengths get an error, not a hang.
  ctx.all_gather(mine, all, local.nbytes(), DType::u8);
  Shape shape = local.shape();
  shape[0] *= ctx.size();
  return download_tensor(all, local.dtype(), shape, ctx.stream());
}

Tensor GpuImplementation::do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) {
  RankContext ctx(comm, kind_);
  const DeviceBuffer grad = upload_tensor(grad_gathered, ctx.stream());
  Shape shape = grad_gathered.shape();
  shape[0] /= ctx.size();
  DeviceBuffer mine(grad_gathered.nbytes() / static_cast<std::size_t>(ctx.size()));
  ctx.reduce_scatter(grad, mine, static_cast<std::size_t>(shape_numel(shape)),
                     grad_gathered.dtype(), ReduceOp::sum);
  return download_tensor(mine, grad_gathered.dtype(), shape, ctx.stream());
}

}  // namespace cplab::gpu
