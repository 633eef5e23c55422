#include "core/attention_mask.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace cplab::sim {
namespace {

constexpr const char* kForms =
    "causal, doc-causal, window:W, chunked:K or bidirectional:B-E[,B-E...] (W, K >= 1; spans of "
    "the caller's token positions [B, E), ascending and disjoint)";

// A whole decimal number in [lo, limits::kMaxRowTokens] (no sign, no spaces) into `out`.
bool read_int(std::string_view text, std::int64_t lo, std::int64_t& out) {
  if (text.empty() || text.front() == '+' || text.front() == '-') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= lo &&
         out <= limits::kMaxRowTokens;
}

}  // namespace

const char* mask_family_name(MaskFamily family) {
  switch (family) {
    case MaskFamily::causal:
      return "causal";
    case MaskFamily::window:
      return "window";
    case MaskFamily::chunked:
      return "chunked";
    case MaskFamily::bidirectional:
      return "bidirectional";
  }
  return "?";
}

AttentionMask parse_mask(const std::string& text) {
  if (text == "causal" || text == "doc-causal") return {};
  const std::size_t colon = text.find(':');
  const std::string family = text.substr(0, colon);
  const std::string_view arg =
      colon == std::string::npos ? std::string_view() : std::string_view(text).substr(colon + 1);
  AttentionMask mask;
  if (family == "window" || family == "chunked") {
    mask.family = family == "window" ? MaskFamily::window : MaskFamily::chunked;
    if (colon != std::string::npos && read_int(arg, 1, mask.size)) return mask;
    CPLAB_FAIL("mask '{}': {} takes a size from 1 to {} ({}); masks: {}", text, family,
               limits::kMaxRowTokens, family == "window" ? "window:128" : "chunked:8192", kForms);
  }
  if (family == "bidirectional" && colon != std::string::npos) {
    mask.family = MaskFamily::bidirectional;
    std::size_t at = 0;
    while (at <= arg.size()) {
      const std::size_t comma = std::min(arg.find(',', at), arg.size());
      const std::string_view range = arg.substr(at, comma - at);
      const std::size_t dash = range.find('-');
      CallerSpan span;
      CPLAB_CHECK(dash != std::string_view::npos &&
                      read_int(range.substr(0, dash), 0, span.begin) &&
                      read_int(range.substr(dash + 1), 0, span.end) && span.begin < span.end,
                  "mask '{}': '{}' is no span B-E with B < E; masks: {}", text, range, kForms);
      CPLAB_CHECK(mask.spans.empty() || mask.spans.back().end <= span.begin,
                  "mask '{}': span {}-{} overlaps or precedes the one before it; masks: {}", text,
                  span.begin, span.end, kForms);
      CPLAB_CHECK(mask.spans.size() < limits::kMaxDocuments,
                  "mask '{}': more than {} spans; masks: {}", text, limits::kMaxDocuments, kForms);
      mask.spans.push_back(span);
      at = comma + 1;
    }
    return mask;
  }
  CPLAB_FAIL("unknown mask '{}'; masks: {}", text, kForms);
}

std::string mask_text(const AttentionMask& mask) {
  switch (mask.family) {
    case MaskFamily::window:
    case MaskFamily::chunked:
      return fmt::format("{}:{}", mask_family_name(mask.family), mask.size);
    case MaskFamily::bidirectional: {
      std::string out = "bidirectional:";
      for (std::size_t i = 0; i < mask.spans.size(); ++i)
        out += fmt::format("{}{}-{}", i == 0 ? "" : ",", mask.spans[i].begin, mask.spans[i].end);
      return out;
    }
    default:
      return "causal";
  }
}

std::vector<TokenFacts> row_token_facts(const std::vector<std::int32_t>& doc_ids,
                                        const std::vector<std::uint8_t>& real,
                                        const std::vector<std::int64_t>& caller_pos,
                                        const AttentionMask& mask) {
  CPLAB_CHECK(
      doc_ids.size() == real.size() && (caller_pos.empty() || caller_pos.size() == real.size()),
      "mask: {} document ids, {} real flags and {} caller positions for one row", doc_ids.size(),
      real.size(), caller_pos.size());
  CPLAB_CHECK(!caller_pos.empty() || mask.spans.empty(),
              "mask: bidirectional spans need the row's caller positions");
  std::vector<TokenFacts> facts(doc_ids.size(), TokenFacts{});
  std::unordered_map<std::int32_t, std::int64_t> seen;  // real tokens of each document so far
  for (std::size_t g = 0; g < doc_ids.size(); ++g) {
    TokenFacts& f = facts[g];
    f.slot = static_cast<std::int64_t>(g);
    f.doc = doc_ids[g];
    f.real = real[g];
    if (f.real == 0) continue;
    f.pos = seen[f.doc]++;
    if (mask.spans.empty()) continue;
    // The span holding the caller position, by binary search over the ascending spans.
    const std::int64_t p = caller_pos[g];
    std::size_t lo = 0, hi = mask.spans.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (mask.spans[mid].end <= p) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < mask.spans.size() && mask.spans[lo].begin <= p)
      f.span = static_cast<std::int32_t>(lo + 1);
  }
  return facts;
}

}  // namespace cplab::sim
