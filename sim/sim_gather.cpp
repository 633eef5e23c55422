// gather_token_tensor and gather_tokens with their backwards (SPEC §5): all-gather the shards and
// the index maps, put every token back at its global slot; the backward sums every rank's
// gradient of a token back to its owner by reduce-scatter.
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "core/map_checks.hpp"
#include "core/token_moves.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {
namespace {

// Every rank's `local` all-gathered into [outer, B, C·ℓ, inner]: rank p's tokens at p·ℓ + k. With
// one row (and no outer dims) the all-gather already leaves that order, so it lands in place.
Tensor all_gather_rank_ordered(Comm& comm, const Tensor& local, std::int64_t seq_dim) {
  const TokenAxes axes = token_axes(local, seq_dim, "gather_token_tensor");
  const std::int64_t cp = comm.size();
  Shape shape = local.shape();
  shape[static_cast<std::size_t>(seq_dim)] = cp * axes.seq;
  Tensor out(local.dtype(), shape, Uninitialized{});
  if (axes.outer * axes.rows == 1) {
    comm.all_gather(bytes_of(local), bytes_of(out), local.nbytes(), DType::u8);
    return out;
  }
  // [C][outer, B, ℓ, inner] as all-gathered, then each rank's rows to their place.
  const auto gathered =
      std::make_unique_for_overwrite<std::byte[]>(local.nbytes() * static_cast<std::size_t>(cp));
  comm.all_gather(bytes_of(local), {gathered.get(), local.nbytes() * static_cast<std::size_t>(cp)},
                  local.nbytes(), DType::u8);
  const TokenAxes wide = token_axes(out, seq_dim, "gather_token_tensor");
  const std::size_t token = axes.token_bytes();
  if (token == 0) return out;
  for (std::int64_t p = 0; p < cp; ++p) {
    const std::byte* block = gathered.get() + static_cast<std::size_t>(p) * local.nbytes();
    for (std::int64_t o = 0; o < axes.outer; ++o) {
      for (std::int64_t b = 0; b < axes.rows; ++b) {
        std::memcpy(out.raw() + wide.token(o, b, p * axes.seq) * token,
                    block + axes.token(o, b, 0) * token,
                    static_cast<std::size_t>(axes.seq) * token);
      }
    }
  }
  return out;
}

// Whether every row's map sends position j to j (nothing to reorder or trim).
bool identity_maps(const RowMaps& maps) {
  for (const auto& map : maps) {
    for (std::size_t j = 0; j < map.size(); ++j) {
      if (map[j] != static_cast<std::int64_t>(j)) return false;
    }
  }
  return true;
}

}  // namespace

SimImplementation::GatheredSlots SimImplementation::gather_slots(Comm& comm,
                                                                 const ShardLayout& layout) const {
  const std::int64_t rows = layout.rows, len = layout.local_len(), cp = comm.size();
  std::vector<std::int64_t> mine;  // [row][k][slot, caller position]
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t k = 0; k < len; ++k) {
      mine.push_back(layout.index[b][k]);
      mine.push_back(layout.caller_pos[b][k]);
    }
  }
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(cp));
  comm.all_gather(bytes_of(mine), bytes_of(all), mine.size(), DType::i64);
  GatheredSlots out;
  out.slot.assign(static_cast<std::size_t>(rows), {});
  out.caller_pos.assign(static_cast<std::size_t>(rows), {});
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t p = 0; p < cp; ++p) {
      for (std::int64_t k = 0; k < len; ++k) {
        const std::size_t at = 2 * static_cast<std::size_t>((p * rows + b) * len + k);
        out.slot[b].push_back(all[at]);
        out.caller_pos[b].push_back(all[at + 1]);
      }
    }
  }
  return out;
}

Tensor SimImplementation::reorder_to_global(
    const Tensor& rank_ordered_tokens, std::int64_t seq_dim,
    const std::vector<std::vector<std::int64_t>>& gathered_slots) const {
  const TokenAxes axes = token_axes(rank_ordered_tokens, seq_dim, "gather_token_tensor");
  return place_tokens(rank_ordered_tokens, seq_dim, gathered_slots, axes.seq);
}

Tensor SimImplementation::do_gather_token_tensor(Comm& comm, const ShardLayout& layout,
                                                 const Tensor& local, std::int64_t seq_dim,
                                                 bool trim) {
  const GatheredSlots slots = gather_slots(comm, layout);
  Tensor global =
      reorder_to_global(all_gather_rank_ordered(comm, local, seq_dim), seq_dim, slots.slot);
  if (!trim) return global;
  // Caller coordinates: each caller position from the slot that holds it; the caller's own slots
  // that no global slot maps back to (thd drops the caller's document padding) stay 0.
  RowMaps caller_to_global(
      static_cast<std::size_t>(layout.rows),
      std::vector<std::int64_t>(static_cast<std::size_t>(layout.caller_len), -1));
  for (std::int64_t b = 0; b < layout.rows; ++b) {
    // Every rank checked its own caller positions against its own S; this rank's S is the one
    // they index here.
    const MapFault fault = find_map_fault(slots.caller_pos[b], -1, layout.caller_len, false);
    CPLAB_CHECK(!fault, "gather_token_tensor: row {}: the gathered caller positions: {}", b,
                describe_map_fault(fault, -1, layout.caller_len));
    for (std::size_t j = 0; j < slots.slot[b].size(); ++j) {
      if (slots.caller_pos[b][j] >= 0)
        caller_to_global[b][slots.caller_pos[b][j]] = slots.slot[b][j];
    }
  }
  // No slot added and none moved: the global stream already is the caller's.
  if (layout.caller_len == layout.padded_len && identity_maps(caller_to_global)) return global;
  return take_tokens(global, seq_dim, caller_to_global, layout.caller_len);
}

Tensor SimImplementation::reduce_token_gradient(Comm& comm, const Tensor& blocks) const {
  const std::int64_t count = blocks.size(1);
  Tensor mine(blocks.dtype(), {count});
  comm.reduce_scatter(bytes_of(blocks), bytes_of(mine), static_cast<std::size_t>(count),
                      blocks.dtype(), ReduceOp::sum);
  return mine;
}

Tensor SimImplementation::do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                                          const Tensor& grad_gathered,
                                                          std::int64_t seq_dim, bool trim) {
  const GatheredSlots slots = gather_slots(comm, layout);
  // Block p: this rank's gradient at rank p's tokens (slots the trim dropped got none).
  const std::int64_t cp = comm.size(), len = layout.local_len();
  Tensor blocks;
  Shape local_shape;
  for (std::int64_t p = 0; p < cp; ++p) {
    RowMaps maps(static_cast<std::size_t>(layout.rows));
    for (std::int64_t b = 0; b < layout.rows; ++b) {
      const auto& source = trim ? slots.caller_pos[b] : slots.slot[b];
      maps[b].assign(source.begin() + p * len, source.begin() + (p + 1) * len);
    }
    const Tensor block = take_tokens(grad_gathered, seq_dim, maps, len);
    if (p == 0) {
      local_shape = block.shape();
      blocks = Tensor(block.dtype(), {cp, block.numel()});
    }
    std::memcpy(blocks.raw() + static_cast<std::size_t>(p) * block.nbytes(), block.raw(),
                block.nbytes());
  }
  return reduce_token_gradient(comm, blocks).reshaped(local_shape);
}

Tensor SimImplementation::do_gather_tokens(Comm& comm, const Tensor& local) {
  Shape shape = local.shape();
  shape[0] *= comm.size();
  Tensor out(local.dtype(), shape);
  comm.all_gather(bytes_of(local), bytes_of(out), static_cast<std::size_t>(local.numel()),
                  local.dtype());
  return out;
}

Tensor SimImplementation::reduce_gathered_gradient(Comm& comm, const Tensor& grad_gathered) const {
  Shape shape = grad_gathered.shape();
  shape[0] /= comm.size();
  Tensor mine(grad_gathered.dtype(), shape);
  comm.reduce_scatter(bytes_of(grad_gathered), bytes_of(mine),
                      static_cast<std::size_t>(mine.numel()), grad_gathered.dtype(), ReduceOp::sum);
  return mine;
}

Tensor SimImplementation::do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) {
  return reduce_gathered_gradient(comm, grad_gathered);
}

}  // namespace cplab::sim
