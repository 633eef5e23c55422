// The Ulysses head all-to-all (SPEC §10.5) on the device: the index maps are all-gathered, the
// routes of layouts/ulysses_route.hpp (the twin's own index arrays) are uploaded, and one
// token-copy launch packs the send buffer, one all-to-all over the rank context exchanges it, and
// one more launch places what arrived. A head slice (d elements) is the copy kernel's token.
#include <algorithm>

#include "core/error.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"
#include "layouts/ulysses_route.hpp"

namespace cplab::gpu {
namespace {

sim::UlyssesGroup group_for(RankContext& ctx, const ShardLayout& layout, const UlyssesHeads& heads,
                            HeadKind kind, const char* verb) {
  sim::UlyssesGroup g = sim::ulysses_group(
      layout, heads, kind, ctx.size(), ctx.rank(),
      [&](std::int64_t u) { return sim::standard_heads_of(heads, kind, ctx.size(), u); }, verb);
  const std::vector<std::int64_t> mine = sim::flat_index_map(layout, verb);
  const DeviceBuffer mine_on_device = upload_vector(mine, ctx.stream());
  DeviceBuffer all(mine.size() * sizeof(std::int64_t) * static_cast<std::size_t>(g.group));
  ctx.all_gather(mine_on_device, all, mine.size(), DType::i64);
  g.maps = download_vector<std::int64_t>(all, mine.size() * static_cast<std::size_t>(g.group),
                                         ctx.stream());
  sim::check_index_maps(g, verb);
  return g;
}

// dst slice i = src slice source[i] (zeros for -1) on the device.
void move_slices(const DeviceBuffer& src, std::int64_t src_slices, DeviceBuffer& dst,
                 const std::vector<std::int64_t>& source, std::int64_t slice_bytes,
                 std::int64_t element_bytes, Stream stream, const char* verb) {
  if (source.empty() || slice_bytes == 0) return;
  const DeviceBuffer index = upload_vector(source, stream);
  const ErrorSlot bad(stream);
  TokenCopy c;
  c.src = src.get();
  c.dst = dst.get();
  c.token_bytes = slice_bytes;
  c.element_bytes = element_bytes;
  c.src_tokens = src_slices;
  c.dst_tokens = static_cast<std::int64_t>(source.size());
  c.source = index.as<std::int64_t>();
  c.bad = bad.get();
  copy_tokens(c, stream);
  check_sources(bad, stream, verb);
}

Tensor exchange(RankContext& ctx, const sim::UlyssesGroup& g, const sim::UlyssesRoute& route,
                const Tensor& src, Shape out_shape, std::int64_t d, const char* verb) {
  const auto es = static_cast<std::int64_t>(dtype_size(src.dtype()));
  const std::int64_t slice_bytes = d * es;
  const std::size_t send_bytes = route.send_source.size() * static_cast<std::size_t>(slice_bytes);
  const DeviceBuffer in = upload_tensor(src, ctx.stream());
  DeviceBuffer send(send_bytes), recv(send_bytes);
  move_slices(in, src.numel() / std::max<std::int64_t>(d, 1), send, route.send_source, slice_bytes,
              es, ctx.stream(), verb);
  ctx.all_to_all(send, recv, static_cast<std::size_t>(g.block() * d), src.dtype());
  const std::int64_t out_elems = shape_numel(out_shape);
  DeviceBuffer out(static_cast<std::size_t>(out_elems * es));
  move_slices(recv, static_cast<std::int64_t>(route.send_source.size()), out, route.out_source,
              slice_bytes, es, ctx.stream(), verb);
  return download_tensor(out, src.dtype(), std::move(out_shape), ctx.stream());
}

}  // namespace

std::string GpuImplementation::ulysses_unsupported() const { return {}; }

Tensor GpuImplementation::do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout,
                                                const Tensor& local, const UlyssesHeads& heads,
                                                HeadKind kind) {
  const char* verb = "gpu ulysses_all_to_all";
  RankContext ctx(comm, kind_);
  const sim::UlyssesGroup g = group_for(ctx, layout, heads, kind, verb);
  const std::int64_t d = local.size(3);
  return exchange(ctx, g, sim::forward_route(g), local, {g.rows, g.padded_len, g.mine(), d}, d,
                  verb);
}

Tensor GpuImplementation::do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                                        const Tensor& gathered,
                                                        const UlyssesHeads& heads, HeadKind kind) {
  const char* verb = "gpu ulysses_all_to_all_inverse";
  RankContext ctx(comm, kind_);
  const sim::UlyssesGroup g = group_for(ctx, layout, heads, kind, verb);
  const std::int64_t d = gathered.size(3);
  return exchange(ctx, g, sim::inverse_route(g, verb), gathered,
                  {g.rows, g.local_len, g.local_heads, d}, d, verb);
}

}  // namespace cplab::gpu
