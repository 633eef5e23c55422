// shard, shard_primary_later and shard_token_tensor (SPEC §2, §4, §5): each rank cuts its own
// tokens out of the batch every rank was given, by its recorded caller positions, and fills the
// slots the layout added per key.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/token_moves.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {
namespace {

// For continued position ids: the nearest earlier slot holding a caller token, per stream slot
// (-1: none), so a slot the layout added continues it as last+1, last+2, ...
std::vector<std::int64_t> last_caller_slot(const StreamSlots& slots) {
  std::vector<std::int64_t> last(slots.caller_pos.size(), -1);
  std::int64_t seen = -1;
  for (std::size_t g = 0; g < last.size(); ++g) {
    last[g] = seen;
    if (slots.caller_pos[g] >= 0) seen = static_cast<std::int64_t>(g);
  }
  return last;
}

}  // namespace

double SimImplementation::pad_value(const std::string& /*key*/, const TokenField& field,
                                    const ShardLayout& layout) const {
  if (field.rule == PadRule::pad_token) {
    return layout.pad_policy == PadPolicy::zero ? 0.0 : static_cast<double>(layout.pad_token_id);
  }
  return field.pad_value;
}

// One key of one microbatch: caller tokens by caller position, added slots by the key's pad rule.
// `stream` (for continued positions) is the stream of the microbatch's rows, null when unknown.
Tensor SimImplementation::shard_field(const std::string& key, const TokenField& field,
                                      const ShardLayout& layout, const StreamSlots* stream) const {
  Tensor local = take_tokens(field.value, field.seq_dim, layout.caller_pos, layout.local_len());
  const TokenAxes axes = token_axes(local, field.seq_dim, "shard");
  const TokenAxes src = token_axes(field.value, field.seq_dim, "shard");
  const bool continued =
      field.rule == PadRule::continue_positions && layout.pad_policy != PadPolicy::zero;
  CPLAB_CHECK(!continued || stream != nullptr,
              "shard: key '{}' continues positions, which needs the stream", key);
  const std::vector<std::int64_t> last =
      continued ? last_caller_slot(*stream) : std::vector<std::int64_t>{};
  const double constant =
      field.rule == PadRule::continue_positions ? 0.0 : pad_value(key, field, layout);
  for (std::int64_t b = 0; b < axes.rows; ++b) {
    for (std::int64_t k = 0; k < axes.seq; ++k) {
      if (layout.caller_pos[b][k] >= 0) continue;
      const std::int64_t g = layout.index[b][k];
      const std::int64_t from = continued ? last[g] : -1;
      for (std::int64_t o = 0; o < axes.outer; ++o) {
        for (std::int64_t e = 0; e < axes.inner; ++e) {
          double value = constant;
          if (continued) {
            const std::int64_t src_row = src.rows == 1 ? 0 : b;
            value = from < 0
                        ? static_cast<double>(g)
                        : field.value.get(
                              src.token(o, src_row, stream->caller_pos[from]) * src.inner + e) +
                              static_cast<double>(g - from);
          }
          local.set(axes.token(o, b, k) * axes.inner + e, value);
        }
      }
    }
  }
  return local;
}

std::vector<RankShard> SimImplementation::do_shard(Comm& comm, const LayoutSpec& spec,
                                                   const Batch& batch) {
  const std::vector<MicrobatchRows> micro = microbatch_rows(spec, batch);
  const std::string primary = batch.primary();
  const std::int64_t per = batch.rows() / spec.microbatches;
  std::vector<RankShard> out;
  for (std::int64_t m = 0; m < spec.microbatches; ++m) {
    RankShard shard{.local = {}, .layout = partition_rank(spec, comm.rank(), micro[m], *this)};
    const StreamSlots slots = stream_slots(row_stream(spec, micro[m], *this));
    const Batch rows = slice_token_rows(batch, m * per, (m + 1) * per);
    for (const auto& [name, field] : rows.tokens) {
      TokenField local = field;
      // With shard_primary = false the primary stays global, in caller coordinates (SPEC §4).
      if (name != primary || spec.shard_primary)
        local.value = shard_field(name, field, shard.layout, &slots);
      shard.local.tokens[name] = std::move(local);
    }
    if (!rows.has(keys::position_ids)) {
      Tensor positions(DType::i64, {shard.layout.rows, shard.layout.local_len()});
      auto values = positions.data<std::int64_t>();
      const bool zero_policy = spec.pad_policy == PadPolicy::zero;
      for (std::int64_t b = 0; b < shard.layout.rows; ++b) {
        for (std::int64_t k = 0; k < shard.layout.local_len(); ++k) {
          const bool added = shard.layout.caller_pos[b][k] < 0;
          values[b * shard.layout.local_len() + k] =
              zero_policy && added ? 0 : shard.layout.positions[b][k];
        }
      }
      shard.local.add(keys::position_ids, std::move(positions));
    }
    shard.local.passthrough = rows.passthrough;
    out.push_back(std::move(shard));
  }
  return out;
}

Tensor SimImplementation::do_shard_primary_later(Comm& /*comm*/, const ShardLayout& layout,
                                                 const Batch& micro_batch) {
  const std::string primary = micro_batch.primary();
  return shard_field(primary, micro_batch.tokens.at(primary), layout, nullptr);
}

Tensor SimImplementation::do_shard_token_tensor(Comm& /*comm*/, const ShardLayout& layout,
                                                const Tensor& value, std::int64_t seq_dim,
                                                std::optional<double> fill) {
  const TokenAxes axes = token_axes(value, seq_dim, "shard_token_tensor");
  // Packed rows of the caller's length are the caller's THD rows, even when L happens to be S.
  const bool caller_rows =
      axes.seq == layout.caller_len && (layout.packed || axes.seq != layout.padded_len);
  if (!caller_rows) return take_tokens(value, seq_dim, layout.index, layout.local_len());
  const double padding = fill.value_or(0.0);  // packed caller rows without a fill: 0
  Tensor local = take_tokens(value, seq_dim, layout.caller_pos, layout.local_len());
  // take_tokens left the added slots +0 already; any other fill is one token's bytes, built once
  // and copied into each added slot.
  if (padding == 0.0 && !std::signbit(padding)) return local;
  const TokenAxes out = token_axes(local, seq_dim, "shard_token_tensor");
  const std::size_t token = out.token_bytes();
  if (token == 0) return local;
  Tensor pad_token(local.dtype(), {out.inner}, Uninitialized{});
  for (std::int64_t e = 0; e < out.inner; ++e) pad_token.set(e, padding);
  for (std::int64_t b = 0; b < out.rows; ++b) {
    for (std::int64_t k = 0; k < out.seq; ++k) {
      if (layout.caller_pos[b][k] >= 0) continue;
      for (std::int64_t o = 0; o < out.outer; ++o)
        std::memcpy(local.raw() + out.token(o, b, k) * token, pad_token.raw(), token);
    }
  }
  return local;
}

}  // namespace cplab::sim
