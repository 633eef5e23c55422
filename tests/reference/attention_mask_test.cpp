// The masks as data (core/attention_mask.hpp, SPEC §13.5): the text form and its errors, the one
// predicate against the definitions written out by hand, and each slot's facts in packed rows.
#include "core/attention_mask.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace cplab::sim {
namespace {

TokenFacts token(std::int64_t pos, std::int32_t doc = 1, std::int32_t span = 0) {
  return {.slot = pos, .pos = pos, .doc = doc, .span = span, .real = 1};
}

TEST(AttentionMask, TextRoundTripsAndDocCausalIsCausal) {
  for (const std::string text :
       {"causal", "window:128", "chunked:8192", "window:1", "bidirectional:0-16,40-48"})
    EXPECT_EQ(mask_text(parse_mask(text)), text);
  EXPECT_EQ(parse_mask("doc-causal"), AttentionMask{});
  const AttentionMask spans = parse_mask("bidirectional:3-5,5-9");
  ASSERT_EQ(spans.spans.size(), 2u);
  EXPECT_EQ(spans.spans[1], (CallerSpan{5, 9}));
}

TEST(AttentionMask, BadTextIsOneLineNamingTheForms) {
  for (const std::string bad : {"", "causal:3", "window", "window:0", "window:-2", "window:+3",
                                "window:3x", "chunked:", "bidirectional:", "bidirectional:5-5",
                                "bidirectional:4-2", "bidirectional:0-4,2-6", "bidirectional:0-4,",
                                "sliding:4", "window:99999999999999999999"}) {
    try {
      (void)parse_mask(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("window:W"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// Each family's rule on positions, one query against every key of its document.
std::string seen_by(const MaskRule& rule, const TokenFacts& q, std::int64_t keys,
                    const std::vector<std::int32_t>& spans = {}) {
  std::string out;
  for (std::int64_t k = 0; k < keys; ++k) {
    const std::int32_t span = spans.empty() ? 0 : spans[static_cast<std::size_t>(k)];
    out += mask_visible(rule, q, token(k, 1, span)) ? 'x' : '.';
  }
  return out;
}

TEST(AttentionMask, EachFamilyKeepsTheKeysItsDefinitionNames) {
  const MaskRule causal{}, window3{MaskFamily::window, 3}, chunk4{MaskFamily::chunked, 4};
  EXPECT_EQ(seen_by(causal, token(5), 8), "xxxxxx..");
  // window:3 is the query and the 2 keys before it (flash-attn window_size = (2, 0)).
  EXPECT_EQ(seen_by(window3, token(5), 8), "...xxx..");
  EXPECT_EQ(seen_by(window3, token(1), 8), "xx......");
  EXPECT_EQ(seen_by({MaskFamily::window, 1}, token(5), 8), ".....x..");
  // chunked:4: chunks [0, 4) and [4, 8) of the document's positions.
  EXPECT_EQ(seen_by(chunk4, token(5), 8), "....xx..");
  EXPECT_EQ(seen_by(chunk4, token(3), 8), "xxxx....");
  // bidirectional: span 1 holds positions 2-4; its tokens see all of it, the others are causal.
  const std::vector<std::int32_t> spans = {0, 0, 1, 1, 1, 0, 0, 0};
  const MaskRule bidi{MaskFamily::bidirectional, 0};
  EXPECT_EQ(seen_by(bidi, token(2, 1, 1), 8, spans), "xxxxx...");
  EXPECT_EQ(seen_by(bidi, token(1, 1, 0), 8, spans), "xx......");
  EXPECT_EQ(seen_by(bidi, token(6, 1, 0), 8, spans), "xxxxxxx.");
}

TEST(AttentionMask, NoMaskCrossesADocumentOrSeesPadding) {
  for (const MaskRule rule :
       {MaskRule{}, MaskRule{MaskFamily::window, 100}, MaskRule{MaskFamily::chunked, 100},
        MaskRule{MaskFamily::bidirectional, 0}}) {
    EXPECT_FALSE(mask_visible(rule, token(5, 2, 1), token(1, 1, 1)));
    TokenFacts pad = token(1, 2, 1);
    pad.real = 0;
    EXPECT_FALSE(mask_visible(rule, token(5, 2, 1), pad));
    EXPECT_FALSE(mask_visible(rule, pad, token(1, 2, 1)));
  }
}

TEST(AttentionMask, RowFactsCountPositionsPerDocumentAndFindSpansByCallerPosition) {
  // Documents of 3 and 2 tokens, each padded by one slot, then a row pad: slots 0-2 doc 1, 3 pad,
  // 4-5 doc 2, 6 pad, 7 row pad. Caller positions 0-2 and 3-4 on the real slots.
  const std::vector<std::int32_t> docs = {1, 1, 1, 1, 2, 2, 2, 0};
  const std::vector<std::uint8_t> real = {1, 1, 1, 0, 1, 1, 0, 0};
  const std::vector<std::int64_t> caller = {0, 1, 2, -1, 3, 4, -1, -1};
  const auto facts = row_token_facts(docs, real, caller, parse_mask("bidirectional:2-4"));
  ASSERT_EQ(facts.size(), 8u);
  const std::vector<std::int64_t> pos = {0, 1, 2, 0, 0, 1, 0, 0};
  const std::vector<std::int32_t> span = {0, 0, 1, 0, 1, 0, 0, 0};
  for (std::size_t g = 0; g < 8; ++g) {
    EXPECT_EQ(facts[g].slot, static_cast<std::int64_t>(g));
    if (real[g] != 0) {
      EXPECT_EQ(facts[g].pos, pos[g]) << g;
    }
    EXPECT_EQ(facts[g].span, span[g]) << g;
  }
  // The span crosses the document boundary: cut there, its halves never see each other.
  EXPECT_FALSE(mask_visible(MaskRule{MaskFamily::bidirectional, 0}, facts[2], facts[4]));
  try {
    (void)row_token_facts(docs, real, {}, parse_mask("bidirectional:0-1"));
    ADD_FAILURE() << "spans without caller positions were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("caller positions"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cplab::sim
