#pragma once
// The one acceptance contract: which rows a layout takes under a spec, why it refuses one, and the
// nearest row it takes. It reads the descriptor's row kinds, CP-off flag, options and row rule
// (LayoutDescriptor::row_rule) and nothing else; the twin's stream (row_stream) refuses through
// it, and the generators, the shrinks, coverage and the tests ask it, never a layout's name.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {

// A row to judge, its documents borrowed: the twin's stream judges every row on every rank, and
// needs no copy of them for it.
struct RowView {
  std::int64_t seq_len = 0;
  bool packed = false;
  std::span<const std::int64_t> documents = {};
};

// A row as a layout is given it: its length S and, for a packed row, the slots each document
// occupies in it (the caller's padding included: seq_lens_padded, else seq_lens).
struct RowShape {
  std::int64_t seq_len = 0;
  bool packed = false;
  std::vector<std::int64_t> documents = {};
  bool operator==(const RowShape&) const = default;
  operator RowView() const { return {seq_len, packed, documents}; }  // NOLINT: a view of it
};

RowShape bshd_row(std::int64_t seq_len);
// seq_len < 0: the documents' slots back to back.
RowShape packed_row(std::vector<std::int64_t> documents, std::int64_t seq_len = -1);
std::vector<RowShape> row_shapes(const Batch& batch);  // every row of the batch

// Why the layout refuses the row's kind under spec (a BSHD row to a layout of packed rows, a packed
// row of no documents, C > 1 to a CP-off layout), or "".
std::string kind_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec, RowView row);
// Why the layout's row rule refuses the row under spec (a valid spec; only where the layout
// partitions), or "".
std::string rule_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec, RowView row);

// The whole contract: the row's kind, the spec's options, the row rule; "" when the row is taken.
std::string refusal(const LayoutSpec& spec, const RowShape& row);
bool accepts(const LayoutSpec& spec, const RowShape& row);
bool accepts(const LayoutSpec& spec, const Batch& batch);  // every row

// The accepted row nearest to `row` (of a kind the layout takes): no shorter, its real tokens where
// they are, equal to it exactly when the layout takes it. A length it needs is added at the row's
// end; documents it needs padded are padded at their ends, what the row held past them going to
// the last; a row its layout pads keeps the padding the layout adds (so it stays one it pads).
RowShape nearest_accepted(const LayoutSpec& spec, RowShape row);
// The same for a row of length seq_len whose documents, if any, fit in it.
std::int64_t nearest_accepted_len(const LayoutSpec& spec, std::int64_t seq_len);

}  // namespace cplab::sim
