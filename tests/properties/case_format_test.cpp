// The one-line form of a case: parse ∘ print is the identity on every generated case, print ∘ parse
// on every printed line; malformed lines are errors that name the problem; left-out keys default.
// The format is every layout's: the lines below name a plainly sharding layout (one that takes
// BSHD and packed rows, tests/support/layouts.hpp); a layout's own keys are tested in its own file
// (layouts/ID_test.cpp).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/error.hpp"
#include "layouts/contiguous.hpp"
#include "layouts/magi.hpp"
#include "properties/case.hpp"
#include "properties/generators.hpp"
#include "tests/properties/case_errors.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

// Every layout's generator, one after another (RC_PARAMS sets seed and number of cases), each
// also as a sweep with --masks runs it (its cases carry mask=).
rc::Gen<Case> any_case() {
  GenOptions masked;
  masked.masks = {"window", "chunked:7", "bidirectional:1-4,6-9", "doc-causal"};
  std::vector<rc::Gen<Case>> gens;
  for (const LayoutEntry& entry : layout_table()) {
    gens.push_back(gen_case(entry, GenOptions{}));
    gens.push_back(gen_case(entry, masked));
  }
  return rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, gens.size()),
                         [gens](std::size_t i) { return gens[i]; });
}

// A case line of a plainly sharding layout: its name, then `rest`.
std::string line_of(const std::string& rest) { return testsupport::a_plain_layout() + " " + rest; }

RC_GTEST_PROP(CaseFormat, ParseOfPrintIsTheCase, ()) {
  const Case c = *any_case();
  const std::string line = print_case(c);
  RC_ASSERT(line.find('\n') == std::string::npos);
  RC_ASSERT(parse_case(line) == c);
}

RC_GTEST_PROP(CaseFormat, PrintOfParseIsTheLine, ()) {
  const std::string line = print_case(*any_case());
  RC_ASSERT(print_case(parse_case(line)) == line);
}

TEST(CaseFormat, ReadsEveryField) {
  const Case c = parse_case(
      line_of("cp=3 m=1 K=4 mb=2 rows=2 S=20 docs=5,3+1,8/12 vocab=37 pad_id=7 policy=zero "
              "shard_primary=0 primary=embeds "
              "dim=3 dtype=bf16 pos=mrope keys=loss_mask,extra ignore=100 invalid=50 "
              "pad_content=25 seed=1234"));
  EXPECT_EQ(c.spec.layout, testsupport::a_plain_layout());
  EXPECT_EQ(c.spec.cp, 3);
  EXPECT_EQ(layouts::contiguous_pad_multiple.of(c.spec), 1);
  EXPECT_EQ(layouts::magi_chunk_size.of(c.spec), 4);
  EXPECT_EQ(c.spec.microbatches, 2);
  EXPECT_EQ(c.rows, 2);
  EXPECT_EQ(c.seq_len, 20);
  ASSERT_EQ(c.docs.size(), 2u);
  EXPECT_EQ(c.docs[0], (std::vector<Document>{{5, 0}, {3, 1}, {8, 0}}));
  EXPECT_EQ(c.docs[1], (std::vector<Document>{{12, 0}}));
  EXPECT_EQ(c.vocab, 37);
  EXPECT_EQ(c.spec.pad_token_id, 7);
  EXPECT_EQ(c.spec.pad_policy, PadPolicy::zero);
  EXPECT_FALSE(c.spec.shard_primary);
  EXPECT_EQ(c.primary, Primary::embeds);
  EXPECT_EQ(c.dim, 3);
  EXPECT_EQ(c.dtype, DType::bf16);
  EXPECT_EQ(c.positions, PositionKind::mrope);
  EXPECT_TRUE(c.loss_mask);
  EXPECT_FALSE(c.padding_mask);
  EXPECT_TRUE(c.extra_key);
  EXPECT_EQ(c.ignore_permille, 100);
  EXPECT_EQ(c.invalid_permille, 50);
  EXPECT_EQ(c.pad_content_permille, 25);
  EXPECT_EQ(c.seed, 1234u);
  EXPECT_EQ(c.mask, "");
  EXPECT_EQ(parse_case(line_of("cp=2 S=4 mask=window:3")).mask, "window:3");
  EXPECT_EQ(parse_case(line_of("cp=2 S=4 mask=doc-causal")).mask, "causal");  // canonical
  EXPECT_EQ(parse_case(line_of("cp=2 S=4 mask=chunked")).mask, "chunked");    // a family alone
}

TEST(CaseFormat, LeftOutKeysTakeDefaultsAndPackedShapeFollowsDocs) {
  const Case c = parse_case(line_of("cp=2 docs=5,3,8"));
  EXPECT_EQ(c.rows, 1);
  EXPECT_EQ(c.seq_len, 16);
  EXPECT_EQ(c.spec.microbatches, 1);
  EXPECT_EQ(c.vocab, 2);
  EXPECT_EQ(print_case(parse_case(print_case(c))), print_case(c));
}

TEST(CaseFormat, MalformedLinesAreErrorsNamingTheProblem) {
  expect_error("", "empty case");
  expect_error("cp=2 " + testsupport::a_plain_layout(), "layout name");
  expect_error(line_of("cp=2 colour=red"), "unknown case key 'colour'");
  expect_error(line_of("cp=2 cp=3"), "given twice");
  expect_error(line_of("cp=two"), "'two' is not a number");
  expect_error(line_of("cp=2 docs=5+0"), "no padding after '+'");
  expect_error(line_of("cp=2 S=4 vocab=4 pad_id=4"), "pad_id=4");
  expect_error(line_of("cp=2 rows=3 mb=2 S=4"), "multiple of mb");
  expect_error(line_of("cp=2 docs=5,3 S=7"), "more than S=7");
  expect_error(line_of("cp=2 S=4 dtype=f64"), "unknown dtype");
  expect_error(line_of("cp=2 S=4 pos=diagonal"), "not one of");
  expect_error(line_of("cp=2 docs=5 pos=shared"), "BSHD only");
  expect_error(line_of("cp=2 S=4 mask=sliding"), "unknown mask 'sliding'");
  expect_error(line_of("cp=2 S=4 mask=window:0"), "mask 'window:0'");
}

TEST(CaseFormat, ReadsWhatRealBatchesHold) {
  const Case c =
      parse_case(line_of("cp=3 rows=4 mb=2 S=9 pos=mrope rowpos=restart left_pad=3 kdt=narrow "
                         "keys=planes,features,padding_mask"));
  EXPECT_EQ(c.row_positions, RowPositions::restart);
  EXPECT_EQ(c.left_pad, 3);
  EXPECT_EQ(c.key_dtypes, KeyDTypes::narrow);
  EXPECT_TRUE(c.extra_planes);
  EXPECT_TRUE(c.extra_features);
  EXPECT_TRUE(c.padding_mask);
  EXPECT_FALSE(c.extra_key);
  EXPECT_EQ(parse_case(print_case(c)), c);
  // A line printed before these keys existed reads as it did: arange, no left padding, wide keys.
  const Case old = parse_case(
      line_of("cp=2 m=2 K=4 mb=1 rows=2 S=9 docs=- vocab=5 pad_id=1 policy=spec shard_primary=1 "
              "primary=ids dim=1 dtype=f32 pos=per_row keys=extra ignore=0 invalid=0 "
              "pad_content=0 seed=3"));
  EXPECT_EQ(old.row_positions, RowPositions::arange);
  EXPECT_EQ(old.left_pad, 0);
  EXPECT_EQ(old.key_dtypes, KeyDTypes::wide);
  EXPECT_TRUE(old.extra_key);
  EXPECT_FALSE(old.extra_planes);
  expect_error(line_of("cp=2 S=4 rowpos=zigzag"), "rowpos");
  expect_error(line_of("cp=2 S=4 kdt=tiny"), "kdt");
  expect_error(line_of("cp=2 S=4 left_pad=5"), "left_pad");
  expect_error(line_of("cp=2 docs=3,4 rowpos=offset"), "packed rows");
  expect_error(line_of("cp=2 docs=3,4 keys=extra,bogus"), "bogus");
}

}  // namespace
}  // namespace cplab::properties
