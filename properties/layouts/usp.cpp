// usp (yunchang unified sequence parallel): ring degree R × Ulysses degree U = C, D = 2C; ring
// rank q holds head-tail chunks q and 2R-1-q of 2R, split into U contiguous parts. The generators
// draw R among the divisors of C, the degenerate R = 1 (Ulysses only, contiguous) and R = C
// (ring only, head-tail) as well as two-level ones. Balance: on an unpadded causal BSHD row every
// ring group (its U ranks together) does L(L+1)/(2R), head-tail's per-rank work at C = R; the
// ranks inside a group are not balanced (the head all-to-all evens them out, SPEC §9.13).
#include "layouts/usp.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;
const layouts::LayoutOption& R = layouts::usp_ring_degree;

std::vector<I> divisors(I n) {
  std::vector<I> out;
  for (I d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// The divisors strictly between 1 and n: the two-level degrees.
std::vector<I> two_level_degrees(I n) {
  std::vector<I> out;
  for (I d : divisors(n)) {
    if (d > 1 && d < n) out.push_back(d);
  }
  return out;
}

void draw_ring_degree(LayoutSpec& spec, bool) {
  const I cp = spec.cp;
  const std::vector<I> inner = two_level_degrees(cp);
  const rc::Gen<I> degenerate = rc::gen::weightedOneOf<I>(
      {{1, rc::gen::just<I>(1)}, {1, rc::gen::just(cp)}});  // Ulysses only, ring only
  R.set(spec, inner.empty()
                  ? *degenerate
                  : *rc::gen::weightedOneOf<I>({{2, degenerate}, {3, rc::gen::elementOf(inner)}}));
}

// Smaller ring degrees of the same C, smallest first.
std::vector<LayoutSpec> smaller_ring_degrees(const LayoutSpec& spec) {
  std::vector<LayoutSpec> out;
  for (I r : divisors(spec.cp)) {
    if (r >= R.of(spec)) break;
    LayoutSpec s = spec;
    R.set(s, r);
    out.push_back(s);
  }
  return out;
}

// At a smaller C: R's share of it (gcd), and where that is degenerate (1 or C) while C has a
// two-level degree, the smallest two-level one too, so that a bug of two levels can still shrink.
std::vector<LayoutSpec> ring_degrees_at(const LayoutSpec& spec, I cp) {
  LayoutSpec s = spec;
  s.cp = cp;
  R.set(s, std::gcd(R.of(spec), cp));
  std::vector<LayoutSpec> out = {s};
  const std::vector<I> inner = two_level_degrees(cp);
  if ((R.of(s) == 1 || R.of(s) == cp) && !inner.empty()) {
    R.set(s, inner.front());
    out.push_back(s);
  }
  return out;
}

// A coverage tag once per case (the rule runs on every row).
void tag_once(std::vector<std::string>& tags, std::string tag) {
  if (std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.push_back(std::move(tag));
}

std::string usp_balance(const BalanceFacts& f) {
  const I cp = f.spec.cp, ring = R.of(f.spec);
  if (cp == 1) return {};
  tag_once(f.tags, ring == 1    ? "usp R=1 (Ulysses only)"
                   : ring == cp ? "usp R=C (ring only)"
                                : "usp two levels");
  if (f.row.packed || f.row.caller_len != f.row.padded_len) {
    const double imbalance = reference::imbalance(f.work);
    tag_once(f.tags, fmt::format("usp imbalance {}", imbalance < 1.5 ? "<1.5" : ">=1.5"));
    return {};
  }
  const I len = f.row.padded_len, ulysses = cp / ring;
  const I want = len * (len + 1) / (2 * ring);
  for (I q = 0; q < ring; ++q) {
    I group = 0;
    for (I u = 0; u < ulysses; ++u) group += f.work[static_cast<std::size_t>(q * ulysses + u)];
    if (group != want) {
      return fmt::format(
          "usp R={} U={} on an unpadded causal row of L={}: ring group {} (ranks {}..{}) has work "
          "{}, L(L+1)/(2R) = {} (all ranks: [{}])",
          ring, ulysses, len, q, q * ulysses, (q + 1) * ulysses - 1, group, want,
          fmt::join(f.work, ", "));
    }
  }
  return {};
}

}  // namespace

namespace {

// SPEC §13.4: on one causal row without padding, usp's ring over R groups is head-tail's at C = R
// and every rank of a group computes all of the group's queries on its heads, so every step gives
// every rank the same work.
std::string usp_schedule_balance(const ScheduleBalanceFacts& f) {
  if (f.schedule.algo != sim::AttentionAlgo::usp || f.row.packed ||
      f.row.caller_len != f.row.padded_len)
    return {};
  const std::string unequal = steps_of_unequal_work(f.schedule);
  return unequal.empty()
             ? unequal
             : fmt::format("usp on an unpadded causal row of L={}: {}", f.row.padded_len, unequal);
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> usp_mutants();  // usp_mutants.cpp
}  // namespace mutants

extern const LayoutEntry usp_entry;
const LayoutEntry usp_entry{
    .name = CPLAB_LAYOUT_NAME(usp),
    .balance = usp_balance,
    .draw_options = draw_ring_degree,
    .shrink_options = smaller_ring_degrees,
    .options_at_cp = ring_degrees_at,
    .schedule_balance = usp_schedule_balance,
    .own_mutants = mutants::usp_mutants,
};

}  // namespace cplab::properties
