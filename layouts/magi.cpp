// What a caller may ask of magi: its chunk size K (or auto), and padding to K at C = 1.
//
// magi (MagiAttention dispatch, SPEC §3): the stream padded at its end to a multiple of K·C and cut
// into chunks of K slots, assigned greedily by attention area, n/C per rank; positions are stream
// indices. The areas come in closed form: within one document the real query at offset t sees t+1
// real keys, so a chunk's share of a document is a difference of triangular numbers (the reference
// counts the pairs one by one instead). The map: table = the rank-major assignment, unit = K.
#include "layouts/magi.hpp"

#include <algorithm>
#include <climits>

#include "core/divisors.hpp"
#include "core/error.hpp"
#include "core/layout_name.hpp"
#include "layouts/closed_forms.hpp"
#include "layouts/magi.hpp"
#include "layouts/partition.hpp"

namespace cplab::layouts {

std::int64_t magi_auto_chunk_size(std::int64_t cap, std::int64_t seq_len, std::int64_t cp) {
  CPLAB_CHECK(cap >= 1 && seq_len >= 0 && cp >= 1,
              "magi chunk size: needs K >= 1, S >= 0 and C >= 1, got K={} S={} C={}", cap, seq_len,
              cp);
  // ceil(S / (8·C)) without forming S + 8C - 1, which wraps for S near 2^63; a C past 2^60 gives
  // a quotient of at most 1 either way.
  const std::int64_t ranks8 = cp > INT64_MAX / 8 ? INT64_MAX : 8 * cp;
  const std::int64_t per_rank = seq_len / ranks8 + (seq_len % ranks8 != 0 ? 1 : 0);
  return std::max<std::int64_t>(1, std::min(cap, per_rank));
}

const LayoutOption magi_chunk_size{
    .name = "chunk_size",
    .key = "K",
    .flag = "--chunk-size",
    .help =
        "magi: chunk size K, or auto (min(512, ceil(S / (8·C))), MagiAttention's cap for "
        "short rows)",
    .what = "magi chunk size K",
    .fallback = 512,
    .automatic = [](std::int64_t seq_len,
                    std::int64_t cp) { return magi_auto_chunk_size(512, seq_len, cp); },
    .case_order = 0,
    .candidates = [](std::int64_t,
                     std::int64_t local) { return default_then_divisors(512, local); },
    .pad_unit = [](std::int64_t cp, std::int64_t k) { return k * cp; },
};

const LayoutOption magi_chunk_pad_at_cp1{
    .name = "chunk_pad_at_cp1",
    .key = "chunk_pad_at_cp1",
    .flag = "--chunk-pad-at-cp1",
    .help = "magi: pad to a multiple of K even at C = 1 (MagiAttention's own dispatch)",
    .what = "magi chunk padding at C = 1",
    .fallback = 0,
    .least = 0,
    .most = [](std::int64_t) -> std::int64_t { return 1; },
    .is_switch = true,
    .case_order = 2,
};

namespace {
const LayoutOption* const options[] = {&magi_chunk_size, &magi_chunk_pad_at_cp1};
}  // namespace

extern const LayoutDeclaration magi_declaration;
const LayoutDeclaration magi_declaration{.name = CPLAB_LAYOUT_NAME(magi), .options = options};

}  // namespace cplab::layouts

namespace cplab::sim {
namespace {

// 1 + 2 + ... + x: the keys seen by the first x real queries of a document.
constexpr std::int64_t triangle(std::int64_t x) { return x * (x + 1) / 2; }

// Adds to every chunk overlapping [start, start + real) the keys its queries see in this document.
void add_document(std::vector<std::int64_t>& areas, std::int64_t chunk_size, std::int64_t start,
                  std::int64_t real) {
  if (real <= 0) return;
  const std::int64_t end = start + real;
  for (std::int64_t j = start / chunk_size; j * chunk_size < end; ++j) {
    const std::int64_t from = std::max(j * chunk_size, start) - start;
    const std::int64_t to = std::min((j + 1) * chunk_size, end) - start;
    areas[j] += triangle(to) - triangle(from);
  }
}

void derive_assignment(RowStream& stream, const LayoutSpec& spec, const PartitionRules& rules) {
  const std::int64_t k = layouts::magi_chunk_size.of(spec);
  CPLAB_CHECK(k >= 1 && stream.padded_len % k == 0,
              "magi: L={} is not a multiple of the chunk size K={}", stream.padded_len, k);
  std::vector<std::int64_t> areas(static_cast<std::size_t>(stream.padded_len / k), 0);
  if (!stream.packed) {
    add_document(areas, k, 0, stream.caller_len);  // a BSHD row is one causal document
  } else {
    for (std::size_t i = 0; i < stream.doc_real.size(); ++i)
      add_document(areas, k, stream.doc_bounds[i], stream.doc_real[i]);
  }
  stream.map.unit = k;
  stream.map.table.clear();
  for (const auto& chunks : greedy_assign(areas, stream.cp, rules))
    stream.map.table.insert(stream.map.table.end(), chunks.begin(), chunks.end());
  stream.map_costs = std::move(areas);
}

// Checks the recorded assignment and returns its inverse, chunk_slot.
std::vector<std::int64_t> invert_assignment(std::int64_t cp, std::int64_t padded_len,
                                            const MapParams& params) {
  const std::int64_t k = params.unit;
  CPLAB_CHECK(k >= 1 && padded_len % (k * cp) == 0,
              "magi row map: L={} is not a multiple of K·C={}·{}", padded_len, k, cp);
  const std::int64_t chunks = padded_len / k;
  CPLAB_CHECK(static_cast<std::int64_t>(params.table.size()) == chunks,
              "magi row map: {} assigned chunks for L/K={} chunks", params.table.size(), chunks);
  std::vector<std::int64_t> slot(static_cast<std::size_t>(chunks), -1);
  for (std::int64_t s = 0; s < chunks; ++s) {
    const std::int64_t chunk = params.table[static_cast<std::size_t>(s)];
    CPLAB_CHECK(chunk >= 0 && chunk < chunks,
                "magi row map: rank {} is assigned chunk {}, outside [0, {})", s / (chunks / cp),
                chunk, chunks);
    CPLAB_CHECK(slot[chunk] < 0, "magi row map: chunk {} is assigned twice (ranks {} and {})",
                chunk, slot[chunk] / (chunks / cp), s / (chunks / cp));
    slot[chunk] = s;
  }
  return slot;
}

}  // namespace

extern const LayoutDescriptor magi_descriptor;
const LayoutDescriptor magi_descriptor{
    .name = CPLAB_LAYOUT_NAME(magi),
    .map = {.form = index_math::form_of<index_math::MagiMap>(),
            .source = MapSource::assignment,
            .derive = derive_assignment,
            .prepare = invert_assignment},
    // MagiAttention's own dispatch pads to a multiple of K at C = 1 too ("identity + chunk
    // padding"): one rank holds every chunk, in order, positions stream indices.
    .padding = {
        .unit = [](const LayoutSpec& spec) { return layouts::magi_chunk_size.of(spec) * spec.cp; },
        .document_unit = nullptr,
        .at_cp1 =
            [](const LayoutSpec& spec) { return layouts::magi_chunk_pad_at_cp1.of(spec) == 1; }},
    .stream_positions = true,
    // MagiAttention's ranks fetch the remote keys their chunks need for its own solver (SPEC
    // §13.1): all-gather holds them all; a ring is not how it attends.
    .attention = {.blocking = AttentionBlocking::runs,
                  .refuses_algo = [](AttentionAlgo algo) -> const char* {
                    if (algo == AttentionAlgo::ring)
                      return "MagiAttention attends its dispatched chunks with its own solver, "
                             "which fetches the remote keys each chunk needs, not by a ring "
                             "(all-gather models the keys it holds)";
                    return nullptr;
                  },
                  .varlen_segments = false},
};

}  // namespace cplab::sim
