// shard, shard_primary_later and shard_token_tensor on the device. The partition (which slots a
// rank holds, positions, documents) is the sim's rank-local partition from the batch metadata;
// the device computes the index map from the closed form (checked against it) and moves the data.
#include <optional>

#include "core/error.hpp"
#include "gpu/host/pad_anchors.hpp"
#include "gpu/impl/device_layout.hpp"
#include "gpu/impl/gpu_implementation.hpp"
#include "gpu/impl/rank_context.hpp"
#include "gpu/impl/token_ops.hpp"
#include "gpu/kernels/pad_positions.hpp"
#include "layouts/partition.hpp"

namespace cplab::gpu {
namespace {

PositionElem position_elem(DType dtype, const std::string& key) {
  switch (dtype) {
    case DType::i64:
      return PositionElem::i64;
    case DType::i32:
      return PositionElem::i32;
    case DType::f32:
      return PositionElem::f32;
    default:
      break;
  }
  CPLAB_FAIL("gpu shard: key '{}' continues positions in {}; supported: i64, i32, f32", key,
             dtype_name(dtype));
}

// Caller rows [row_begin, row_begin + layout.rows) of `value` (or its one shared row), cut to this
// rank's tokens: caller tokens by their recorded caller positions, added slots `constant`, or
// continued positions when `anchors` is given.
Tensor shard_caller_rows(const std::string& key, const Tensor& value, std::int64_t seq_dim,
                         const ShardLayout& layout, std::int64_t row_begin, double constant,
                         const PadAnchors* anchors, Stream stream) {
  const TokenAxes axes = token_axes(value, seq_dim, "gpu shard");
  CPLAB_CHECK(axes.seq == layout.caller_len,
              "gpu shard: key '{}' {} has {} tokens on seq dim {}; the rows have S={}", key,
              tensor_brief(value), axes.seq, seq_dim, layout.caller_len);
  CPLAB_CHECK(axes.rows == 1 || row_begin + layout.rows <= axes.rows,
              "gpu shard: key '{}' {} has {} rows; the microbatch needs rows [{}, {})", key,
              tensor_brief(value), axes.rows, row_begin, row_begin + layout.rows);
  const std::int64_t local = layout.local_len();
  const DeviceBuffer src = upload_tensor(value, stream);
  const DeviceBuffer source = upload_rows(layout.caller_pos, stream);
  DeviceBuffer dst(static_cast<std::size_t>(axes.outer * layout.rows * local) * axes.token_bytes());
  const ErrorSlot bad(stream);
  TokenCopy c = token_copy(axes);
  c.src = src.get();
  c.dst = dst.get();
  c.rows = layout.rows;
  c.src_row_begin = axes.rows == 1 ? 0 : row_begin;
  c.src_tokens = axes.seq;
  c.dst_tokens = local;
  c.source = source.as<std::int64_t>();
  c.source_rows = layout.rows;
  c.fill = fill_of(value.dtype(), constant);
  c.bad = bad.get();
  copy_tokens(c, stream);
  DeviceBuffer anchor, delta;
  if (anchors != nullptr) {
    anchor = upload_vector(anchors->anchor, stream);
    delta = upload_vector(anchors->delta, stream);
    continue_positions({.dst = dst.get(),
                        .src = src.get(),
                        .elem = position_elem(value.dtype(), key),
                        .outer = axes.outer,
                        .rows = layout.rows,
                        .src_rows = axes.rows,
                        .src_row_begin = c.src_row_begin,
                        .src_tokens = axes.seq,
                        .local = local,
                        .inner = axes.inner,
                        .anchor = anchor.as<std::int64_t>(),
                        .delta = delta.as<std::int64_t>()},
                       stream);
  }
  check_sources(bad, stream, "shard");
  return download_tensor(dst, value.dtype(), token_shape(value, seq_dim, layout.rows, local),
                         stream);
}

// SPEC §2 value of an added slot for constant and pad-token keys (continued positions: see
// anchors).
double pad_constant(const TokenField& field, const ShardLayout& layout) {
  if (field.rule == PadRule::pad_token) {
    return layout.pad_policy == PadPolicy::zero ? 0.0 : static_cast<double>(layout.pad_token_id);
  }
  return field.rule == PadRule::continue_positions ? 0.0 : field.pad_value;
}

Tensor positions_of(const ShardLayout& layout) {
  Tensor positions(DType::i64, {layout.rows, layout.local_len()});
  auto out = positions.data<std::int64_t>();
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    for (std::int64_t k = 0; k < layout.local_len(); ++k) {
      const bool added = layout.caller_pos[b][k] < 0;
      out[b * layout.local_len() + k] =
          layout.pad_policy == PadPolicy::zero && added ? 0 : layout.positions[b][k];
    }
  }
  return positions;
}

}  // namespace

std::vector<RankShard> GpuImplementation::do_shard(Comm& comm, const LayoutSpec& spec,
                                                   const Batch& batch) {
  RankContext ctx(comm, kind_);
  const std::vector<sim::MicrobatchRows> micro = sim::microbatch_rows(spec, batch);
  const std::string primary = batch.primary();
  const std::int64_t per = batch.rows() / spec.microbatches;
  std::vector<RankShard> out;
  for (std::int64_t m = 0; m < spec.microbatches; ++m) {
    RankShard shard{.local = {}, .layout = sim::partition_rank(spec, ctx.rank(), micro[m])};
    const ShardLayout& layout = shard.layout;
    const DeviceLayout device_layout(layout, ctx.rank(), ctx.stream(),
                                     micro[m].packed ? &micro[m].seq_lens : nullptr);
    std::optional<PadAnchors> anchors;
    for (const auto& [name, field] : batch.tokens) {
      TokenField local = field;
      const bool shared = field.value.size(field.seq_dim - 1) != batch.rows();
      if (name == primary && !spec.shard_primary) {
        // Kept global in caller coordinates for later splicing (SPEC §4): this microbatch's rows.
        if (!shared) local.value = slice_rows(field.value, field.seq_dim, m * per, (m + 1) * per);
      } else {
        const bool continued =
            field.rule == PadRule::continue_positions && layout.pad_policy != PadPolicy::zero;
        if (continued && !anchors) {
          anchors = continue_anchors(sim::stream_slots(sim::row_stream(spec, micro[m])).caller_pos,
                                     layout.index[0]);
        }
        local.value = shard_caller_rows(name, field.value, field.seq_dim, layout, m * per,
                                        pad_constant(field, layout),
                                        continued ? &*anchors : nullptr, ctx.stream());
      }
      shard.local.tokens[name] = std::move(local);
    }
    if (!batch.has(keys::position_ids)) shard.local.add(keys::position_ids, positions_of(layout));
    shard.local.passthrough = batch.passthrough;
    out.push_back(std::move(shard));
  }
  return out;
}

Tensor GpuImplementation::do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                                 const Batch& micro_batch) {
  RankContext ctx(comm, kind_);
  const std::string primary = micro_batch.primary();
  const TokenField& field = micro_batch.tokens.at(primary);
  CPLAB_CHECK(field.rule != PadRule::continue_positions,
              "gpu shard_primary_later: primary '{}' cannot continue positions", primary);
  const DeviceLayout device_layout(layout, ctx.rank(), ctx.stream());
  return shard_caller_rows(primary, field.value, field.seq_dim, layout, 0,
                           pad_constant(field, layout), nullptr, ctx.stream());
}

Tensor GpuImplementation::do_shard_token_tensor(Comm& comm, const ShardLayout& layout,
                                                const Tensor& value, std::int64_t seq_dim,
                                                std::optional<double> fill) {
  RankContext ctx(comm, kind_);
  const DeviceLayout device_layout(layout, ctx.rank(), ctx.stream());
  const TokenAxes axes = token_axes(value, seq_dim, "gpu shard_token_tensor");
  // Packed rows of the caller's length are the caller's THD rows, even when L happens to be S.
  const bool caller_rows =
      axes.seq == layout.caller_len && (layout.packed || axes.seq != layout.padded_len);
  if (caller_rows) {
    return shard_caller_rows("(tensor)", value, seq_dim, layout, 0, fill.value_or(0.0), nullptr,
                             ctx.stream());
  }
  // Global-length rows: local[k] = global[idx[k]], idx from the device's closed-form map.
  const std::int64_t local = layout.local_len();
  const DeviceBuffer src = upload_tensor(value, ctx.stream());
  DeviceBuffer dst(static_cast<std::size_t>(axes.outer * axes.rows * local) * axes.token_bytes());
  const ErrorSlot bad(ctx.stream());
  TokenCopy c = token_copy(axes);
  c.src = src.get();
  c.dst = dst.get();
  c.src_tokens = axes.seq;
  c.dst_tokens = local;
  c.source = device_layout.index();
  c.bad = bad.get();
  copy_tokens(c, ctx.stream());
  check_sources(bad, ctx.stream(), "shard_token_tensor");
  return download_tensor(dst, value.dtype(), token_shape(value, seq_dim, axes.rows, local),
                         ctx.stream());
}

}  // namespace cplab::gpu
