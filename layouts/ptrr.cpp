// What a caller may ask of ptrr: its block size B.
//
// ptrr (torch's processing-time round robin, SPEC §10.2): the stream padded at its end to a
// multiple of B, n = L/B blocks (n divisible by C), each priced by the key blocks its queries see,
// stably sorted by cost descending and dealt out in rows of C, every odd row reversed; each rank's
// blocks ascending. The map is a block assignment, the same closed form as magi's chunks
// (layouts/magi_map.hpp): table = the rank-major blocks, unit = B.
//
// The costs come in closed form (the reference builds the block mask pair by pair instead): a
// document's real keys are one span [s, e), and the last real query of it in block i sees key
// blocks ⌊s/B⌋ … i, all non-empty. Every document seen from block i ends its key blocks at i, so
// block i costs i + 1 - ⌊s/B⌋ for the earliest document with a real query in it, 0 with none.
#include "layouts/ptrr.hpp"

#include <algorithm>
#include <numeric>

#include "core/divisors.hpp"
#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "core/limits.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/partition.hpp"
#include "layouts/ptrr.hpp"

namespace cplab::layouts {

const LayoutOption ptrr_block_size{
    .name = "block_size",
    .key = "block",
    .flag = "--block-size",
    .help = "ptrr: block size B (L is padded to a multiple of B; L/B must divide by C)",
    .what = "ptrr block size B",
    .fallback = 128,
    .most = [](std::int64_t) { return limits::kMaxPadUnit; },
    .case_order = 3,
    .candidates = [](std::int64_t,
                     std::int64_t local) { return default_then_divisors(128, local); },
    .pad_unit = [](std::int64_t, std::int64_t b) { return b; },
};

namespace {
const LayoutOption* const options[] = {&ptrr_block_size};
}  // namespace

extern const LayoutDeclaration ptrr_declaration;
const LayoutDeclaration ptrr_declaration{.name = CPLAB_LAYOUT_NAME(ptrr), .options = options};

}  // namespace cplab::layouts

namespace cplab::sim {
namespace {

std::vector<std::int64_t> block_costs(const std::vector<SlotSpan>& documents, std::int64_t block,
                                      std::int64_t blocks) {
  std::vector<std::int64_t> first(static_cast<std::size_t>(blocks), -1);  // earliest start block
  for (const SlotSpan& doc : documents) {
    if (doc.end <= doc.begin) continue;
    for (std::int64_t i = doc.begin / block; i <= (doc.end - 1) / block && i < blocks; ++i) {
      if (first[i] < 0 || doc.begin / block < first[i]) first[i] = doc.begin / block;
    }
  }
  std::vector<std::int64_t> costs(static_cast<std::size_t>(blocks), 0);
  for (std::int64_t i = 0; i < blocks; ++i) costs[i] = first[i] < 0 ? 0 : i + 1 - first[i];
  return costs;
}

void check_blocks(std::int64_t padded_len, std::int64_t block, std::int64_t cp) {
  CPLAB_CHECK(block >= 1 && padded_len % block == 0 && (padded_len / block) % cp == 0,
              "ptrr: L={} is {} blocks of B={}, which do not divide over cp={} ranks (pad the row "
              "to a multiple of B·C={})",
              padded_len, block >= 1 ? padded_len / block : 0, block, cp, block * cp);
}

void derive_round_robin(RowStream& stream, const LayoutSpec& spec, const PartitionRules& rules) {
  const std::int64_t block = layouts::ptrr_block_size.of(spec), cp = stream.cp;
  const std::int64_t blocks = stream.padded_len / block;
  std::vector<std::int64_t> costs = block_costs(rules.balance_documents(stream), block, blocks);
  std::vector<std::int64_t> order(static_cast<std::size_t>(blocks));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return costs[a] > costs[b]; });
  // Sorted position p is row p / C, place p % C; odd rows run right to left (the snake).
  const std::int64_t per_rank = blocks / cp;
  stream.map.unit = block;
  stream.map.table.assign(static_cast<std::size_t>(blocks), 0);
  std::vector<std::vector<std::int64_t>> owned(static_cast<std::size_t>(cp));
  for (std::int64_t p = 0; p < blocks; ++p) {
    const std::int64_t row = p / cp, place = p % cp;
    owned[row % 2 == 0 ? place : cp - 1 - place].push_back(order[p]);
  }
  for (std::int64_t r = 0; r < cp; ++r) {
    std::sort(owned[r].begin(), owned[r].end());
    std::copy(owned[r].begin(), owned[r].end(), stream.map.table.begin() + r * per_rank);
  }
  stream.map_costs = std::move(costs);
}

// Checks the recorded assignment and returns its inverse: block_slot[j] = r · per_rank + i when
// block j is rank r's i-th.
std::vector<std::int64_t> invert_blocks(std::int64_t cp, std::int64_t padded_len,
                                        const MapParams& params) {
  check_blocks(padded_len, params.unit, cp);
  const std::int64_t blocks = padded_len / params.unit, per_rank = blocks / cp;
  CPLAB_CHECK(static_cast<std::int64_t>(params.table.size()) == blocks,
              "ptrr row map: {} assigned blocks for L/B={} blocks", params.table.size(), blocks);
  std::vector<std::int64_t> slot(static_cast<std::size_t>(blocks), -1);
  for (std::int64_t s = 0; s < blocks; ++s) {
    const std::int64_t b = params.table[static_cast<std::size_t>(s)];
    CPLAB_CHECK(b >= 0 && b < blocks, "ptrr row map: rank {} is assigned block {}, outside [0, {})",
                s / per_rank, b, blocks);
    CPLAB_CHECK(slot[b] < 0, "ptrr row map: block {} is assigned twice (ranks {} and {})", b,
                slot[b] / per_rank, s / per_rank);
    slot[b] = s;
  }
  return slot;
}

}  // namespace

extern const LayoutDescriptor ptrr_descriptor;
const LayoutDescriptor ptrr_descriptor{
    .name = CPLAB_LAYOUT_NAME(ptrr),
    .map = {.form = index_math::form_of<index_math::MagiMap>(),
            .source = MapSource::assignment,
            .derive = derive_round_robin,
            .prepare = invert_blocks},
    .padding = {.unit = [](const LayoutSpec& spec) { return layouts::ptrr_block_size.of(spec); },
                .document_unit = nullptr,
                .at_cp1 = nullptr},
    .row_rule = {.of = RowRule::Of::padded_length,
                 .multiple =
                     [](const LayoutSpec& spec) {
                       return layouts::ptrr_block_size.of(spec) * spec.cp;
                     },
                 .multiple_name = "B·C",
                 .why = "its L/B blocks are dealt out over the ranks"},
};

}  // namespace cplab::sim
