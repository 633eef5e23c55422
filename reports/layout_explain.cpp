// The rank-by-rank story of a row under a layout (layout_explain.hpp) and its text form.
#include "reports/layout_explain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "reference/work.hpp"

namespace cplab::reports {
namespace {

std::vector<SlotRun> runs_of(const std::vector<std::int64_t>& index) {
  std::vector<SlotRun> runs;
  for (std::int64_t g : index) {
    if (!runs.empty() && runs.back().end == g) {
      ++runs.back().end;
    } else {
      runs.push_back({g, g + 1});
    }
  }
  return runs;
}

std::string runs_text(const std::vector<SlotRun>& runs) {
  std::vector<std::string> parts;
  for (const SlotRun& run : runs) {
    parts.push_back(run.end - run.begin == 1 ? std::to_string(run.begin)
                                             : fmt::format("[{},{})", run.begin, run.end));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string list_text(const std::vector<std::int64_t>& values, std::size_t shown = 12) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < values.size() && i < shown; ++i)
    parts.push_back(std::to_string(values[i]));
  if (values.size() > shown) parts.push_back(fmt::format("… ({} in all)", values.size()));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::uint64_t most_bytes(const LayoutStory& story, std::size_t verb) {
  std::uint64_t most = 0;
  for (const RankStory& rank : story.ranks) {
    if (verb < rank.bytes.size()) most = std::max(most, rank.bytes[verb].second);
  }
  return most;
}

std::vector<std::string> verb_names(const std::vector<LayoutStory>& stories) {
  for (const LayoutStory& s : stories) {
    if (!s.ranks.empty() && !s.ranks[0].bytes.empty()) {
      std::vector<std::string> names;
      for (const auto& [verb, bytes] : s.ranks[0].bytes) names.push_back(verb);
      return names;
    }
  }
  return {};
}

}  // namespace

LayoutStory failed_layout(const LayoutSpec& spec, const std::string& why) {
  LayoutStory story;
  story.spec = spec;
  story.brief = spec_brief(spec);
  story.error = why;
  return story;
}

namespace {

// row's sizes and per-rank lists without its per-slot arrays (what a story below picture keeps).
RowPlan row_without_slots(const RowPlan& row) {
  RowPlan sizes;
  sizes.cp = row.cp;
  sizes.caller_len = row.caller_len;
  sizes.original_len = row.original_len;
  sizes.padded_len = row.padded_len;
  sizes.packed = row.packed;
  sizes.cu_seqlens_padded = row.cu_seqlens_padded;
  sizes.local_cu_seqlens = row.local_cu_seqlens;
  sizes.valid_tokens = row.valid_tokens;
  sizes.varlen = row.varlen;
  return sizes;
}

}  // namespace

LayoutStory tell_layout(const LayoutSpec& spec, const RowPlan& row,
                        const std::vector<std::int64_t>& labels, const VerbBytesTable& bytes,
                        StoryDetail detail, const sim::AttentionMask& mask) {
  LayoutStory story;
  story.mask = mask;
  story.spec = spec;
  story.brief = spec_brief(spec);
  story.row = detail == StoryDetail::picture ? row : row_without_slots(row);
  story.work = reference::causal_work(row, mask);
  story.imbalance = reference::imbalance(story.work);
  story.max_work = story.work.empty() ? 0 : *std::max_element(story.work.begin(), story.work.end());
  const std::int64_t len = row.padded_len;
  CPLAB_CHECK(labels.empty() || static_cast<std::int64_t>(labels.size()) == len,
              "explain: {} labels for a row of L={}", labels.size(), len);
  const bool lists = detail != StoryDetail::summary;
  const bool marked = detail == StoryDetail::picture;
  // Ranks fit in 32 bits (the spec's cp limit): half the memory of int64 on a 16M-token row.
  std::vector<std::int32_t> owner(static_cast<std::size_t>(len), 0);
  for (std::int64_t r = 0; r < row.cp; ++r) {
    for (std::int64_t g : row.index[r]) owner[g] = static_cast<std::int32_t>(r);
  }
  for (std::int64_t r = 0; r < row.cp; ++r) {
    const auto& index = row.index[r];
    RankStory rank;
    if (lists) rank.runs = runs_of(index);
    rank.causal_work = story.work[r];
    std::vector<TargetMark> marks(marked ? index.size() : 0, TargetMark::none);
    for (std::size_t k = 0; k < index.size(); ++k) {
      const std::int64_t g = index[k];
      if (lists && row.doc_ids[g] > 0 && (g == 0 || row.doc_ids[g - 1] != row.doc_ids[g]))
        rank.document_starts.push_back(static_cast<std::int64_t>(k));
      if (!row.real[g]) {
        ++rank.pads;
        ++rank.pad_targets;
        continue;
      }
      ++rank.valid;
      const std::int64_t t = g + 1;
      // SPEC §6: the target is the next slot's label when it is in the same document.
      if (t >= len || row.doc_ids[t] != row.doc_ids[g]) {
        ++rank.document_ends;
        continue;
      }
      const std::int64_t label = labels.empty() ? (row.real[t] ? 0 : kIgnoreIndex) : labels[t];
      if (label == kIgnoreIndex) {
        ++rank.ignored;
        continue;
      }
      ++rank.contributing;
      const bool fetched = owner[t] != r;
      if (fetched && lists) rank.fetched[owner[t]].push_back(g);
      if (marked) marks[k] = fetched ? TargetMark::fetched : TargetMark::local;
    }
    story.ranks.push_back(std::move(rank));
    if (marked) story.marks.push_back(std::move(marks));
  }
  attach_verb_bytes(story, bytes);
  return story;
}

void attach_verb_bytes(LayoutStory& story, const VerbBytesTable& bytes) {
  for (std::size_t r = 0; r < story.ranks.size(); ++r) {
    for (const auto& [verb, per_rank] : bytes) {
      if (r < per_rank.size()) story.ranks[r].bytes.emplace_back(verb, per_rank[r]);
    }
  }
}

std::string explain_text(const std::vector<LayoutStory>& stories, const std::string& source,
                         bool details) {
  std::string out = source + "\n";
  const std::vector<std::string> verbs = verb_names(stories);
  out +=
      fmt::format("{:<28} {:>7} {:>6} {:>9} {:>10}", "layout", "L", "ℓ", "imbalance", "max work");
  for (const std::string& verb : verbs) out += fmt::format("  {}", verb);
  out += verbs.empty() ? "\n"
                       : "   (most bytes a rank sends; a token tensor of one f32 per token, "
                         "attention head dim 64)\n";
  for (const LayoutStory& s : stories) {
    if (!s.error.empty()) {
      out += fmt::format("{:<28} cannot lay out this row: {}\n", s.brief, s.error);
      continue;
    }
    out += fmt::format("{:<28} {:>7} {:>6} {:>9.3f} {:>10}", s.brief, s.row.padded_len,
                       s.row.local_len(), s.imbalance, s.max_work);
    for (std::size_t v = 0; v < verbs.size(); ++v)
      out += fmt::format("  {:>{}}", most_bytes(s, v), verbs[v].size());
    out += "\n";
  }
  if (stories.size() > 1)
    out += "ranked by max work (the slowest rank's attention pairs under the mask), least first\n";
  // Attention itself across the ranks, step by step, is another command's (SPEC §13).
  out += fmt::format(
      "attention across the ranks step by step: cplab schedule --layout {} --cp {} --algo all "
      "(with the same row options)\n",
      stories.size() == 1 ? stories.front().spec.layout : std::string("LAYOUT"),
      stories.empty() ? 1 : stories.front().spec.cp);
  if (!details) return out;
  for (const LayoutStory& s : stories) {
    if (!s.error.empty()) continue;
    out += fmt::format("\n== {}: L={}, {} tokens per rank, imbalance {:.3f}\n", s.brief,
                       s.row.padded_len, s.row.local_len(), s.imbalance);
    out += rank_details_text(s);
  }
  return out;
}

std::string rank_details_text(const LayoutStory& s) {
  std::string out;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const RankStory& rank = s.ranks[r];
    out += fmt::format("rank {}: global {}\n", r, runs_text(rank.runs));
    out += fmt::format("  documents start at local {}; {} pad slots\n",
                       rank.document_starts.empty() ? "(none)" : list_text(rank.document_starts),
                       rank.pads);
    out += fmt::format("  valid {}, contributing {}, causal work {}\n", rank.valid,
                       rank.contributing, rank.causal_work);
    std::vector<std::string> fetched;
    for (const auto& [from, slots] : rank.fetched)
      fetched.push_back(fmt::format("from rank {} for global {}", from, list_text(slots)));
    out += fmt::format("  targets fetched: {}\n",
                       fetched.empty() ? "none" : fmt::format("{}", fmt::join(fetched, "; ")));
    out += fmt::format("  no target: {} document ends, {} IGNORE labels, {} pads\n",
                       rank.document_ends, rank.ignored, rank.pad_targets);
    if (r < s.row.varlen.size()) {  // a layout whose ranks attend through varlen segments
      const VarlenSegments& v = s.row.varlen[r];
      out += fmt::format(
          "  attends through cu_seqlens_q [{}], cu_seqlens_k [{}], key slice [{}, {})\n",
          fmt::join(v.cu_seqlens_q, ","), fmt::join(v.cu_seqlens_k, ","), v.k_begin, v.k_end);
    }
    if (!rank.bytes.empty()) {
      std::vector<std::string> parts;
      for (const auto& [verb, n] : rank.bytes) parts.push_back(fmt::format("{} {}", verb, n));
      out += fmt::format("  bytes sent: {}\n", fmt::join(parts, ", "));
    }
  }
  return out;
}

}  // namespace cplab::reports
