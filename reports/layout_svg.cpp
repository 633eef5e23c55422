// The layout picture (see layout_svg.hpp): colours, hatch patterns, the work panel, the legend and
// the assembly; the global stream and the rank bands are drawn in layout_svg_parts.cpp.
#include "reports/layout_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "reference/work.hpp"
#include "reports/layout_svg_parts.hpp"

namespace cplab::reports {
namespace {

using svg_parts::Canvas, svg_parts::Geometry, svg_parts::kLeft, svg_parts::kPanelWidth;
using svg_parts::hex_channel, svg_parts::label_fits, svg_parts::num;

// Tableau 10 without its grey, which padding keeps for itself.
constexpr std::array<const char*, 9> kDocPalette = {"#4e79a7", "#f28e2b", "#e15759",
                                                    "#76b7b2", "#59a14f", "#edc948",
                                                    "#b07aa1", "#ff9da7", "#9c755f"};
// Viridis anchors: ordered by lightness, and unlike the document palette.
constexpr std::array<std::array<double, 3>, 5> kRankRamp = {
    {{68, 1, 84}, {59, 82, 139}, {33, 144, 141}, {93, 201, 99}, {253, 231, 37}}};

std::size_t palette_slot(std::int32_t doc) {
  return static_cast<std::size_t>(std::max(doc, 1) - 1) % kDocPalette.size();
}

void draw_defs(Canvas& svg) {
  svg.line("<defs>");
  for (std::size_t i = 0; i < kDocPalette.size(); ++i) {
    // The document's hue at 45% over white under grey stripes: its own, and plainly not a token.
    const auto tint = [&](int c) {
      return static_cast<int>(std::lround(255 - 0.45 * (255 - hex_channel(kDocPalette[i], c))));
    };
    svg.line(fmt::format(
        R"(<pattern id="docpad{}" width="5" height="5" patternUnits="userSpaceOnUse" )"
        R"~(patternTransform="rotate(45)"><rect width="5" height="5" fill="#{:02x}{:02x}{:02x}"/>)~"
        R"(<line x1="1" y1="0" x2="1" y2="5" stroke="#707070" stroke-width="1.6"/></pattern>)",
        i, tint(0), tint(1), tint(2)));
  }
  svg.line(R"(<pattern id="rowpad" width="6" height="6" patternUnits="userSpaceOnUse">)"
           R"(<rect width="6" height="6" fill="#d6d6d6"/>)"
           R"(<path d="M0,0L6,6M6,0L0,6" stroke="#9a9a9a" stroke-width="0.8"/></pattern>)");
  svg.line("</defs>");
}

// Right of the bands: valid tokens, causal work (the largest bold) and a bar per rank, with the
// mean as a dashed line, so the imbalance is visible as the gap between the longest bar and it.
void draw_panel(Canvas& svg, const RowPlan& row, const Geometry& geo,
                const std::vector<std::int64_t>& work) {
  const double x = geo.panel_x, bar_x = x + 150, bar_w = 110;
  svg.text(x + 50, geo.band_top - 12, "valid", R"( text-anchor="end" class="caption")");
  svg.text(x + 140, geo.band_top - 12, "causal work", R"( text-anchor="end" class="caption")");
  const std::int64_t most = std::max<std::int64_t>(1, *std::max_element(work.begin(), work.end()));
  for (std::int64_t r = 0; r < geo.cp; ++r) {
    const double y = geo.band_y(r), h = std::min(geo.band_h, 14.0),
                 baseline = y + geo.band_h / 2 + 4;
    svg.text(x + 50, baseline, std::to_string(row.valid_tokens[r]), R"( text-anchor="end")");
    svg.text(
        x + 140, baseline, std::to_string(work[r]),
        work[r] == most ? R"( text-anchor="end" font-weight="bold")" : R"( text-anchor="end")");
    svg.rect(bar_x, y + (geo.band_h - h) / 2,
             bar_w * static_cast<double>(work[r]) / static_cast<double>(most), h,
             rank_colour(r, geo.cp), R"( class="work")");
  }
  const double total =
      static_cast<double>(std::accumulate(work.begin(), work.end(), std::int64_t{0}));
  const double mean_x = bar_x + bar_w * total / static_cast<double>(geo.cp * most);
  svg.vline(mean_x, geo.band_top - 4, geo.bands_end() + 4,
            R"( stroke="#c00" stroke-dasharray="3,2")");
  svg.text(mean_x, geo.bands_end() + 16, "mean",
           R"( text-anchor="middle" class="tick" fill="#c00")");
}

// Legend items flow left to right and wrap at the picture's width; returns the last line's y.
double draw_legend(Canvas& svg, const RowPlan& row, const Geometry& geo, double y, double width) {
  std::vector<std::pair<std::string, std::string>> items;  // fill ("": words only), words
  const auto docs = row.packed ? static_cast<std::int32_t>(row.cu_seqlens_padded.size()) - 1 : 1;
  const auto shown = std::min(docs, static_cast<std::int32_t>(kDocPalette.size()));
  for (std::int32_t d = 1; d <= shown; ++d) {
    items.emplace_back(document_colour(d), row.packed ? fmt::format("document {}", d) : "token");
  }
  if (docs > shown) items.emplace_back("", fmt::format("(colours repeat; {} documents)", docs));
  if (row.packed) items.emplace_back(document_pad_fill(1), "document padding");
  items.emplace_back(row_pad_fill(), "row padding");
  double x = kLeft;
  for (const auto& [fill, words] : items) {
    const double item_w = 38 + 7.0 * static_cast<double>(words.size());
    if (x + item_w > width - 8 && x > kLeft) {
      x = kLeft;
      y += 20;
    }
    if (!fill.empty()) svg.rect(x, y - 11, 16, 14, fill, R"( stroke="#888" stroke-width="0.5")");
    svg.text(x + (fill.empty() ? 0 : 22), y, words);
    x += item_w;
  }
  const std::string cells = label_fits(geo.band_cell, geo.len - 1)
                                ? "cell label: global index"
                                : "grey under a band: global position, light = start, dark = end";
  svg.text(kLeft, y + 22, cells + " · black tick: the local order jumps in global index",
           R"( class="tick")");
  svg.text(kLeft, y + 36,
           "causal work: real keys the rank's real queries see (document-causal) · imbalance: "
           "max/mean",
           R"( class="tick")");
  return y + 36;
}

void check_shapes(const RowPlan& row, const std::vector<std::int64_t>& work) {
  const auto cp = static_cast<std::size_t>(std::max<std::int64_t>(row.cp, 0));
  const auto len = static_cast<std::size_t>(std::max<std::int64_t>(row.padded_len, 0));
  CPLAB_CHECK(
      row.cp >= 1 && row.index.size() == cp && work.size() == cp && row.valid_tokens.size() == cp,
      "layout picture: cp={} but {} index maps, {} work entries, {} valid counts", row.cp,
      row.index.size(), work.size(), row.valid_tokens.size());
  CPLAB_CHECK(row.doc_ids.size() == len && row.real.size() == len && row.positions.size() == len,
              "layout picture: L={} but {} doc ids, {} real flags, {} positions", row.padded_len,
              row.doc_ids.size(), row.real.size(), row.positions.size());
  for (const auto& index : row.index) {
    CPLAB_CHECK(static_cast<std::int64_t>(index.size()) == row.local_len(),
                "layout picture: a rank holds {} slots, not L/C = {}", index.size(),
                row.local_len());
    for (std::int64_t g : index) {
      CPLAB_CHECK(g >= 0 && g < row.padded_len, "layout picture: slot {} outside L={}", g,
                  row.padded_len);
    }
  }
}

void check_marks(const RowPlan& row, const TargetMarks& marks) {
  CPLAB_CHECK(static_cast<std::int64_t>(marks.size()) == row.cp,
              "layout picture: {} rows of target marks for cp={}", marks.size(), row.cp);
  for (const auto& rank : marks) {
    CPLAB_CHECK(static_cast<std::int64_t>(rank.size()) == row.local_len(),
                "layout picture: {} target marks for a rank of L/C = {} slots", rank.size(),
                row.local_len());
  }
}

// On top of each band: a red notch over a slot whose target another rank holds, a grey bar under
// one that has none.
void draw_marks(Canvas& svg, const Geometry& geo, const TargetMarks& marks) {
  for (std::int64_t r = 0; r < geo.cp; ++r) {
    const double y = geo.band_y(r);
    for (std::size_t k = 0; k < marks[r].size(); ++k) {
      const double x = kLeft + static_cast<double>(k) * geo.band_cell;
      const double w = std::max(1.0, geo.band_cell * 0.6);
      const double x0 = x + (geo.band_cell - w) / 2;
      if (marks[r][k] == TargetMark::fetched) {
        svg.rect(
            x0, y - 4, w, 4, "#d62728",
            fmt::format(R"( class="target" data-kind="fetched" data-rank="{}" data-k="{}")", r, k));
      } else if (marks[r][k] == TargetMark::none) {
        svg.rect(
            x0, y + geo.band_h - 3, w, 2.5, "#555",
            fmt::format(R"( class="target" data-kind="none" data-rank="{}" data-k="{}")", r, k));
      }
    }
  }
}

}  // namespace

std::string prefix_svg_ids(const std::string& svg, const std::string& prefix) {
  std::string out;
  out.reserve(svg.size());
  for (std::size_t i = 0; i < svg.size();) {
    if (svg.compare(i, 4, "id=\"") == 0 && (i == 0 || svg[i - 1] == ' ')) {
      out += "id=\"" + prefix;
      i += 4;
    } else if (svg.compare(i, 5, "url(#") == 0) {
      out += "url(#" + prefix;
      i += 5;
    } else {
      out += svg[i++];
    }
  }
  return out;
}

std::string stack_svgs(const std::vector<std::string>& pictures) {
  double width = 0, height = 0;
  std::string body;
  for (std::size_t i = 0; i < pictures.size(); ++i) {
    const std::string& svg = pictures[i];
    const auto attr = [&](const char* name) {
      const std::string key = std::string(" ") + name + "=\"";
      const std::size_t at = svg.find(key);
      CPLAB_CHECK(at != std::string::npos, "stack_svgs: picture {} has no {}", i, name);
      return std::stod(svg.substr(at + key.size()));
    };
    const double w = attr("width"), h = attr("height");
    // The nested picture keeps its own root element, moved down by the pictures above it.
    std::string nested = prefix_svg_ids(svg, fmt::format("p{}_", i));
    nested.insert(4, fmt::format(R"( x="0" y="{}")", num(height)));
    body += nested;
    width = std::max(width, w);
    height += h + 12;
  }
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}">)"
      "\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n{2}</svg>\n",
      num(width), num(height), body);
}

std::string document_colour(std::int32_t doc) { return kDocPalette[palette_slot(doc)]; }
std::string document_pad_fill(std::int32_t doc) {
  return fmt::format("url(#docpad{})", palette_slot(doc));
}
std::string row_pad_fill() { return "url(#rowpad)"; }

std::string rank_colour(std::int64_t rank, std::int64_t cp) {
  const double t =
      cp > 1 ? std::clamp(static_cast<double>(rank) / static_cast<double>(cp - 1), 0.0, 1.0) : 0.0;
  const double pos = t * static_cast<double>(kRankRamp.size() - 1);
  const auto lo = std::min(static_cast<std::size_t>(pos), kRankRamp.size() - 2);
  const double f = pos - static_cast<double>(lo);
  const auto mix = [&](std::size_t i) {
    return static_cast<int>(std::lround(kRankRamp[lo][i] * (1 - f) + kRankRamp[lo + 1][i] * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

std::string layout_svg(const RowPlan& row, const std::vector<std::int64_t>& work,
                       const std::string& title, const TargetMarks* marks) {
  check_picture_slots(row.padded_len);
  check_shapes(row, work);
  if (marks != nullptr) check_marks(row, *marks);
  const Geometry geo = svg_parts::make_geometry(row);
  const double width = geo.panel_x + kPanelWidth;
  Canvas body;
  draw_defs(body);
  body.text(kLeft, 24, title, R"( class="title")");
  const std::string kind =
      row.packed ? "packed row" : fmt::format("BSHD row of S = {}", row.original_len);
  body.text(
      kLeft, 44,
      fmt::format("L = {} ({}) · {} tokens per rank · imbalance {:.3f} (max/mean causal work)",
                  row.padded_len, kind, geo.local, reference::imbalance(work)));
  svg_parts::draw_global(body, row, geo);
  body.text(kLeft, geo.band_top - 12, "rank bands: local tokens in local order",
            R"( class="caption")");
  for (std::int64_t r = 0; r < geo.cp; ++r) svg_parts::draw_band(body, row, geo, r);
  if (marks != nullptr) draw_marks(body, geo, *marks);
  draw_panel(body, row, geo, work);
  svg_parts::draw_axis(body, geo.bands_end() + 6, geo.band_cell, geo.local, "local");
  double bottom = draw_legend(body, row, geo, geo.bands_end() + 50, width);
  if (marks != nullptr) {
    body.rect(kLeft, bottom + 9, 8, 6, "#d62728");
    body.text(kLeft + 14, bottom + 16, "loss target fetched from another rank", R"( class="tick")");
    body.rect(kLeft + 300, bottom + 13, 10, 2.5, "#555");
    body.text(kLeft + 316, bottom + 16, "no target (document end, IGNORE label, pad)",
              R"( class="tick")");
    bottom += 18;
  }
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">)"
      "\n<style>.title{{font-size:15px;font-weight:bold}} .caption{{fill:#444}} "
      ".label{{font-size:10px}} .tick{{font-size:10px;fill:#555}} .rank{{font-weight:bold}}"
      "</style>\n"
      R"(<rect width="100%" height="100%" fill="#fff"/>)"
      "\n{2}</svg>\n",
      num(width), num(bottom + 14), body.out);
}

void check_picture_slots(std::int64_t padded_len) {
  CPLAB_CHECK(padded_len <= kMaxPictureSlots,
              "a layout picture draws every slot: at most {} (L={}); draw a shorter row, or read "
              "the rank lists with --json",
              kMaxPictureSlots, padded_len);
}

void write_layout_svg(const std::string& path, const RowPlan& row,
                      const std::vector<std::int64_t>& work, const std::string& title) {
  write_output_file(path, layout_svg(row, work, title));
}

}  // namespace cplab::reports
