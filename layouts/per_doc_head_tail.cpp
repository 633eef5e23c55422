// What a caller may ask of per-doc-head-tail: its name; it has no options beyond C.
//
// per-doc-head-tail (torch's _PerDocumentHeadTailLoadBalancer, SPEC §10.1): head-tail inside every
// document of a row whose padding is the caller's. Every document occupies a multiple of 2C slots
// and the documents fill the row (a BSHD row is one document); nothing is padded, positions are
// the stream indices. The map is thd's closed form over the caller's document bounds.
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/layout_option.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

extern const LayoutDeclaration per_doc_head_tail_declaration;
const LayoutDeclaration per_doc_head_tail_declaration{.name = CPLAB_LAYOUT_NAME(per_doc_head_tail),
                                                      .options = {}};

}  // namespace cplab::layouts

namespace cplab::sim {
namespace {

std::int64_t two_c(const LayoutSpec& spec) { return 2 * spec.cp; }

// The caller's document bounds (the row rule, checked before, made sure every document is a
// multiple of 2C and that they fill the row: the layout pads nothing, so a row it cannot cut is
// the caller's to pad). A BSHD row is one document.
void derive_bounds(RowStream& stream, const LayoutSpec&, const PartitionRules&) {
  if (!stream.packed) {
    stream.map.table = {0, stream.caller_len};
    return;
  }
  const std::vector<std::int64_t>& bounds = stream.doc_bounds;
  // A row of no documents (S = 0) is one empty document to the map.
  stream.map.table = bounds.size() >= 2 ? bounds : std::vector<std::int64_t>{0, stream.caller_len};
}

// The map divides by each document's chunk: refuse recorded bounds that are not [0, ..., L] in
// steps of multiples of 2C (a wrong parameter is a failure to report, not a division by zero).
std::vector<std::int64_t> check_bounds(std::int64_t cp, std::int64_t padded_len,
                                       const MapParams& params) {
  const std::vector<std::int64_t>& cu = params.table;
  CPLAB_CHECK(cu.size() >= 2 && cu.front() == 0 && cu.back() == padded_len,
              "per-doc-head-tail row map: document bounds {} do not run from 0 to L={}",
              fmt::format("{}", cu), padded_len);
  for (std::size_t i = 1; i < cu.size(); ++i) {
    CPLAB_CHECK(cu[i] >= cu[i - 1] && (cu[i] - cu[i - 1]) % (2 * cp) == 0,
                "per-doc-head-tail row map: document {} of bounds {} occupies {} slots, not a "
                "multiple of 2C={}",
                i, fmt::format("{}", cu), cu[i] - cu[i - 1], 2 * cp);
  }
  return {};
}

}  // namespace

extern const LayoutDescriptor per_doc_head_tail_descriptor;
const LayoutDescriptor per_doc_head_tail_descriptor{
    .name = CPLAB_LAYOUT_NAME(per_doc_head_tail),
    .map = {.form = index_math::form_of<index_math::ThdMap>(),
            .source = MapSource::recorded,
            .derive = derive_bounds,
            .prepare = check_bounds},
    .padding = {.unit = two_c, .document_unit = nullptr, .at_cp1 = nullptr},
    .stream_positions = true,
    .row_rule = {.of = RowRule::Of::documents, .multiple = two_c, .multiple_name = "2C"},
};

}  // namespace cplab::sim
