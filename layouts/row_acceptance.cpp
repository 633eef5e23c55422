// The acceptance contract (row_acceptance.hpp): every "does this layout take this row?" in cplab
// is answered here, from the descriptor's data.
#include "layouts/row_acceptance.hpp"

#include <fmt/format.h>

#include <numeric>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "layouts/index_math.hpp"

namespace cplab::sim {
namespace {

using index_math::ceil_to;

std::int64_t occupied(RowView row) {
  return std::accumulate(row.documents.begin(), row.documents.end(), std::int64_t{0});
}

// "" when every document is a multiple of m and they fill the row (a BSHD row is one document).
std::string documents_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec, RowView row,
                              std::int64_t m) {
  const char* unit = layout.row_rule.multiple_name;
  if (!row.packed) {
    if (row.seq_len % m == 0) return {};
    return fmt::format(
        "{}: a BSHD row of S={} is one document, not a multiple of {}={} (cp={}); the padding is "
        "the caller's",
        layout.name, row.seq_len, unit, m, spec.cp);
  }
  for (std::size_t i = 0; i < row.documents.size(); ++i) {
    if (row.documents[i] % m == 0) continue;
    return fmt::format(
        "{}: document {} occupies {} slots, not a multiple of {}={} (cp={}); the padding is the "
        "caller's: pad every document to a multiple of {}",
        layout.name, i + 1, row.documents[i], unit, m, spec.cp, unit);
  }
  if (occupied(row) == row.seq_len) return {};
  return fmt::format(
      "{}: the documents occupy {} of the row's S={} slots; they must fill the row (the padding "
      "is the caller's: give it to the last document)",
      layout.name, occupied(row), row.seq_len);
}

}  // namespace

RowShape bshd_row(std::int64_t seq_len) { return {.seq_len = seq_len}; }

RowShape packed_row(std::vector<std::int64_t> documents, std::int64_t seq_len) {
  RowShape row{.seq_len = seq_len, .packed = true, .documents = std::move(documents)};
  if (seq_len < 0) row.seq_len = occupied(row);
  return row;
}

std::vector<RowShape> row_shapes(const Batch& batch) {
  std::vector<RowShape> rows;
  if (!batch.packed()) {
    rows.assign(static_cast<std::size_t>(batch.rows()), bshd_row(batch.seq_len()));
    return rows;
  }
  for (std::size_t b = 0; b < batch.seq_lens.size(); ++b) {
    const bool padded = b < batch.seq_lens_padded.size() && !batch.seq_lens_padded[b].empty();
    rows.push_back(
        packed_row(padded ? batch.seq_lens_padded[b] : batch.seq_lens[b], batch.seq_len()));
  }
  return rows;
}

std::string kind_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec, RowView row) {
  if (!layout.bshd_rows && !row.packed) {
    return fmt::format(
        "{} partitions packed rows (documents with seq_lens); got a BSHD row of S={}", layout.name,
        row.seq_len);
  }
  if (!layout.bshd_rows && row.documents.empty()) {
    return fmt::format("{}: a packed row with no documents (S={}) has nothing to partition",
                       layout.name, row.seq_len);
  }
  if (layout.cp_off && spec.cp != 1) {
    return fmt::format("the {} layout is CP off: it needs cp=1, got cp={}", layout.name, spec.cp);
  }
  return {};
}

std::string rule_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec, RowView row) {
  const RowRule& rule = layout.row_rule;
  if (rule.of == RowRule::Of::anything || !partitions(layout, spec)) return {};
  const std::int64_t m = rule.multiple(spec);
  CPLAB_CHECK(m >= 1, "{}: its row rule asks for a multiple of {}={}", layout.name,
              rule.multiple_name, m);
  switch (rule.of) {
    case RowRule::Of::length:
      if (row.seq_len % m == 0) return {};
      return fmt::format(
          "{} pads nothing: the row length S={} must be a multiple of {}={} (cp={}; the padding "
          "is the caller's)",
          layout.name, row.seq_len, rule.multiple_name, m, spec.cp);
    case RowRule::Of::padded_length: {
      const std::int64_t unit = layout.padding.unit(spec), padded = ceil_to(row.seq_len, unit);
      if (padded % m == 0) return {};
      return fmt::format(
          "{}: L={} (S={} padded to a multiple of {}) is not a multiple of {}={}: {} (cp={}); pad "
          "the row to a multiple of {}={}",
          layout.name, padded, row.seq_len, unit, rule.multiple_name, m, rule.why, spec.cp,
          rule.multiple_name, m);
    }
    case RowRule::Of::documents:
      return documents_refusal(layout, spec, row, m);
    case RowRule::Of::anything:
      break;
  }
  return {};
}

std::string refusal(const LayoutSpec& spec, const RowShape& row) {
  const LayoutDescriptor& layout = layout_descriptor(spec.layout);
  if (std::string why = kind_refusal(layout, spec, row); !why.empty()) return why;
  try {
    layouts::check_options(spec);
    if (layout.check_spec != nullptr) layout.check_spec(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return rule_refusal(layout, spec, row);
}

bool accepts(const LayoutSpec& spec, const RowShape& row) { return refusal(spec, row).empty(); }

bool accepts(const LayoutSpec& spec, const Batch& batch) {
  for (const RowShape& row : row_shapes(batch)) {
    if (!accepts(spec, row)) return false;
  }
  return true;
}

RowShape nearest_accepted(const LayoutSpec& spec, RowShape row) {
  const LayoutDescriptor& layout = layout_descriptor(spec.layout);
  if (layout.row_rule.of == RowRule::Of::anything || !partitions(layout, spec)) return row;
  const std::int64_t m = std::max<std::int64_t>(1, layout.row_rule.multiple(spec));
  switch (layout.row_rule.of) {
    case RowRule::Of::length:
      row.seq_len = ceil_to(row.seq_len, m);
      break;
    case RowRule::Of::padded_length: {
      // L up to the next multiple, the padding the layout adds (L - S) kept.
      const std::int64_t unit = layout.padding.unit(spec), padded = ceil_to(row.seq_len, unit);
      row.seq_len = ceil_to(padded, m) - (padded - row.seq_len);
      break;
    }
    case RowRule::Of::documents:
      if (!row.packed) {
        row.seq_len = ceil_to(row.seq_len, m);
        break;
      }
      if (row.documents.empty()) row.documents.push_back(0);
      row.documents.back() += std::max<std::int64_t>(0, row.seq_len - occupied(row));
      for (std::int64_t& slots : row.documents) slots = ceil_to(slots, m);
      row.seq_len = occupied(row);
      break;
    case RowRule::Of::anything:
      break;
  }
  return row;
}

std::int64_t nearest_accepted_len(const LayoutSpec& spec, std::int64_t seq_len) {
  return nearest_accepted(spec, bshd_row(seq_len)).seq_len;
}

}  // namespace cplab::sim
