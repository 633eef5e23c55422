// explain's SVG (the layout pictures, targets marked, one under the other after a table) and its
// self-contained HTML page (XHTML, so XML tools read it too), and the cost model's bytes.
#include <fmt/format.h>

#include <algorithm>

#include "core/markup_text.hpp"
#include "layouts/cost_model.hpp"
#include "reports/layout_explain.hpp"
#include "reports/layout_svg_parts.hpp"

namespace cplab::reports {
namespace {

std::uint64_t most(const LayoutStory& s, std::size_t verb) {
  std::uint64_t out = 0;
  for (const RankStory& r : s.ranks) {
    if (verb < r.bytes.size()) out = std::max(out, r.bytes[verb].second);
  }
  return out;
}

std::string picture(const LayoutStory& s, const std::string& source) {
  return layout_svg(s.row, s.work, s.brief + " · " + source, &s.marks);
}

// The comparison as a small SVG of its own, the first of the stack.
std::string table_svg(const std::vector<LayoutStory>& stories, const std::string& source) {
  svg_parts::Canvas c;
  c.text(16, 24, "cplab explain · " + source, R"( class="title")");
  c.text(16, 46, "layout", R"( font-weight="bold")");
  c.text(260, 46, "L", R"( font-weight="bold" text-anchor="end")");
  c.text(340, 46, "imbalance", R"( font-weight="bold" text-anchor="end")");
  c.text(430, 46, "max work", R"( font-weight="bold" text-anchor="end")");
  double y = 46;
  for (const LayoutStory& s : stories) {
    y += 18;
    c.text(16, y, s.brief);
    if (!s.error.empty()) {
      c.text(200, y, "cannot lay out this row: " + s.error, R"( fill="#a00")");
      continue;
    }
    c.text(260, y, std::to_string(s.row.padded_len), R"( text-anchor="end")");
    c.text(340, y, fmt::format("{:.3f}", s.imbalance), R"( text-anchor="end")");
    c.text(430, y, std::to_string(s.max_work), R"( text-anchor="end")");
  }
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="900" height="{0}" viewBox="0 0 900 {0}" )"
      R"(font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="12">)"
      "\n<style>.title{{font-size:15px;font-weight:bold}}</style>\n{1}</svg>\n",
      svg_parts::num(y + 14), c.out);
}

const char* const kPageStyle =
    "body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:16px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right;font-size:13px}td.name,th.name{text-align:left}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:24px}h3{font-size:15px}.err{color:#a00}"
    ".pass{background:#d9f2d9}.fail{background:#f8c9c9;font-weight:bold}.skip{background:#eee;"
    "color:#777}pre{background:#f6f6f6;padding:8px;white-space:pre-wrap}";

}  // namespace

const char* page_style() { return kPageStyle; }

CostRow cost_row(const RowPlan& row) {
  CostRow out;
  out.caller_len = row.caller_len;
  out.packed = row.packed;
  if (row.packed) {
    // The documents as the stream holds them: their real tokens and the slots they occupy.
    for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
      std::int64_t real = 0;
      for (std::int64_t g = row.cu_seqlens_padded[i]; g < row.cu_seqlens_padded[i + 1]; ++g)
        real += row.real[g];
      out.seq_lens.push_back(real);
      out.seq_lens_padded.push_back(row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]);
    }
    const std::int64_t occupied = row.cu_seqlens_padded.empty() ? 0 : row.cu_seqlens_padded.back();
    out.caller_len = std::max(row.caller_len, occupied);
  }
  return out;
}

VerbBytesTable verb_bytes(const LayoutSpec& spec, const RowPlan& row) {
  return verb_bytes(spec, cost_row(row));
}

VerbBytesTable verb_bytes(const LayoutSpec& spec, const CostRow& row) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = row.caller_len;
  rows.packed = row.packed;
  rows.seq_lens = row.seq_lens;
  rows.seq_lens_padded = row.seq_lens_padded;
  std::vector<sim::RankCost> costs;
  try {
    costs = sim::rank_costs(spec, rows);
  } catch (const Error&) {
    return {};
  }
  const std::vector<std::pair<const char*, std::uint64_t sim::VerbBytes::*>> verbs = {
      {"shard", &sim::VerbBytes::shard},
      {"gather_token_tensor", &sim::VerbBytes::gather_token_tensor},
      {"gather_token_tensor_backward", &sim::VerbBytes::gather_token_tensor_backward},
      {"gather_tokens", &sim::VerbBytes::gather_tokens},
      {"gather_tokens_backward", &sim::VerbBytes::gather_tokens_backward},
      {"loss_exchange", &sim::VerbBytes::loss_exchange},
      {"loss_count", &sim::VerbBytes::loss_count},
      {"attention", &sim::VerbBytes::attention},
  };
  VerbBytesTable table;
  for (const auto& [name, field] : verbs) {
    std::vector<std::uint64_t> per_rank;
    for (const sim::RankCost& cost : costs) per_rank.push_back(cost.bytes.*field);
    table.emplace_back(name, per_rank);
  }
  return table;
}

std::string explain_svg(const std::vector<LayoutStory>& stories, const std::string& source) {
  std::vector<std::string> pictures = {table_svg(stories, source)};
  for (const LayoutStory& s : stories) {
    if (s.error.empty()) pictures.push_back(picture(s, source));
  }
  return stack_svgs(pictures);
}

std::string explain_html_fragment(const std::vector<LayoutStory>& stories,
                                  const std::string& source, const std::string& id_prefix) {
  std::string out =
      "<table class=\"compare\"><tr><th class=\"name\">layout</th><th>L</th>"
      "<th>ℓ</th><th>imbalance</th><th>max causal work</th>";
  std::vector<std::string> verbs;
  for (const LayoutStory& s : stories) {
    if (verbs.empty() && !s.ranks.empty())
      for (const auto& [verb, n] : s.ranks[0].bytes) verbs.push_back(verb);
  }
  for (std::string verb : verbs) {
    std::replace(verb.begin(), verb.end(), '_', ' ');  // lets the header wrap
    out += "<th>" + escape_markup(verb) + " bytes</th>";
  }
  out += "</tr>\n";
  for (const LayoutStory& s : stories) {
    out += "<tr><td class=\"name\">" + escape_markup(s.brief) + "</td>";
    if (!s.error.empty()) {
      out += fmt::format("<td class=\"name err\" colspan=\"{}\">cannot lay out this row: {}</td>",
                         4 + verbs.size(), escape_markup(s.error));
    } else {
      out += fmt::format("<td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td>", s.row.padded_len,
                         s.row.local_len(), s.imbalance, s.max_work);
      for (std::size_t v = 0; v < verbs.size(); ++v) out += fmt::format("<td>{}</td>", most(s, v));
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  for (std::size_t i = 0; i < stories.size(); ++i) {
    const LayoutStory& s = stories[i];
    if (!s.error.empty()) continue;
    out += fmt::format("<h2>{}</h2>\n<div class=\"picture\">", escape_markup(s.brief));
    std::string svg = prefix_svg_ids(picture(s, source), fmt::format("{}{}_", id_prefix, i));
    out +=
        svg + "</div>\n<pre>" + escape_markup(rank_details_text(s), LineBreaks::keep) + "</pre>\n";
  }
  return out;
}

std::string explain_html(const std::vector<LayoutStory>& stories, const std::string& source) {
  return fmt::format(
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
      "<meta charset=\"utf-8\"/><title>cplab explain · {0}</title><style>{1}</style></head>\n"
      "<body><h1>cplab explain</h1><p>{0}</p>\n{2}</body></html>\n",
      escape_markup(source), kPageStyle, explain_html_fragment(stories, source, "x"));
}

}  // namespace cplab::reports
