#pragma once
// Internal to the layout picture: the geometry and drawing helpers shared by layout_svg.cpp
// (colours, work panel, legend, the whole picture) and layout_svg_parts.cpp (the global stream and
// the rank bands). Not part of reports' interface.
#include <cstdint>
#include <string>

#include "core/shard_plan.hpp"

namespace cplab::reports::svg_parts {

inline constexpr double kLeft = 96;         // rank labels sit left of the drawing
inline constexpr double kPanelWidth = 290;  // valid / work columns and the work bar, right of it

std::string num(double v);                       // a coordinate, two decimals
int hex_channel(const std::string& hex, int i);  // "#rrggbb": 0 red, 1 green, 2 blue
// Dark text on light fills, white on dark ones; pattern fills (tints, grey) count as light.
const char* ink_on(const std::string& fill);
// Whether a cell `cell` px wide holds the decimal label `largest` in the 10 px label font.
bool label_fits(double cell, std::int64_t largest);
// Slot g's fill: its document's colour, its document's pad hatch, or the row-padding hatch.
std::string slot_fill(const RowPlan& row, std::int64_t g);

struct Geometry {
  std::int64_t cp = 1, len = 0, local = 0;
  double draw_w = 0, stream_cell = 0, band_cell = 0;
  double band_top = 168, band_h = 24, band_gap = 10, panel_x = 0;
  double band_y(std::int64_t r) const {
    return band_top + static_cast<double>(r) * (band_h + band_gap);
  }
  double bands_end() const { return band_y(cp) - band_gap; }
};
Geometry make_geometry(const RowPlan& row);

struct Canvas {
  std::string out;
  void line(const std::string& element) {
    out += element;
    out += '\n';
  }
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& attrs = "");
  void text(double x, double y, const std::string& body, const std::string& attrs = "");
  void vline(double x, double y0, double y1, const std::string& attrs);
  // The root element of a `width` × `height` picture on white, with `title` in bold at (x, 22).
  void open_picture(double width, double height, double x, const std::string& title);
};

// Ticks at a 1-2-5 step at least 40 px apart under cells `cell` px wide, named on the left.
void draw_axis(Canvas& svg, double y, double cell, std::int64_t count, const char* name);
void draw_global(Canvas& svg, const RowPlan& row, const Geometry& geo);
void draw_band(Canvas& svg, const RowPlan& row, const Geometry& geo, std::int64_t r);

}  // namespace cplab::reports::svg_parts
