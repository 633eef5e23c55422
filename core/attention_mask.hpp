#pragma once
// The attention masks a model trains with (SPEC §13.5), as data: which keys a query sees, by each
// token's document and its position in that document. One predicate, mask_visible, host and
// device: the reference, the schedule builder's pair counts, the twin's blocks and the GPU kernels
// all ask it, so the mask the properties prove is the mask every implementation runs.
//
// Every mask stops at document boundaries and sees no padding: query q sees key k only when both
// are real tokens of one document, and then by the family's rule on their positions p(q), p(k)
// (0 at the document's first token):
//   causal         p(k) <= p(q)                                   ("doc-causal" is its alias)
//   window:W       p(q) - W < p(k) <= p(q): the query and the W - 1 keys before it
//   chunked:K      p(k) <= p(q), and both in one chunk of K positions counted from the
//                  document's start: p(k) / K == p(q) / K
//   bidirectional:SPANS
//                  causal, except that tokens of one span see each other whole; a span is a range
//                  [b, e) of the caller's token positions in the row, and is cut where a document
//                  ends
#include <cstdint>
#include <string>
#include <vector>

#include "core/mask_rule.hpp"

namespace cplab::sim {

// [begin, end) of the caller's token positions in a row.
struct CallerSpan {
  std::int64_t begin = 0, end = 0;
  friend bool operator==(const CallerSpan&, const CallerSpan&) = default;
};

struct AttentionMask {
  MaskFamily family = MaskFamily::causal;
  std::int64_t size = 0;          // window W or chunk K (>= 1); 0 for the others
  std::vector<CallerSpan> spans;  // bidirectional: ascending, disjoint, non-empty
  MaskRule rule() const { return {.family = family, .size = size}; }
  bool is_causal() const { return family == MaskFamily::causal; }
  friend bool operator==(const AttentionMask&, const AttentionMask&) = default;
};

inline constexpr MaskFamily kMaskFamilies[] = {MaskFamily::causal, MaskFamily::window,
                                               MaskFamily::chunked, MaskFamily::bidirectional};

// "causal", "doc-causal", "window:W", "chunked:K", "bidirectional:B-E[,B-E...]" (ranges [B, E)).
// Throws cplab::Error with one line that lists the forms.
AttentionMask parse_mask(const std::string& text);
// The canonical text parse_mask reads back ("causal" for doc-causal).
std::string mask_text(const AttentionMask& mask);
// The family's name: "causal", "window", "chunked", "bidirectional".
const char* mask_family_name(MaskFamily family);

// Every slot's facts for a row (doc_ids, real and caller_pos of its plan, each [L]): positions
// counted over the real tokens of each document in slot order, spans by caller position.
std::vector<TokenFacts> row_token_facts(const std::vector<std::int32_t>& doc_ids,
                                        const std::vector<std::uint8_t>& real,
                                        const std::vector<std::int64_t>& caller_pos,
                                        const AttentionMask& mask);

}  // namespace cplab::sim
