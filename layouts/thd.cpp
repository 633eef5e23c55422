// What a caller may ask of thd: its name; it has no options beyond C.
//
// thd (TransformerEngine THD partition, SPEC §3): head-tail inside every document of a packed row.
// Every document is re-laid at ceil_to(its length, 2C) slots, the row at least ceil_to(S, 2C) with
// the rest on the last document; the map's table is the stream's document bounds
// (cu_seqlens_padded), and every rank holds whole local documents, cu_seqlens = bounds / C.
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration thd_declaration;
const LayoutDeclaration thd_declaration{.name = CPLAB_LAYOUT_NAME(thd), .options = {}};

}  // namespace cplab::layouts

namespace cplab::sim {
namespace {

// The map divides by each document's chunk: refuse bounds that are not [0, ..., L] in steps of
// multiples of 2C (a wrong recorded parameter is a failure to report, not a division by zero).
std::vector<std::int64_t> check_bounds(std::int64_t cp, std::int64_t padded_len,
                                       const MapParams& params) {
  const std::vector<std::int64_t>& cu = params.table;
  CPLAB_CHECK(cu.size() >= 2 && cu.front() == 0 && cu.back() == padded_len,
              "thd row map: document bounds {} do not run from 0 to L={}", fmt::format("{}", cu),
              padded_len);
  for (std::size_t i = 1; i < cu.size(); ++i) {
    CPLAB_CHECK(cu[i] >= cu[i - 1] && (cu[i] - cu[i - 1]) % (2 * cp) == 0,
                "thd row map: document {} of bounds {} occupies {} slots, not a multiple of 2C={}",
                i - 1, fmt::format("{}", cu), cu[i] - cu[i - 1], 2 * cp);
  }
  return {};
}

}  // namespace

extern const LayoutDescriptor thd_descriptor;
const LayoutDescriptor thd_descriptor{
    .name = CPLAB_LAYOUT_NAME(thd),
    .map = {.form = index_math::form_of<index_math::ThdMap>(),
            .source = MapSource::recorded,
            .derive = [](RowStream& stream, const LayoutSpec&,
                         const PartitionRules&) { stream.map.table = stream.doc_bounds; },
            .prepare = check_bounds},
    .bshd_rows = false,
    .padding = {.unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
                .document_unit = [](const LayoutSpec& spec) { return 2 * spec.cp; },
                .at_cp1 = nullptr},
    .local_documents = true,
};

}  // namespace cplab::sim
