#include "reports/layout_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"
#include "core/layout_option.hpp"

namespace cplab::reports {
namespace {

// An error's message without the file:line it was thrown at.
std::string reason(const Error& e) {
  const std::string what = e.what();
  const std::size_t colon = what.find(": ");
  return colon != std::string::npos && what.find(".cpp:") < colon ? what.substr(colon + 2) : what;
}

// What options_that_matter compares of two plans of the row: L and a 64-bit FNV-1a digest of every
// rank's index map. The plan itself is released before other options are tried (a second plan of a
// 16M-token row would double the command's memory); two different maps share a digest with
// probability 2^-64, and then only the brief shown would name an option that does not matter.
struct PlanPrint {
  std::int64_t padded_len = 0;
  std::uint64_t digest = 0;
  bool operator==(const PlanPrint&) const = default;
};

PlanPrint plan_print(const RowPlan& row) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const auto& rank : row.index) {
    mix(rank.size());
    for (std::int64_t g : rank) mix(static_cast<std::uint64_t>(g));
  }
  return {row.padded_len, h};
}

// spec with every option that does not change this row's plan back at its default, so a table of
// layouts does not show one layout's chunk size next to another that has no chunks.
LayoutSpec options_that_matter(LayoutSpec spec, const RowPlanner& plan_row, const PlanPrint& row) {
  const auto same_plan = [&](const LayoutSpec& plain) {
    try {
      return plan_print(plan_row(plain, true).row) == row;
    } catch (const Error&) {
      return false;  // the default cannot even plan the row: the option matters
    }
  };
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    if (o->of(spec) == o->fallback) continue;
    LayoutSpec plain = spec;
    o->reset(plain);
    if (same_plan(plain)) spec = plain;
  }
  return spec;
}

}  // namespace

Stories tell_layouts(const LayoutSpec& spec, const std::vector<std::string>& names,
                     const RowPlanner& plan_row, StoryDetail detail,
                     const sim::AttentionMask& mask) {
  Stories stories;
  std::optional<Error> first_error;
  // Each picture keeps every slot of its row until the page is drawn: the bound on one picture
  // bounds them all together (every layout of a 1M-token row once kept 4.8 GB, then bad_alloc).
  std::int64_t kept_slots = 0;
  std::string past_bound;
  for (const std::string& name : names) {
    LayoutSpec one = spec;
    one.layout = name;
    try {
      PlanPrint print;
      CostRow costed;
      {
        const PlannedRow planned = plan_row(one, false);
        one = planned.spec;
        const RowPlan& row = planned.row;
        if (detail == StoryDetail::picture) {
          check_picture_slots(row.padded_len);
          if (kept_slots > kMaxPictureSlots - row.padded_len) {
            past_bound = fmt::format(
                "the pictures of every layout draw every slot of each: at most {} slots "
                "together, and {} would make {} (L={}); draw one layout (--layout NAME) or a "
                "shorter row",
                kMaxPictureSlots, name, kept_slots + row.padded_len, row.padded_len);
            break;
          }
          kept_slots += row.padded_len;
        }
        stories.layouts.push_back(tell_layout(one, row, planned.labels, {}, detail, mask));
        print = plan_print(row);
        costed = cost_row(row);
        if (stories.source.empty()) stories.source = planned.description;
      }  // the plan is released here, before the cost model and options_that_matter lay it out
      attach_verb_bytes(stories.layouts.back(), verb_bytes(one, costed));
      stories.layouts.back().brief = spec_brief(options_that_matter(one, plan_row, print));
    } catch (const Error& e) {
      if (!first_error) first_error = e;
      // Its options say nothing about a layout that cannot plan.
      const LayoutSpec plain = layouts::without_options(one);
      stories.layouts.push_back(failed_layout(plain, reason(e)));
    }
  }
  if (!past_bound.empty()) CPLAB_FAIL("{}", past_bound);
  // Which layout for this row and mask: ranked by the critical path of their attention (the
  // slowest rank's pairs), least first, ties in registry order; those that cannot lay it out last.
  std::stable_sort(stories.layouts.begin(), stories.layouts.end(),
                   [](const LayoutStory& a, const LayoutStory& b) {
                     if (a.error.empty() != b.error.empty()) return a.error.empty();
                     return a.error.empty() && a.max_work < b.max_work;
                   });
  // Every table, picture and page names the source: under another mask, the work is the mask's.
  if (!mask.is_causal() && !stories.source.empty())
    stories.source += fmt::format(" · work under the mask {}", sim::mask_text(mask));
  if (stories.source.empty()) throw *first_error;  // no layout could: the input is at fault
  return stories;
}

std::string comparison_json(const Stories& stories) {
  // Small (numbers per layout and rank): nlohmann as it is.
  nlohmann::ordered_json out;
  out["layout"] = kEveryLayout;
  out["source"] = stories.source;
  // Absent under the causal mask: the contract's keys stay as they were.
  if (!stories.layouts.empty() && !stories.layouts.front().mask.is_causal())
    out["mask"] = sim::mask_text(stories.layouts.front().mask);
  out["layouts"] = nlohmann::ordered_json::array();
  for (const auto& s : stories.layouts) {
    nlohmann::ordered_json one;
    one["layout"] = s.spec.layout;
    one["spec"] = s.brief;
    one["cp"] = s.spec.cp;
    if (!s.error.empty()) {
      one["error"] = s.error;
    } else {
      // By max_causal_work, least first (tell_layouts' order); ties share a rank, as
      // `schedule --algo all`'s algorithms do.
      std::int64_t less = 0;
      for (const auto& other : stories.layouts)
        less += other.error.empty() && other.max_work < s.max_work;
      one["rank"] = less + 1;
      one["padded_seq_len"] = s.row.padded_len;
      one["imbalance"] = s.imbalance;
      one["max_causal_work"] = s.max_work;
      one["causal_work"] = s.work;
      nlohmann::ordered_json bytes = nlohmann::ordered_json::object();
      for (std::size_t r = 0; r < s.ranks.size(); ++r) {
        for (const auto& [verb, n] : s.ranks[r].bytes) bytes[verb].push_back(n);
      }
      one["bytes_per_rank"] = bytes;
    }
    out["layouts"].push_back(std::move(one));
  }
  return out.dump();
}

}  // namespace cplab::reports
