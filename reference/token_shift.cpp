// Shifts within documents on the unsharded stream (SPEC §6.1), slot by slot from the plan's
// document ids: no index map is read, so the twin's and the GPU's maps are checked against it.
#include "reference/token_shift.hpp"

#include <cstring>

#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/token_moves.hpp"

namespace cplab::reference {

// A document is one run of equal ids in its row, so the slot k ahead is in the same document
// exactly when its id is g's: every slot between is then in it too.
std::int64_t target_slot(const RowPlan& row, std::int64_t g, std::int64_t depth) {
  if (depth >= row.padded_len - g) return -1;  // g + depth past the stream (never overflowing)
  const std::int64_t ahead = g + depth;
  if (row.packed && (row.doc_ids[g] == 0 || row.doc_ids[ahead] != row.doc_ids[g])) return -1;
  return ahead;
}

Tensor shift_global(const ShardPlan& plan, const Tensor& global, std::int64_t seq_dim,
                    std::int64_t depth, double fill) {
  CPLAB_CHECK(depth >= 1, "the shift depth must be at least 1, not {}", depth);
  CPLAB_CHECK(holds_exactly(global.dtype(), fill), "the shift's fill {} is not a {} value", fill,
              dtype_name(global.dtype()));
  const TokenAxes axes = token_axes(global, seq_dim, "shift_global");
  CPLAB_CHECK(axes.rows == static_cast<std::int64_t>(plan.rows.size()) &&
                  axes.seq == plan.rows.front().padded_len,
              "shift_global: {} is not [B={}, L={}] on seq dim {}", tensor_brief(global),
              plan.rows.size(), plan.rows.front().padded_len, seq_dim);
  Tensor out(global.dtype(), global.shape(), Uninitialized{});
  Tensor fill_token(global.dtype(), {axes.inner}, Uninitialized{});
  for (std::int64_t e = 0; e < axes.inner; ++e) fill_token.set(e, fill);
  const std::size_t token = axes.token_bytes();
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    for (std::int64_t b = 0; b < axes.rows; ++b) {
      const RowPlan& row = plan.rows[static_cast<std::size_t>(b)];
      for (std::int64_t g = 0; g < axes.seq; ++g) {
        // A slot the layout added holds no caller token: its value is not the stream's to give.
        std::int64_t from = target_slot(row, g, depth);
        if (from >= 0 && row.caller_pos[static_cast<std::size_t>(from)] < 0) from = -1;
        const std::byte* source =
            from < 0 ? fill_token.raw() : global.raw() + axes.token(o, b, from) * token;
        std::memcpy(out.raw() + axes.token(o, b, g) * token, source, token);
      }
    }
  }
  return out;
}

}  // namespace cplab::reference
