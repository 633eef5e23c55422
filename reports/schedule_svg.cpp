// The schedule picture (schedule_svg.hpp): a step × rank grid shaded by work.
#include "reports/schedule_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/markup_text.hpp"
#include "reports/layout_svg_parts.hpp"

namespace cplab::reports {
namespace {

using svg_parts::Canvas, svg_parts::num;

constexpr double kLabelWidth = 150, kTop = 64, kCellHeight = 34, kMargin = 16;

// White to a dark blue by the fraction of the largest work, so equal cells read as equal shades.
std::string work_fill(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  const auto channel = [&](double dark) {
    return static_cast<int>(std::lround(255 - f * (255 - dark)));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(8), channel(48), channel(107));
}

// 1234567 → "1.23M": cells are narrow.
std::string short_count(std::int64_t n) {
  const double v = static_cast<double>(n);
  if (n >= 1'000'000'000) return fmt::format("{:.3g}G", v / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.3g}M", v / 1e6);
  if (n >= 10'000) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{}", n);
}

std::string blocks_text(const sim::RankStep& rank) {
  std::int64_t counts[3] = {0, 0, 0};
  for (const sim::ScheduleBlock& b : rank.blocks) ++counts[static_cast<int>(b.mask)];
  return fmt::format("{} full, {} causal, {} doc-causal, {} skipped", counts[0], counts[1],
                     counts[2], rank.skipped_blocks);
}

}  // namespace

std::string schedule_svg(const sim::AttentionSchedule& s, const std::string& title) {
  const auto cp = static_cast<double>(s.cp);
  const double cell_w = std::clamp(860.0 / cp, 44.0, 110.0);
  const double width = kLabelWidth + cp * cell_w + 2 * kMargin;
  const double height = kTop + static_cast<double>(s.steps.size()) * kCellHeight + 40;
  std::int64_t largest = 1;
  for (const sim::ScheduleStep& step : s.steps)
    for (const sim::RankStep& rank : step.ranks) largest = std::max(largest, rank.work);
  Canvas svg;
  svg.open_picture(width, height, kMargin, title);
  const double ratio = s.ideal > 0 ? static_cast<double>(s.critical_path) / s.ideal : 1.0;
  svg.text(kMargin, 40,
           fmt::format("critical path {} (Σ over steps of the busiest rank), ideal {:.0f} "
                       "(total / C), ratio {:.4f}",
                       s.critical_path, s.ideal, ratio));
  for (std::int64_t r = 0; r < s.cp; ++r) {
    svg.text(kMargin + kLabelWidth + (static_cast<double>(r) + 0.5) * cell_w, kTop - 6,
             fmt::format("rank {}", r), R"( text-anchor="middle")");
  }
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    const sim::ScheduleStep& step = s.steps[t];
    const double y = kTop + static_cast<double>(t) * kCellHeight;
    svg.text(kMargin, y + kCellHeight / 2 + 4,
             fmt::format("step {} · {}", t, sim::exchange_name(step.exchange)));
    std::int64_t busiest = 0;
    for (const sim::RankStep& rank : step.ranks) busiest = std::max(busiest, rank.work);
    for (const sim::RankStep& rank : step.ranks) {
      const double x = kMargin + kLabelWidth + static_cast<double>(rank.rank) * cell_w;
      const double fraction = static_cast<double>(rank.work) / static_cast<double>(largest);
      const std::string fill = work_fill(fraction);
      const bool critical = rank.work == busiest;
      svg.line(fmt::format(
          R"(<g data-step="{}" data-rank="{}" data-work="{}"><title>{}</title>)", t, rank.rank,
          rank.work,
          escape_markup(fmt::format(
              "step {}, rank {}: K/V from {}; work {}; {}; {} B in forward, {} B "
              "in backward",
              t, rank.rank, rank.kv_from < 0 ? "several ranks" : std::to_string(rank.kv_from),
              rank.work, blocks_text(rank), rank.bytes_received, rank.backward_bytes_received))));
      svg.rect(x + 1, y + 1, cell_w - 2, kCellHeight - 2, fill,
               critical ? R"( stroke="#d62728" stroke-width="2")" : R"( stroke="#bbb")");
      svg.text(
          x + cell_w / 2, y + kCellHeight / 2 + 4, short_count(rank.work),
          fmt::format(R"( text-anchor="middle" fill="{}")", fraction > 0.55 ? "#fff" : "#222"));
      svg.line("</g>");
    }
  }
  svg.text(kMargin, height - 14,
           "shade: work (pairs × heads) against the largest cell · red: each step's busiest rank");
  svg.line("</svg>");
  return svg.out;
}

std::string schedule_page(const std::string& title, const std::string& svg,
                          const std::string& table) {
  return fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:24px}}pre{{font-size:12px}}</style>"
      "</head>\n<body>\n<h1>{0}</h1>\n{1}\n<pre>{2}</pre>\n</body></html>\n",
      escape_markup(title), svg, escape_markup(table, LineBreaks::keep));
}

}  // namespace cplab::reports
