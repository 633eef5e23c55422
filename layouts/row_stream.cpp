// The padded global stream of a row, from the batch metadata alone: its length, where documents
// lie and what every slot holds (SPEC §1-§3). Every rank computes the same stream before it
// partitions, which is how positions and document ids come out the same on every rank.
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "layouts/index_math.hpp"
#include "layouts/partition.hpp"
#include "layouts/row_acceptance.hpp"

namespace cplab::sim {
namespace {

using index_math::ceil_to;

// L of a layout whose own length is `natural` when the batch pins every row (0: not pinned).
std::int64_t pinned_or(const std::string& layout, std::int64_t natural, std::int64_t pinned) {
  CPLAB_CHECK(pinned == 0 || pinned == natural,
              "{} pads this row to L={}, but the batch pins every row to L={}", layout, natural,
              pinned);
  return natural;
}

// Documents at their caller offsets, padding appended at the end (unless the layout re-lays them).
void end_padded_documents(RowStream& stream, const MicrobatchRows& rows) {
  if (!rows.packed) return;
  const std::vector<std::int64_t>& occupied =
      rows.seq_lens_padded.empty() ? rows.seq_lens : rows.seq_lens_padded;
  stream.doc_bounds = {0};
  for (std::size_t i = 0; i < rows.seq_lens.size(); ++i) {
    stream.caller_start.push_back(stream.doc_bounds.back());
    stream.doc_bounds.push_back(stream.doc_bounds.back() + occupied[i]);
  }
  stream.doc_real = rows.seq_lens;
}

// Every document re-laid at its own padded length (document_unit), the row to at least
// ceil_to(S, pad_unit), what is left over on the last document.
void relaid_documents(RowStream& stream, const MicrobatchRows& rows, std::int64_t document_unit,
                      std::int64_t pad_unit, const PartitionRules& rules) {
  const std::vector<std::int64_t>& occupied =
      rows.seq_lens_padded.empty() ? rows.seq_lens : rows.seq_lens_padded;
  std::vector<std::int64_t> slots;
  std::int64_t caller_offset = 0;
  for (std::size_t i = 0; i < rows.seq_lens.size(); ++i) {
    slots.push_back(rules.document_slots(rows.seq_lens[i], document_unit));
    stream.caller_start.push_back(caller_offset);
    caller_offset += occupied[i];
  }
  const std::int64_t documents = std::accumulate(slots.begin(), slots.end(), std::int64_t{0});
  std::int64_t len = std::max(documents, ceil_to(rows.caller_len, pad_unit));
  if (rows.pinned_len > 0) {
    CPLAB_CHECK(rows.pinned_len % pad_unit == 0 && rows.pinned_len >= len,
                "{} needs L={} (a multiple of {}) for this row, the batch pins L={}", stream.layout,
                len, pad_unit, rows.pinned_len);
    len = rows.pinned_len;
  }
  slots.back() += len - documents;  // row padding belongs to the last document
  stream.padded_len = len;
  stream.relaid = true;
  stream.doc_bounds = {0};
  for (std::size_t i = 0; i < slots.size(); ++i) {
    stream.doc_bounds.push_back(stream.doc_bounds.back() + slots[i]);
    stream.doc_real.push_back(std::min(rows.seq_lens[i], slots[i]));
  }
}

}  // namespace

RowStream row_stream(const LayoutSpec& spec, const MicrobatchRows& rows,
                     const PartitionRules& rules) {
  CPLAB_CHECK(spec.cp >= 1, "CP size must be at least 1, got cp={}", spec.cp);
  CPLAB_CHECK(rows.caller_len >= 0, "row length must be non-negative, got S={}", rows.caller_len);
  const LayoutDescriptor& layout = layout_descriptor(spec.layout);
  RowStream stream;
  stream.layout = spec.layout;
  stream.descriptor = &layout;
  stream.cp = spec.cp;
  stream.caller_len = rows.caller_len;
  stream.packed = rows.packed;
  const std::int64_t len = rows.caller_len;
  const RowView shape{.seq_len = len,
                      .packed = rows.packed,
                      .documents = rows.packed && !rows.seq_lens_padded.empty()
                                       ? rows.seq_lens_padded
                                   : rows.packed ? rows.seq_lens
                                                 : std::span<const std::int64_t>{}};
  if (std::string why = kind_refusal(layout, spec, shape); !why.empty()) CPLAB_FAIL("{}", why);
  layouts::check_options(spec);  // every option inside its declared range
  if (layout.check_spec != nullptr) layout.check_spec(spec);
  if (!partitions(layout, spec)) {  // C = 1: the caller row as it is (SPEC §3)
    stream.padded_len = pinned_or(spec.layout, len, rows.pinned_len);
    end_padded_documents(stream, rows);
    return stream;
  }
  const std::int64_t pad_unit = layout.padding.unit(spec);
  if (std::string why = rule_refusal(layout, spec, shape); !why.empty()) CPLAB_FAIL("{}", why);
  if (rows.packed && layout.padding.document_unit != nullptr) {
    relaid_documents(stream, rows, layout.padding.document_unit(spec), pad_unit, rules);
  } else {
    stream.padded_len = pinned_or(spec.layout, ceil_to(len, pad_unit), rows.pinned_len);
    end_padded_documents(stream, rows);
  }
  stream.stream_positions = layout.stream_positions;
  if (layout.map.derive != nullptr) layout.map.derive(stream, spec, rules);
  return stream;
}

StreamSlots stream_slots(const RowStream& stream) {
  const auto n = static_cast<std::size_t>(stream.padded_len);
  StreamSlots slots;
  slots.caller_pos.assign(n, -1);
  slots.positions.assign(n, 0);
  slots.doc_ids.assign(n, 0);
  slots.real.assign(n, 0);
  const std::int64_t len = stream.padded_len;
  if (!stream.relaid) {
    for (std::int64_t g = 0; g < std::min(len, stream.caller_len); ++g) slots.caller_pos[g] = g;
  }
  if (!stream.packed) {
    for (std::int64_t g = 0; g < len; ++g) {
      slots.positions[g] = g;
      slots.doc_ids[g] = g < stream.caller_len ? 1 : 0;
      slots.real[g] = g < stream.caller_len ? 1 : 0;
    }
    return slots;
  }
  const auto docs = static_cast<std::int64_t>(stream.doc_real.size());
  for (std::int64_t i = 0; i < docs; ++i) {
    for (std::int64_t g = stream.doc_bounds[i]; g < stream.doc_bounds[i + 1]; ++g) {
      const std::int64_t j = g - stream.doc_bounds[i];
      const bool real = j < stream.doc_real[i];
      slots.positions[g] = j;
      slots.doc_ids[g] = static_cast<std::int32_t>(i + 1);
      slots.real[g] = real ? 1 : 0;
      if (stream.relaid) slots.caller_pos[g] = real ? stream.caller_start[i] + j : -1;
    }
  }
  // Row padding after the last document continues the position before it.
  for (std::int64_t g = stream.doc_bounds.back(); g < len; ++g)
    slots.positions[g] = g == 0 ? 0 : slots.positions[g - 1] + 1;
  if (stream.stream_positions)
    std::iota(slots.positions.begin(), slots.positions.end(), std::int64_t{0});
  return slots;
}

}  // namespace cplab::sim
