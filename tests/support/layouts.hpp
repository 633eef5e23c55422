#pragma once
// The layouts every suite iterates: the registered descriptors (sim/layouts/), never a list
// written out in a test, so a new layout cannot silently skip a suite.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reference/types/batch.hpp"
#include "sim/layout_descriptor.hpp"

namespace cplab::testsupport {

// (layout, C) for every registered layout and every C of cps it takes (a CP-off layout: C = 1).
inline std::vector<std::pair<std::string, std::int64_t>> layouts_at(
    const std::vector<std::int64_t>& cps) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : cps) {
      if (cp == 1 || !layout.cp_off) out.emplace_back(layout.name, cp);
    }
  }
  return out;
}

// Whether a layout takes BSHD rows (packed = false) or packed rows (packed = true).
inline bool takes_rows(const std::string& layout, bool packed) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(layout);
  return packed ? d.packed_rows : d.bshd_rows;
}

// Whether a layout lays out a row of S = seq_len slots under spec (some refuse some lengths).
inline bool takes_len(const LayoutSpec& spec, std::int64_t seq_len) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(spec.layout);
  if (spec.cp == 1 || d.takes_padded_len == nullptr) return true;
  const std::int64_t unit = d.pad_unit(spec);
  return d.takes_padded_len(spec, (seq_len + unit - 1) / unit * unit);
}

// Whether a layout re-lays documents at C (so the caller's own document padding is not kept).
inline bool relays_documents(const std::string& layout, std::int64_t cp) {
  return cp > 1 && sim::layout_descriptor(layout).document_unit != nullptr;
}

// The multiple every document must occupy at C when the layout's padding is the caller's (SPEC
// §10.1), or 0 when the layout pads its rows itself.
inline std::int64_t caller_pad_unit(const std::string& layout, std::int64_t cp) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(layout);
  if (cp == 1 || d.caller_pad_unit == nullptr) return 0;
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  return d.caller_pad_unit(spec);
}

// `len` slots as the caller pads them for such a layout (up to a multiple of its unit); else len.
inline std::int64_t caller_padded(const std::string& layout, std::int64_t cp, std::int64_t len) {
  const std::int64_t unit = caller_pad_unit(layout, cp);
  return unit == 0 ? len : (len + unit - 1) / unit * unit;
}

// Whether the batch's rows are padded as such a layout needs at C (every document a multiple of
// its unit, the documents filling the row; a BSHD row is one document). Other layouts: true.
inline bool caller_padding_fits(const std::string& layout, std::int64_t cp, const Batch& batch) {
  const std::int64_t unit = caller_pad_unit(layout, cp);
  if (unit == 0) return true;
  if (!batch.packed()) return batch.seq_len() % unit == 0;
  for (std::size_t b = 0; b < batch.seq_lens.size(); ++b) {
    const bool padded = b < batch.seq_lens_padded.size() && !batch.seq_lens_padded[b].empty();
    std::int64_t filled = 0;
    for (std::int64_t slots : padded ? batch.seq_lens_padded[b] : batch.seq_lens[b]) {
      if (slots % unit != 0) return false;
      filled += slots;
    }
    if (filled != batch.seq_len()) return false;
  }
  return true;
}

// Whether a layout takes a row of this length at C: one that pads nothing (LayoutDescriptor::
// pads_nothing) takes only multiples of its pad unit (the others pad any row).
inline bool takes_length(const std::string& layout, std::int64_t cp, std::int64_t len) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(layout);
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  return !d.pads_nothing || cp == 1 || len % d.pad_unit(spec) == 0;
}

}  // namespace cplab::testsupport
