#include "check/slot_runs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/batch.hpp"

namespace cplab::check {

std::string range_text(std::int64_t begin, std::int64_t end) {
  return end - begin == 1 ? std::to_string(begin) : fmt::format("[{}, {})", begin, end);
}

std::string values_text(const std::vector<double>& values, std::size_t shown) {
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < shown; ++i) {
    if (i > 0) out += ", ";
    const double v = values[i];
    out += v == std::floor(v) && std::abs(v) < 1e15 ? fmt::format("{}", static_cast<long long>(v))
                                                    : fmt::format("{:g}", v);
  }
  if (values.size() > shown) out += ", …";
  return out;
}

namespace {

bool located(std::int64_t held) { return held >= 0; }

// Whether slot b continues the run that ends in a (step: the run's held step, 0 while unknown).
bool continues(const SlotDiff& a, const SlotDiff& b, std::int64_t step) {
  if (b.k != a.k + 1 || b.g != a.g + 1 || b.pad != a.pad) return false;
  if (located(a.held) != located(b.held)) return false;
  if (!located(a.held)) return a.held == b.held;
  const std::int64_t d = b.held - a.held;
  return (d == 1 || d == -1) && (step == 0 || d == step);
}

std::vector<double> firsts(const std::vector<SlotDiff>& run, bool actual) {
  std::vector<double> out;
  for (const SlotDiff& s : run) {
    const auto& v = actual ? s.actual : s.expected;
    out.push_back(v.empty() ? 0.0 : v[0]);
  }
  return out;
}

std::string holds_text(const RunContext& where, const std::vector<SlotDiff>& run) {
  const SlotDiff& first = run.front();
  const SlotDiff& last = run.back();
  const auto n = static_cast<std::int64_t>(run.size());
  std::string text;
  if (located(first.held)) {
    const bool reversed = n > 1 && last.held < first.held;
    text = reversed ? fmt::format("holds global {}..{} (reversed)", first.held, last.held)
                    : fmt::format("holds global {}", range_text(first.held, first.held + n));
    bool shifted = !first.pad;
    for (const SlotDiff& s : run) shifted = shifted && s.held - s.g == first.held - first.g;
    if (shifted && !reversed) text += fmt::format(" (shifted by {:+})", first.held - first.g);
    if (first.pad) text += " (a real token's value in a pad slot)";
  } else {
    text = fmt::format("holds {} instead of {}", values_text(firsts(run, true)),
                       values_text(firsts(run, false)));
    if (first.held == -1 && !first.pad) text += " (no global slot holds these)";
  }
  if (first.actual.size() > 1) text += fmt::format(" ({} elements per token)", first.actual.size());
  if (where.key == keys::position_ids) {
    bool arange = true;
    for (const SlotDiff& s : run)
      arange = arange && !s.actual.empty() && s.actual[0] == static_cast<double>(s.k);
    if (arange) text += " — the local arange: positions computed after the cut";
  }
  return text;
}

Difference make_difference(const RunContext& where, const std::vector<SlotDiff>& run) {
  Difference d;
  d.rank = where.rank;
  d.key = where.key;
  d.kind = run.front().pad ? DiffKind::pad : DiffKind::slot;
  d.row = where.row;
  d.begin = run.front().k;
  d.end = run.back().k + 1;
  for (const SlotDiff& s : run) {
    d.should.push_back(s.g);
    d.holds.push_back(s.held);
  }
  const std::string lead =
      where.rank >= 0 ? fmt::format("rank {} {}", where.rank, where.key) : "gathered " + where.key;
  const std::string row = where.show_row ? fmt::format(" row {}", where.row) : "";
  const std::string coordinate = where.rank >= 0 ? "local" : "position";
  const std::string should =
      run.front().pad
          ? fmt::format("should hold padding ({}) at global {}", where.pad_rule,
                        range_text(run.front().g, run.back().g + 1))
          : fmt::format("should hold global {}", range_text(run.front().g, run.back().g + 1));
  d.text = fmt::format("{}{} {} {}: {}, {}", lead, row, coordinate, range_text(d.begin, d.end),
                       should, holds_text(where, run));
  return d;
}

}  // namespace

std::vector<Difference> group_runs(const RunContext& where, const std::vector<SlotDiff>& slots) {
  std::vector<Difference> out;
  std::vector<SlotDiff> run;
  std::int64_t step = 0;
  for (const SlotDiff& s : slots) {
    if (!run.empty() && continues(run.back(), s, step)) {
      if (located(s.held)) step = s.held - run.back().held;
      run.push_back(s);
      continue;
    }
    if (!run.empty()) out.push_back(make_difference(where, run));
    run = {s};
    step = 0;
  }
  if (!run.empty()) out.push_back(make_difference(where, run));
  return out;
}

}  // namespace cplab::check
