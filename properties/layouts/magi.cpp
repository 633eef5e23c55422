// magi (MagiAttention dispatch): chunks of K slots assigned greedily by attention area, n/C per
// rank, each rank's chunks ascending; the stream is padded to a multiple of K·C. Balance: the
// largest rank work is at most total/C + the largest chunk area. Its options as MagiAttention
// runs them: K capped for short rows (K=auto) and padding to K at C = 1 (chunk_pad_at_cp1).
#include "layouts/magi.hpp"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>

#include "core/layout_name.hpp"
#include "properties/case.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {
namespace {

std::string area_bound(const BalanceFacts& f) {
  const std::int64_t cp = f.spec.cp;
  if (cp == 1) return {};
  const std::int64_t chunk = layouts::magi_chunk_size.of(f.spec);
  std::int64_t max_area = 0;
  for (std::int64_t start = 0; start < f.row.padded_len; start += chunk) {
    std::int64_t area = 0;
    for (std::int64_t g = start; g < start + chunk; ++g)
      area += f.visible[static_cast<std::size_t>(g)];
    max_area = std::max(max_area, area);
  }
  // max <= total/C + max area, in integers: C·max <= total + C·max_area.
  if (cp * f.largest > f.total + cp * max_area) {
    return fmt::format("magi's largest rank work {} exceeds total/C + max chunk area = {}/{} + {}",
                       f.largest, f.total, cp, max_area);
  }
  return {};
}

// K=auto now and then (its K follows S and C); padding at C = 1 half the time there (where it
// changes the stream), now and then above it (where it must change nothing).
void draw_magi_options(Case& c) {
  namespace gen = rc::gen;
  if (*gen::weightedOneOf<bool>({{3, gen::just(false)}, {1, gen::just(true)}}))
    c.automatic.push_back(layouts::magi_chunk_size.name);
  const std::size_t pad_weight = c.spec.cp == 1 ? 2 : 1;
  layouts::magi_chunk_pad_at_cp1.set(
      c.spec, *gen::weightedOneOf<bool>({{2, gen::just(false)}, {pad_weight, gen::just(true)}}));
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> magi_mutants();  // magi_mutants.cpp
}  // namespace mutants

extern const LayoutEntry magi_entry;
const LayoutEntry magi_entry{
    .name = CPLAB_LAYOUT_NAME(magi),
    .balance = area_bound,
    // Small chunks most often, so that rows have several.
    .draw_options =
        [](LayoutSpec& spec, bool) {
          namespace gen = rc::gen;
          using I = std::int64_t;
          const I largest = std::max<I>(2, 96 / spec.cp);
          layouts::magi_chunk_size.set(
              spec, *gen::weightedOneOf<I>(
                        {{3, gen::inRange<I>(1, 5)}, {1, gen::inRange<I>(1, largest + 1)}}));
        },
    .draw_case_options = draw_magi_options,
    // The shared mutants whose bug lies on this layout's code path (the hunt runs them here).
    .carries_mutants =
        {
            "gather_without_reorder",
        },
    .own_mutants = mutants::magi_mutants,
};

}  // namespace cplab::properties
