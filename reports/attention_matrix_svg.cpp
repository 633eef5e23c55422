// The attention matrix picture (attention_matrix_svg.hpp): the schedule's blocks walked pair by
// pair through block_pair_visible, the predicate the kernels run, into a grid of cells.
#include "reports/attention_matrix_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attention/block_mask.hpp"
#include "core/error.hpp"
#include "core/markup_text.hpp"
#include "reports/layout_svg_parts.hpp"

namespace cplab::reports {
namespace {

using svg_parts::Canvas, svg_parts::num;

constexpr double kMargin = 16, kTop = 56, kSide = 480, kSmallSide = 150;
constexpr const char* kMaskedFill = "#e4e4e4";

// Rank r of C on the colour wheel, mid-light, so that the step labels read on every rank.
std::string rank_fill(std::int64_t r, std::int64_t cp) {
  const double hue =
      360.0 * static_cast<double>(r) / static_cast<double>(std::max<std::int64_t>(1, cp));
  const double s = 0.62, l = 0.55, c = (1 - std::fabs(2 * l - 1)) * s;
  const double h = hue / 60.0, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = l - c / 2;
  double rgb[3] = {0, 0, 0};
  const int sector = static_cast<int>(h) % 6;
  const double table[6][3] = {{c, x, 0}, {x, c, 0}, {0, c, x}, {0, x, c}, {x, 0, c}, {c, 0, x}};
  for (int i = 0; i < 3; ++i) rgb[i] = table[sector][i];
  const auto channel = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(rgb[0]), channel(rgb[1]), channel(rgb[2]));
}

// What one cell holds: its computed pairs, the first rank and step that compute one of them, and
// whether other ranks compute some too (a block-level cell under any algorithm; under ulysses and
// usp every cell, each rank of a group computing every pair on its own heads).
struct Cell {
  std::int64_t pairs = 0;
  std::int32_t rank = -1;
  std::int32_t step = -1;
  bool several = false;
};

class Grid {
 public:
  Grid(std::int64_t len, std::int64_t cells) : len_(len), n_(cells), cells_(cells * cells) {}
  std::int64_t side() const { return n_; }
  std::int64_t cell_of(std::int64_t slot) const { return slot * n_ / len_; }
  Cell& at(std::int64_t q, std::int64_t k) {
    return cells_[static_cast<std::size_t>(cell_of(q) * n_ + cell_of(k))];
  }
  const Cell& cell(std::int64_t i, std::int64_t j) const {
    return cells_[static_cast<std::size_t>(i * n_ + j)];
  }

 private:
  std::int64_t len_, n_;
  std::vector<Cell> cells_;
};

// Walks every pair every rank computes at the steps `only` (-1: all) into a grid.
Grid walk(const sim::AttentionSchedule& s, std::int64_t only) {
  Grid grid(s.padded_len, std::min(s.padded_len, kMatrixCells));
  const sim::MaskRule rule = s.mask.rule();
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    if (only >= 0 && static_cast<std::int64_t>(t) != only) continue;
    for (const sim::RankStep& rank : s.steps[t].ranks) {
      const std::vector<std::int64_t> qs = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> ks = s.buffer_slots(rank.keys);
      for (const sim::ScheduleBlock& b : rank.blocks) {
        for (std::int64_t i = b.q.begin; i < b.q.end; ++i) {
          const std::int64_t q = qs[static_cast<std::size_t>(i)];
          for (std::int64_t j = b.k.begin; j < b.k.end; ++j) {
            const std::int64_t k = ks[static_cast<std::size_t>(j)];
            if (!sim::block_pair_visible(static_cast<int>(b.mask), b.diagonal, i - b.q.begin,
                                         j - b.k.begin, s.facts[static_cast<std::size_t>(q)],
                                         s.facts[static_cast<std::size_t>(k)], rule))
              continue;
            Cell& c = grid.at(q, k);
            ++c.pairs;
            if (c.rank < 0) {
              c.rank = static_cast<std::int32_t>(rank.rank);
              c.step = static_cast<std::int32_t>(t);
            } else if (c.rank != rank.rank) {
              c.several = true;
            }
          }
        }
      }
    }
  }
  return grid;
}

// One matrix at (x0, y0), `side` px a side: its cells, a run of equal cells as one rectangle,
// then the document and span boundaries.
void draw_matrix(Canvas& svg, const sim::AttentionSchedule& s, const Grid& grid, double x0,
                 double y0, double side, bool labels) {
  const std::int64_t n = grid.side();
  const double cell = side / static_cast<double>(n);
  const bool slot_cells = n == s.padded_len;
  svg.rect(x0, y0, side, side, kMaskedFill);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const Cell& c = grid.cell(i, j);
      if (c.pairs == 0) continue;
      const std::string fill = rank_fill(c.rank, s.cp);
      const std::string title = fmt::format(
          "{} {} × {} {}: {} pair{} computed, by rank {}{}, first at step {}",
          slot_cells ? "query slot" : "query cell", i, slot_cells ? "key slot" : "key cell", j,
          c.pairs, c.pairs == 1 ? "" : "s", c.rank, c.several ? " and others" : "", c.step);
      svg.line(fmt::format(
          R"(<g data-q="{}" data-k="{}" data-rank="{}" data-step="{}"><title>{}</title>)", i, j,
          c.rank, c.step, escape_markup(title)));
      svg.rect(x0 + static_cast<double>(j) * cell, y0 + static_cast<double>(i) * cell, cell, cell,
               fill, c.several ? R"( fill-opacity="0.6")" : "");
      if (labels && cell >= 13)
        svg.text(x0 + (static_cast<double>(j) + 0.5) * cell,
                 y0 + (static_cast<double>(i) + 0.7) * cell, std::to_string(c.step),
                 fmt::format(R"( text-anchor="middle" font-size="{}" fill="#fff")",
                             num(std::min(11.0, cell * 0.6))));
      svg.line("</g>");
    }
  }
  // Boundaries between documents (solid) and around spans (dashed), at slot positions; one of
  // each kind per cell at most (a row of many short documents draws a line per cell, not per
  // document).
  const auto at = [&](std::int64_t g) {
    return static_cast<double>(g) * side / static_cast<double>(s.padded_len);
  };
  std::vector<char> drawn(static_cast<std::size_t>(2 * (n + 1)), 0);
  for (std::int64_t g = 1; g < s.padded_len; ++g) {
    const auto u = static_cast<std::size_t>(g);
    const bool doc = s.doc_ids[u] != s.doc_ids[u - 1];
    const bool span = !doc && s.facts[u].span != s.facts[u - 1].span;
    if (!doc && !span) continue;
    char& seen = drawn[static_cast<std::size_t>(2 * grid.cell_of(g) + (doc ? 0 : 1))];
    if (seen != 0) continue;
    seen = 1;
    const std::string style =
        doc ? R"( stroke="#222" stroke-width="1")" : R"( stroke="#222" stroke-dasharray="3,2")";
    svg.line(fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"{3}/>)", num(x0 + at(g)),
                         num(y0), num(y0 + side), style));
    svg.line(fmt::format(R"(<line x1="{1}" y1="{0}" x2="{2}" y2="{0}"{3}/>)", num(y0 + at(g)),
                         num(x0), num(x0 + side), style));
  }
  svg.rect(x0, y0, side, side, "none", R"( stroke="#888")");
}

}  // namespace

std::string attention_matrix_svg(const sim::AttentionSchedule& s, const std::string& title,
                                 bool per_step) {
  // Every (query, key) position of every computed block, before any is walked.
  std::int64_t walked = 0;
  for (const sim::ScheduleStep& step : s.steps)
    for (const sim::RankStep& rank : step.ranks)
      for (const sim::ScheduleBlock& b : rank.blocks) {
        walked += b.q.size() * b.k.size() * (per_step ? 2 : 1);
        CPLAB_CHECK(walked <= kMaxMatrixWalk,
                    "the attention matrix walks every pair of every computed block: past {} at "
                    "L={} (cplab's bound); draw a shorter row",
                    kMaxMatrixWalk, s.padded_len);
      }
  const std::int64_t steps = static_cast<std::int64_t>(s.steps.size());
  const std::int64_t per_row =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(kSide / (kSmallSide + kMargin)) + 1);
  const std::int64_t small_rows = per_step ? (steps + per_row - 1) / per_row : 0;
  const double width =
      std::max(kSide + 2 * kMargin + 140,
               per_step ? static_cast<double>(per_row) * (kSmallSide + kMargin) + kMargin : 0.0);
  const double height = kTop + kSide + 40 + static_cast<double>(small_rows) * (kSmallSide + 36);
  Canvas svg;
  svg.open_picture(width, height, kMargin, title);
  const Grid whole = walk(s, -1);
  svg.text(
      kMargin, 40,
      fmt::format("attention matrix, mask {}: queries down, keys across{} · colour: the rank "
                  "computing the pair · number: its step · grey: not computed",
                  sim::mask_text(s.mask),
                  whole.side() < s.padded_len ? fmt::format(" (about {:.1f} slots a cell)",
                                                            static_cast<double>(s.padded_len) /
                                                                static_cast<double>(whole.side()))
                                              : ""));
  draw_matrix(svg, s, whole, kMargin, kTop, kSide, true);
  // The legend: one swatch per rank (up to 16 named).
  for (std::int64_t r = 0; r < std::min<std::int64_t>(s.cp, 16); ++r) {
    const double y = kTop + static_cast<double>(r) * 18;
    svg.rect(kMargin + kSide + 16, y, 12, 12, rank_fill(r, s.cp));
    svg.text(kMargin + kSide + 34, y + 10, fmt::format("rank {}", r));
  }
  for (std::int64_t t = 0; per_step && t < steps; ++t) {
    const double x = kMargin + static_cast<double>(t % per_row) * (kSmallSide + kMargin);
    const double y = kTop + kSide + 40 + static_cast<double>(t / per_row) * (kSmallSide + 36);
    svg.text(x, y + 12,
             fmt::format("step {} · {}", t,
                         sim::exchange_name(s.steps[static_cast<std::size_t>(t)].exchange)));
    draw_matrix(svg, s, walk(s, t), x, y + 18, kSmallSide, false);
  }
  svg.line("</svg>");
  return svg.out;
}

std::string attention_matrix_svg_or_note(const sim::AttentionSchedule& schedule,
                                         const std::string& title, bool per_step) {
  try {
    return attention_matrix_svg(schedule, title, per_step);
  } catch (const Error& e) {
    return fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="900" height="30" font-family="sans-serif")"
        R"( font-size="12"><text x="16" y="20">attention matrix not drawn: {}</text></svg>)",
        escape_markup(e.what()));
  }
}

}  // namespace cplab::reports
