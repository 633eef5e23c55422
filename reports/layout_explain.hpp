#pragma once
// `cplab explain`: one row under one or more layouts, told rank by rank — its tokens as runs of
// global slots, document starts, pad slots, which loss targets it fetches from which rank (and
// which tokens have none), valid and contributing counts, causal work and the bytes each verb
// moves — as text, SVG (the layout picture with the targets marked) or one HTML page. The sweep's
// index.html draws its counterexamples with the same functions.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/attention_mask.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"
#include "reports/layout_svg.hpp"

namespace cplab::reports {

struct SlotRun {
  std::int64_t begin = 0, end = 0;  // global slots [begin, end) in local order
};

struct RankStory {
  std::vector<SlotRun> runs;
  std::vector<std::int64_t> document_starts;  // local slots where a new document begins
  std::int64_t pads = 0, valid = 0, contributing = 0;
  std::int64_t document_ends = 0, ignored = 0, pad_targets = 0;  // tokens without a target
  std::map<std::int64_t, std::vector<std::int64_t>> fetched;  // owner → global slots of targets
  std::int64_t causal_work = 0;
  std::vector<std::pair<std::string, std::uint64_t>> bytes;  // verb → bytes this rank sends
};

struct LayoutStory {
  LayoutSpec spec;
  std::string brief;  // "thd cp=2"
  std::string error;  // the layout cannot lay this row out: why (everything else empty)
  RowPlan row;  // below StoryDetail::picture: its sizes and varlen segments, no per-slot arrays
  std::vector<std::int64_t> work;
  TargetMarks marks;
  std::vector<RankStory> ranks;
  double imbalance = 1.0;
  std::int64_t max_work = 0;
  sim::AttentionMask mask;  // the mask the work is counted under
};

// Verb name → bytes each rank sends ([C] per verb), from the cost model.
using VerbBytesTable = std::vector<std::pair<std::string, std::vector<std::uint64_t>>>;

// What each verb of the sim sends per rank for this row (the cost model, layouts/cost_model.hpp);
// empty when the model cannot cost it.
VerbBytesTable verb_bytes(const LayoutSpec& spec, const RowPlan& row);
// The few numbers per document the cost model needs of a row, so that it can be costed after the
// plan is released (the cost model lays the row out once more: two at once would double the memory
// of a 16M-token row).
struct CostRow {
  std::int64_t caller_len = 0;
  bool packed = false;
  std::vector<std::int64_t> seq_lens, seq_lens_padded;  // packed: as the stream holds them
};
CostRow cost_row(const RowPlan& row);
VerbBytesTable verb_bytes(const LayoutSpec& spec, const CostRow& row);
// Each rank's bytes per verb, for a story told with an empty table.
void attach_verb_bytes(LayoutStory& story, const VerbBytesTable& bytes);

// How much of the row a story keeps. picture: everything (the SVG and HTML draw every slot); text:
// the rank lists explain's text prints, but no per-slot arrays of the plan; summary: only the
// numbers of the side-by-side table (`cplab layout --layout all`), so that telling ten layouts of a
// 16M-token row holds one plan at a time, not ten.
enum class StoryDetail { picture, text, summary };

// labels: the row's global padded labels (IGNORE = -100), or empty when there are none (then pads
// and document padding have no target, every real token's label counts).
LayoutStory tell_layout(const LayoutSpec& spec, const RowPlan& row,
                        const std::vector<std::int64_t>& labels, const VerbBytesTable& bytes,
                        StoryDetail detail = StoryDetail::picture,
                        const sim::AttentionMask& mask = {});
LayoutStory failed_layout(const LayoutSpec& spec, const std::string& why);

// The side-by-side table of several layouts (imbalance, max causal work, most bytes per verb on
// any rank) and then, with details, each layout's ranks.
std::string explain_text(const std::vector<LayoutStory>& stories, const std::string& source,
                         bool details);
// One layout's ranks, as explain_text's details list them.
std::string rank_details_text(const LayoutStory& story);
std::string explain_svg(const std::vector<LayoutStory>& stories, const std::string& source);
std::string explain_html(const std::vector<LayoutStory>& stories, const std::string& source);
// The same page's body parts, for other pages (the sweep's index.html): the comparison table and
// each layout's picture and rank list, as XHTML fragments.
std::string explain_html_fragment(const std::vector<LayoutStory>& stories,
                                  const std::string& source, const std::string& id_prefix);
const char* page_style();  // the CSS of explain's page and the sweep's index.html

}  // namespace cplab::reports
