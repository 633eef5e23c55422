// The generators draw what they promise: valid cases within the size bounds, the shapes the issue
// lists (C = 1, non-powers of two, lengths at and around multiples, packed rows of every kind,
// IGNORE and valid holes, N = 0, pad ids in the content), and domain shrinks that are smaller and
// still valid. Case data is a pure function of the case and locates itself.
#include "properties/generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "reference/plan.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

std::vector<Case> sample(const LayoutEntry& entry, int count, const GenOptions& options = {}) {
  const rc::Gen<Case> gen = gen_case(entry, options);
  std::vector<Case> cases;
  for (int i = 0; i < count; ++i)
    cases.push_back(gen(rc::Random(static_cast<std::uint64_t>(7919 * i + 1)), i % 101).value());
  return cases;
}

TEST(Generators, CasesAreValidAndBounded) {
  const GenOptions options;
  for (const LayoutEntry& entry : layout_table()) {
    for (const Case& c : sample(entry, 300)) {
      SCOPED_TRACE(print_case(c));
      ASSERT_NO_THROW(validate_case(c));
      const Subject subject(c);  // the reference accepts it
      // L: the drawn lengths, padded by at most one unit of the layout (C·m <= 256, K·C <= 128).
      const std::int64_t len = subject.plan.rows.front().padded_len;
      EXPECT_LE(len, options.max_tokens + 256);
      EXPECT_LE(c.rows * len * c.vocab, std::max(options.logits_budget, 2 * c.rows * len));
      EXPECT_EQ(c.spec.layout, entry.name);
      if (entry.descriptor->cp_off) {
        EXPECT_EQ(c.spec.cp, 1);
      }
      if (!entry.descriptor->bshd_rows) {
        EXPECT_TRUE(c.packed());
      }
    }
  }
}

TEST(Generators, CoverTheShapesThatBreakLayouts) {
  std::map<std::string, int> seen;
  for (const LayoutEntry& entry : layout_table()) {
    for (const Case& c : sample(entry, 400)) {
      const std::int64_t cp = c.spec.cp;
      seen[cp_class(cp)] += 1;
      if (cp > 16) seen["cp>16"] += 1;
      if (c.packed()) {
        seen["packed"] += 1;
        for (const auto& row : c.docs) {
          for (const Document& d : row) {
            if (d.real == 0) seen["zero-length document"] += 1;
            if (d.real == 1) seen["one-token document"] += 1;
            if (d.extra > 0) seen["caller document padding"] += 1;
            if (cp > 1 && d.real > 0 && d.real % (2 * cp) == 0)
              seen["document at a multiple of 2C"] += 1;
            if (cp > 1 && (d.real % (2 * cp) == 1 || d.real % (2 * cp) == 2 * cp - 1))
              seen["document at 2C ± 1"] += 1;
          }
        }
        for (const auto& row : c.docs) {
          if (row.size() >= 8) seen["many documents"] += 1;
        }
      } else {
        seen["bshd"] += 1;
        if (cp > 1 && c.seq_len % (2 * cp) == 0) seen["S at a multiple of 2C"] += 1;
        if (cp > 1 && c.seq_len % cp == cp - 1) seen["S just below a multiple of C"] += 1;
        if (cp > 1 && c.seq_len % cp == 1) seen["S just above a multiple of C"] += 1;
      }
      if (c.spec.microbatches > 1) seen["microbatches"] += 1;
      if (c.ignore_permille > 0 && c.ignore_permille < 1000) seen["IGNORE holes"] += 1;
      if (c.invalid_permille > 0 && c.invalid_permille < 1000) seen["valid holes"] += 1;
      if (c.ignore_permille == 1000) seen["every label IGNORE (N = 0)"] += 1;
      if (c.pad_content_permille > 0) seen["pad id as content"] += 1;
      if (c.vocab > 256) seen["large vocab"] += 1;
      if (c.spec.pad_policy == PadPolicy::zero) seen["zero pad policy"] += 1;
      if (!c.spec.shard_primary) seen["primary kept global"] += 1;
      seen[std::string("dtype ") + std::string(dtype_name(c.dtype))] += 1;
      if (!c.packed() && c.rows_per_microbatch() > 1 &&
          (c.positions == PositionKind::per_row || c.positions == PositionKind::mrope) &&
          caller_position(c, 0, c.seq_len - 1) != caller_position(c, 1, c.seq_len - 1))
        seen["rows whose last position ids differ"] += 1;
      if (c.left_pad > 0) seen["left padding"] += 1;
      if (c.row_positions == RowPositions::offset) seen["positions from a row offset"] += 1;
      if (c.row_positions == RowPositions::restart) seen["positions restarting in a row"] += 1;
      if (c.key_dtypes == KeyDTypes::narrow) seen["narrow key dtypes"] += 1;
      if (c.extra_planes) seen["extra key on seq dim 2"] += 1;
      if (c.extra_features) seen["extra key with features"] += 1;
      seen[std::string("positions ") + std::string(position_kind_name(c.positions))] += 1;
    }
  }
  for (const char* shape : {"cp=1",
                            "cp=pow2",
                            "cp=odd",
                            "cp=even",
                            "cp>16",
                            "packed",
                            "bshd",
                            "zero-length document",
                            "one-token document",
                            "caller document padding",
                            "document at a multiple of 2C",
                            "document at 2C ± 1",
                            "many documents",
                            "S at a multiple of 2C",
                            "S just below a multiple of C",
                            "S just above a multiple of C",
                            "microbatches",
                            "IGNORE holes",
                            "valid holes",
                            "every label IGNORE (N = 0)",
                            "pad id as content",
                            "large vocab",
                            "zero pad policy",
                            "primary kept global",
                            "dtype bf16",
                            "dtype b8",
                            "dtype i32",
                            "positions mrope",
                            "positions shared",
                            "rows whose last position ids differ",
                            "left padding",
                            "positions from a row offset",
                            "positions restarting in a row",
                            "narrow key dtypes",
                            "extra key on seq dim 2",
                            "extra key with features"}) {
    EXPECT_GT(seen[shape], 0) << "the generators never drew: " << shape;
  }
}

TEST(Generators, RestrictedCpListIsRespected) {
  GenOptions options;
  options.cp = {3, 5};
  for (const LayoutEntry& entry : layout_table()) {
    if (entry.descriptor->cp_off) continue;  // C is always 1
    for (const Case& c : sample(entry, 100, options))
      EXPECT_TRUE(c.spec.cp == 3 || c.spec.cp == 5) << print_case(c);
  }
}

TEST(Generators, EveryDrawableCellIsDrawnWhenAsked) {
  for (const LayoutEntry& entry : layout_table()) {
    for (const CaseCell& cell : drawable_cells(entry, {})) {
      GenOptions options;
      options.cell = cell;
      for (const Case& c : sample(entry, 20, options)) {
        SCOPED_TRACE(cell_name(cell) + ": " + print_case(c));
        EXPECT_EQ(batch_kind_of(entry, c), cell.kind);
        EXPECT_EQ(dtype_class_of(c.dtype), cell.dtype);
        EXPECT_EQ(cp_class_of(c.spec.cp), cell.cp);
        ASSERT_NO_THROW(validate_case(c));
      }
    }
  }
  // A C list without the cell's class: not forced, the case falls where the list allows.
  GenOptions options;
  options.cp = {3};
  options.cell = CaseCell{BatchKind::bshd, DTypeClass::integer, CpClass::two};
  for (const LayoutEntry& entry : layout_table()) {
    if (entry.descriptor->cp_off || !entry.descriptor->bshd_rows) continue;
    for (const Case& c : sample(entry, 10, options)) EXPECT_EQ(c.spec.cp, 3) << print_case(c);
  }
}

TEST(Generators, DomainShrinksAreSmallerAndValid) {
  for (const LayoutEntry& entry : layout_table()) {
    for (const Case& c : sample(entry, 60)) {
      for (const Case& smaller : domain_shrinks(c)) {
        SCOPED_TRACE(print_case(c) + " → " + print_case(smaller));
        EXPECT_FALSE(smaller == c);
        ASSERT_NO_THROW(validate_case(smaller));
        EXPECT_LE(smaller.spec.cp, c.spec.cp);
        EXPECT_LE(smaller.rows, c.rows);
        EXPECT_LE(smaller.seq_len, c.seq_len);
        EXPECT_NO_THROW(Subject{smaller});
      }
    }
  }
}

// Case data does not depend on the layout (only sharding does): the lines below name a plainly
// sharding one (tests/support/layouts.hpp), which takes BSHD and packed rows.
TEST(CaseData, IsAPureFunctionOfTheCaseAndLocatesItself) {
  const Case c = parse_case(
      testsupport::a_plain_layout() +
      " cp=3 docs=5,3+1,8/12 mb=2 vocab=50 dtype=f32 dim=2 seed=99 ignore=300 invalid=200");
  const Batch a = make_batch(c), b = make_batch(c);
  for (const auto& [name, field] : a.tokens)
    EXPECT_TRUE(field.value == b.tokens.at(name).value) << name;
  EXPECT_EQ(a.seq_lens, b.seq_lens);
  const Tensor t = token_tensor(c, 0, 2, 17);
  for (std::int64_t row = 0; row < 2; ++row) {
    for (std::int64_t pos = 0; pos < 17; ++pos) {
      for (std::int64_t f = 0; f < 2; ++f) {
        const auto at = decode_locator(c, 17, t.get((row * 17 + pos) * 2 + f));
        ASSERT_TRUE(at.has_value());
        EXPECT_EQ(at->row, row);
        EXPECT_EQ(at->pos, pos);
        EXPECT_EQ(at->feature, f);
      }
    }
  }
  Case other = c;
  other.seed = 100;
  EXPECT_FALSE(make_batch(other).at(keys::labels) == a.at(keys::labels));
  // Caller padding holds the pad id and IGNORE; the second document starts at caller slot 5.
  EXPECT_FALSE(caller_real(c, 0, 8));
  EXPECT_EQ(token_label(c, 0, 8), kIgnoreIndex);
  EXPECT_EQ(caller_position(c, 0, 5), 0);
  EXPECT_EQ(caller_position(c, 0, 9), 0);
}

TEST(CaseData, RowsDifferAsRealBatchesDo) {
  // Left padding: row b starts with (b + seed) mod 4 pad slots, marked in every key.
  const std::string layout = testsupport::a_plain_layout();
  const Case c = parse_case(layout +
                            " cp=2 rows=3 S=8 pos=per_row left_pad=3 seed=5 vocab=9 "
                            "pad_id=4 keys=padding_mask,loss_mask");
  const Batch batch = make_batch(c);
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int64_t pad = left_pad_slots(c, b);
    EXPECT_EQ(pad, (b + 5) % 4);
    for (std::int64_t t = 0; t < 8; ++t) {
      const std::int64_t at = b * 8 + t;
      EXPECT_EQ(batch.at(keys::padding_mask).get(at), t < pad ? 1.0 : 0.0);
      if (t < pad) {
        EXPECT_EQ(batch.at(keys::input_ids).get(at), 4.0);
        EXPECT_EQ(batch.at(keys::labels).get(at), static_cast<double>(kIgnoreIndex));
        EXPECT_EQ(batch.at(keys::valid).get(at), 0.0);
        EXPECT_EQ(batch.at(keys::position_ids).get(at), 1.0);  // HF's masked_fill value
      } else {
        EXPECT_EQ(batch.at(keys::position_ids).get(at), static_cast<double>(t - pad));
      }
    }
    EXPECT_TRUE(caller_real(c, b, 0));  // the layout cannot tell them from tokens
  }
  // Offsets differ per row; narrow keys keep their values in i32 / u8 / bf16.
  Case offset = parse_case(layout +
                           " cp=2 rows=2 S=6 pos=mrope rowpos=offset kdt=narrow seed=9 "
                           "primary=embeds keys=extra,planes,features dim=2");
  const Batch narrow = make_batch(offset);
  EXPECT_NE(caller_position(offset, 0, 0), caller_position(offset, 1, 0));
  EXPECT_EQ(narrow.at(keys::position_ids).dtype(), DType::i32);
  EXPECT_EQ(narrow.at(keys::position_ids).shape(), (Shape{3, 2, 6}));
  EXPECT_EQ(narrow.at(keys::labels).dtype(), DType::i32);
  EXPECT_EQ(narrow.at(keys::valid).dtype(), DType::u8);
  EXPECT_EQ(narrow.at(keys::inputs_embeds).dtype(), DType::bf16);
  EXPECT_EQ(narrow.tokens.at(kPlanesKey).seq_dim, 2);
  EXPECT_EQ(narrow.at(kPlanesKey).shape(), (Shape{2, 2, 6, 2}));
  EXPECT_EQ(narrow.at(kFeaturesKey).shape(), (Shape{2, 6, 2}));
  // A shared [1,S] row is the same for the whole batch and for each microbatch of it.
  const Case shared = parse_case(layout + " cp=2 mb=2 rows=2 S=5 pos=shared rowpos=restart seed=3");
  EXPECT_TRUE(make_batch(shared).at(keys::position_ids) ==
              make_batch_rows(shared, 1, 1).at(keys::position_ids));
}

}  // namespace
}  // namespace cplab::properties
