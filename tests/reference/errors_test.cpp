// Every invalid spec, batch and plan request is a cplab::Error whose message names the values.
#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using reference::plan;
using reference::plan_row;

// Spec errors every layout shares; a layout's own options and refusals are in its own
// tests/reference/layouts/ID_test.cpp.
TEST(SpecErrors, NameTheBadValue) {
  const std::string layout = testsupport::a_plain_layout();
  LayoutSpec spec = make_spec(layout, 0);
  EXPECT_ERROR(validate_spec(spec), "cp=0");
  spec = make_spec(layout, 2);
  spec.microbatches = 0;
  EXPECT_ERROR(validate_spec(spec), "microbatches=0");
  const std::string unknown = error_of([] { validate_spec(make_spec("zigzag", 2)); });
  EXPECT_NE(unknown.find("unknown layout 'zigzag'"), std::string::npos) << unknown;
  for (const std::string& name : reference::layout_names())
    EXPECT_NE(unknown.find(name), std::string::npos) << name << " not listed: " << unknown;
  const std::string no_such = error_of([] { reference::layout_info("no-such-layout"); });
  EXPECT_NE(no_such.find("unknown layout 'no-such-layout'"), std::string::npos) << no_such;
  for (const std::string& name : reference::layout_names())
    EXPECT_NE(no_such.find(name), std::string::npos) << name << " not listed: " << no_such;
}

TEST(SpecErrors, BriefNamesTheOptionsThatDiffer) {
  const std::string layout = testsupport::a_plain_layout();
  LayoutSpec spec = make_spec(layout, 4);
  layouts::magi_chunk_size.set(spec, 512);
  layouts::ptrr_block_size.set(spec, 128);
  EXPECT_EQ(spec_brief(spec), layout + " cp=4");
  spec.microbatches = 2;
  spec.shard_primary = false;
  spec.pad_policy = PadPolicy::zero;
  EXPECT_EQ(spec_brief(spec), layout + " cp=4 microbatches=2 shard_primary=false pad_policy=zero");
  layouts::ptrr_block_size.set(spec, 4);
  EXPECT_NE(spec_brief(spec).find(" block_size=4"), std::string::npos);
}

TEST(BatchErrors, PrimaryKey) {
  Batch batch;
  batch.add(keys::labels, located(DType::i64, 1, 4));
  EXPECT_ERROR(validate_batch(batch), "exactly one primary", "neither");
  batch.add(keys::input_ids, located(DType::i64, 1, 4));
  batch.add(keys::inputs_embeds, located(DType::f32, 1, 4, 3));
  EXPECT_ERROR(validate_batch(batch), "exactly one primary", "both");
  EXPECT_ERROR(Batch{}.rows(), "no token-aligned key");
  EXPECT_ERROR(bshd_batch(1, 4).at("pixel_values"), "'pixel_values'", "input_ids", "labels");
}

TEST(BatchErrors, ShapesMustAgree) {
  Batch batch = bshd_batch(2, 6);
  batch.add(keys::position_ids, located(DType::i64, 2, 5));
  EXPECT_ERROR(validate_batch(batch), "'position_ids'", "5 tokens", "S=6");
  batch = bshd_batch(2, 6);
  batch.add("token_type_ids", located(DType::i64, 3, 6));
  EXPECT_ERROR(validate_batch(batch), "'token_type_ids'", "3 rows", "B=2");
  batch = bshd_batch(2, 6);
  batch.tokens["extra"] = TokenField{.value = located(DType::i64, 2, 6), .seq_dim = 2};
  EXPECT_ERROR(validate_batch(batch), "'extra'", "seq dim 2");
}

TEST(BatchErrors, PackedMetadata) {
  EXPECT_ERROR(validate_batch(packed_batch({{4, 4}}, 6)), "occupy 8 slots", "S=6");
  EXPECT_ERROR(validate_batch(packed_batch({{4, -1}}, 6)), "negative length -1");
  EXPECT_ERROR(validate_batch(packed_batch({{4, 2}}, 8, {{3, 5}})), "occupies 3 slots",
               "its 4 tokens");
  EXPECT_ERROR(validate_batch(packed_batch({{4, 2}}, 8, {{4}})),
               "1 seq_lens_padded for 2 documents");
  Batch batch = packed_batch({{4}, {4}}, 8);
  batch.seq_lens.pop_back();
  EXPECT_ERROR(validate_batch(batch), "seq_lens has 1 rows", "B=2");
}

TEST(PlanErrors, MicrobatchesNeverDropRows) {
  LayoutSpec spec = make_spec(testsupport::a_plain_layout(), 2);
  spec.microbatches = 2;
  EXPECT_ERROR(plan(spec, bshd_batch(5, 8)), "B=5", "microbatches=2");
  spec.microbatches = 3;
  EXPECT_ERROR(plan(spec, packed_batch({{4}, {8}}, 8)), "one packed row per microbatch", "B=2",
               "microbatches=3");
}

TEST(PlanErrors, RowArguments) {
  const LayoutSpec spec = make_spec(testsupport::a_plain_layout(), 2);
  EXPECT_ERROR(plan_row(spec, -1), "S=-1");
  const Ints docs{3, 4};
  EXPECT_ERROR(plan_row(spec, 5, &docs), "occupy 7 slots", "S=5");
}

}  // namespace
}  // namespace cplab::testing
