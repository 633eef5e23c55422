// The global stream and the rank bands of the layout picture. Both span one drawing width, so a
// band cell is C times wider than a stream cell. As L grows cells shrink, and labels, separators
// and per-slot rectangles of the stream strips drop out; a grey ramp under each band then says
// where in the stream each local piece comes from.
#include "reports/layout_svg_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/markup_text.hpp"
#include "reports/layout_svg.hpp"

namespace cplab::reports::svg_parts {

std::string num(double v) { return fmt::format("{:.2f}", v); }

int hex_channel(const std::string& hex, int i) {
  return std::stoi(hex.substr(static_cast<std::size_t>(1 + 2 * i), 2), nullptr, 16);
}

const char* ink_on(const std::string& fill) {
  if (fill.size() != 7 || fill[0] != '#') return "#222";
  const double luma =
      0.299 * hex_channel(fill, 0) + 0.587 * hex_channel(fill, 1) + 0.114 * hex_channel(fill, 2);
  return luma > 150 ? "#222" : "#fff";
}

bool label_fits(double cell, std::int64_t largest) {
  // 6 px per digit of the 10 px monospace label font, and 2 px of air either side.
  return cell >= 6.0 * static_cast<double>(std::to_string(largest).size()) + 4;
}

std::string slot_fill(const RowPlan& row, std::int64_t g) {
  if (row.real[g]) return document_colour(row.doc_ids[g]);
  return row.doc_ids[g] > 0 ? document_pad_fill(row.doc_ids[g]) : row_pad_fill();
}

Geometry make_geometry(const RowPlan& row) {
  Geometry geo{.cp = row.cp, .len = row.padded_len, .local = row.local_len()};
  // ~32 px per band cell fits a 4-digit label; past 1200 px cells shrink instead. 420 px at least
  // keeps the captions over the drawing.
  geo.draw_w = std::clamp(32.0 * static_cast<double>(geo.local), 420.0, 1200.0);
  geo.stream_cell = geo.len > 0 ? geo.draw_w / static_cast<double>(geo.len) : 0;
  geo.band_cell = geo.local > 0 ? geo.draw_w / static_cast<double>(geo.local) : 0;
  if (geo.cp > 16) {  // many ranks: thinner bands keep the picture on a screen
    geo.band_h = std::max(8.0, 384.0 / static_cast<double>(geo.cp));
    geo.band_gap = 7;
  }
  geo.panel_x = kLeft + geo.draw_w + 20;
  return geo;
}

void Canvas::rect(double x, double y, double w, double h, const std::string& fill,
                  const std::string& attrs) {
  line(fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"{}/>)", num(x), num(y),
                   num(w), num(h), fill, attrs));
}

void Canvas::text(double x, double y, const std::string& body, const std::string& attrs) {
  line(fmt::format(R"(<text x="{}" y="{}"{}>{}</text>)", num(x), num(y), attrs,
                   escape_markup(body)));
}

void Canvas::open_picture(double width, double height, double x, const std::string& title) {
  line(fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(font-family="sans-serif" font-size="11">)",
      num(width), num(height)));
  line(R"(<rect width="100%" height="100%" fill="#fff"/>)");
  text(x, 22, title, R"( font-size="14" font-weight="bold")");
}

void Canvas::vline(double x, double y0, double y1, const std::string& attrs) {
  line(fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"{3}/>)", num(x), num(y0), num(y1),
                   attrs));
}

void draw_axis(Canvas& svg, double y, double cell, std::int64_t count, const char* name) {
  svg.text(kLeft - 8, y + 15, name, R"( text-anchor="end" class="tick")");
  if (count <= 0) return;  // an empty row has zero-width cells and no ticks
  std::int64_t step = 1;
  for (std::int64_t scale = 1; static_cast<double>(step) * cell < 40; scale *= 10) {
    for (std::int64_t m : {1, 2, 5}) {
      step = m * scale;
      if (static_cast<double>(step) * cell >= 40) break;
    }
  }
  for (std::int64_t i = 0; i < count; i += step) {
    const double x = kLeft + (static_cast<double>(i) + 0.5) * cell;
    svg.vline(x, y, y + 4, R"( stroke="#555")");
    svg.text(x, y + 15, std::to_string(i), R"( text-anchor="middle" class="tick")");
  }
}

namespace {

// One strip of the global stream: a rectangle per slot while slots are wide enough to see, else
// runs of equal fill (thousands of sub-pixel rectangles only add seams and bytes).
template <typename FillOf>
void draw_strip(Canvas& svg, const Geometry& geo, double y, double h, FillOf fill_of) {
  const bool per_slot = geo.stream_cell >= 4;
  for (std::int64_t g = 0, end = 1; g < geo.len; g = end, end = g + 1) {
    const std::string fill = fill_of(g);
    while (!per_slot && end < geo.len && fill_of(end) == fill) ++end;
    svg.rect(kLeft + static_cast<double>(g) * geo.stream_cell, y,
             static_cast<double>(end - g) * geo.stream_cell, h, fill,
             per_slot ? R"( stroke="#fff" stroke-width="0.5")" : "");
  }
}

// Slot g's grey on the ramp under the bands: light at the stream's start, dark at its end.
int ramp_grey(std::int64_t g, std::int64_t len) {
  const double last = static_cast<double>(std::max<std::int64_t>(len - 1, 1));
  return static_cast<int>(std::lround(215 - 180.0 * static_cast<double>(g) / last));
}

}  // namespace

void draw_global(Canvas& svg, const RowPlan& row, const Geometry& geo) {
  svg.text(kLeft, 70, "global stream: owning rank, and document below it", R"( class="caption")");
  std::vector<std::int64_t> owner(static_cast<std::size_t>(geo.len), 0);
  for (std::int64_t r = 0; r < geo.cp; ++r) {
    for (std::int64_t g : row.index[r]) owner[g] = r;
  }
  draw_strip(svg, geo, 78, 20, [&](std::int64_t g) { return rank_colour(owner[g], geo.cp); });
  draw_strip(svg, geo, 100, 8, [&](std::int64_t g) { return slot_fill(row, g); });
  for (std::int64_t g = 0; label_fits(geo.stream_cell, geo.cp - 1) && g < geo.len; ++g) {
    svg.text(kLeft + (static_cast<double>(g) + 0.5) * geo.stream_cell, 92, std::to_string(owner[g]),
             fmt::format(R"( text-anchor="middle" class="label" fill="{}")",
                         ink_on(rank_colour(owner[g], geo.cp))));
  }
  draw_axis(svg, 110, geo.stream_cell, geo.len, "global");
}

void draw_band(Canvas& svg, const RowPlan& row, const Geometry& geo, std::int64_t r) {
  const double y = geo.band_y(r), cell = geo.band_cell;
  const auto& index = row.index[r];
  const bool thin = cell < 4, labels = label_fits(cell, geo.len - 1);
  // Thin cells overlap their right neighbour and snap to pixels, so that no background seam shows.
  svg.line(fmt::format(R"(<g class="band" data-rank="{}"{}>)", r,
                       thin ? R"( shape-rendering="crispEdges")" : ""));
  svg.rect(kLeft - 16, y, 10, geo.band_h, rank_colour(r, geo.cp));
  svg.text(kLeft - 22, y + geo.band_h / 2 + 4, fmt::format("rank {}", r),
           R"( text-anchor="end" class="rank")");
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::int64_t g = index[k];
    const double x = kLeft + static_cast<double>(k) * cell;
    const std::string fill = slot_fill(row, g);
    const char* kind = row.real[g]          ? ""
                       : row.doc_ids[g] > 0 ? ", document padding"
                                            : ", row padding";
    svg.line(fmt::format(
        R"(<rect class="cell" data-rank="{}" data-g="{}" data-doc="{}" x="{}" y="{}" width="{}" )"
        R"(height="{}" fill="{}"{}><title>rank {} local {}: global {}, document {}, position {}{})"
        "</title></rect>",
        r, g, row.doc_ids[g], num(x), num(y), num(thin ? cell + 0.6 : cell), num(geo.band_h), fill,
        thin ? "" : R"( stroke="#fff" stroke-width="0.5")", r, k, g, row.doc_ids[g],
        row.positions[g], kind));
    if (labels) {
      svg.text(x + cell / 2, y + geo.band_h / 2 + 4, std::to_string(g),
               fmt::format(R"( text-anchor="middle" class="label" fill="{}")", ink_on(fill)));
    }
  }
  // Pieces of the local stream that are contiguous in the global one: a tick where each new one
  // begins (unless pieces are so narrow that ticks would hide the colours), and when the cells are
  // too narrow for labels, a grey ramp under the band from the piece's first slot to its last.
  std::vector<std::size_t> starts{0};
  for (std::size_t k = 1; k < index.size(); ++k) {
    if (index[k] != index[k - 1] + 1) starts.push_back(k);
  }
  const bool ticks =
      cell * static_cast<double>(index.size()) / static_cast<double>(starts.size()) >= 6;
  for (std::size_t i = 0; i < starts.size() && !index.empty(); ++i) {
    const std::size_t begin = starts[i], end = i + 1 < starts.size() ? starts[i + 1] : index.size();
    const double x0 = kLeft + static_cast<double>(begin) * cell;
    const double x1 = kLeft + static_cast<double>(end) * cell;
    if (ticks && begin > 0) {
      svg.vline(x0, y - 3, y + geo.band_h + 3, R"( class="jump" stroke="#111" stroke-width="1.5")");
    }
    if (labels) continue;
    const int grey0 = ramp_grey(index[begin], geo.len), grey1 = ramp_grey(index[end - 1], geo.len);
    svg.line(fmt::format(
        R"(<linearGradient id="ramp{}_{}" gradientUnits="userSpaceOnUse" x1="{}" x2="{}" y1="0" )"
        R"(y2="0"><stop offset="0" stop-color="#{:02x}{:02x}{:02x}"/><stop offset="1" )"
        R"(stop-color="#{:02x}{:02x}{:02x}"/></linearGradient>)",
        r, i, num(x0), num(x1), grey0, grey0, grey0, grey1, grey1, grey1));
    svg.rect(x0, y + geo.band_h + 1, x1 - x0, 5, fmt::format("url(#ramp{}_{})", r, i),
             R"( class="ramp")");
  }
  svg.line("</g>");
}

}  // namespace cplab::reports::svg_parts
