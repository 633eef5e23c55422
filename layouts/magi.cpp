// What a caller may ask of magi: its chunk size K (or auto), and padding to K at C = 1.
#include "layouts/magi.hpp"

#include <algorithm>
#include <climits>

#include "layouts/divisors.hpp"
#include "reference/types/error.hpp"

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
const LayoutDeclaration magi_declaration{.name = "magi", .options = options};

}  // namespace cplab::layouts
