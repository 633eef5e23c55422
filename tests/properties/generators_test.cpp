// The generators draw what they promise: valid cases within the size bounds, the shapes the issue
// lists (C = 1, non-powers of two, lengths at and around multiples, packed rows of every kind,
// IGNORE and valid holes, N = 0, pad ids in the content), and domain shrinks that are smaller and
// still valid. Case data is a pure function of the case and locates itself.
#include "properties/generators.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "reference/plan.hpp"

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
      if (entry.cp_off) {
        EXPECT_EQ(c.spec.cp, 1);
      }
      if (!entry.bshd_rows) {
        EXPECT_TRUE(c.packed());
      }
      if (!entry.packed_rows) {
        EXPECT_FALSE(c.packed());
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
      if (c.spec.num_chunks > 1) seen["microbatches"] += 1;
      if (c.ignore_permille > 0 && c.ignore_permille < 1000) seen["IGNORE holes"] += 1;
      if (c.invalid_permille > 0 && c.invalid_permille < 1000) seen["valid holes"] += 1;
      if (c.ignore_permille == 1000) seen["every label IGNORE (N = 0)"] += 1;
      if (c.pad_content_permille > 0) seen["pad id as content"] += 1;
      if (c.vocab > 256) seen["large vocab"] += 1;
      if (c.spec.pad_policy == PadPolicy::zero) seen["zero pad policy"] += 1;
      if (!c.spec.shard_primary) seen["primary kept global"] += 1;
      seen[std::string("dtype ") + std::string(dtype_name(c.dtype))] += 1;
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
                            "positions shared"}) {
    EXPECT_GT(seen[shape], 0) << "the generators never drew: " << shape;
  }
}

TEST(Generators, RestrictedCpListIsRespected) {
  GenOptions options;
  options.cp = {3, 5};
  for (const Case& c : sample(layout_entry("head-tail"), 100, options))
    EXPECT_TRUE(c.spec.cp == 3 || c.spec.cp == 5);
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

TEST(CaseData, IsAPureFunctionOfTheCaseAndLocatesItself) {
  const Case c = parse_case(
      "thd cp=3 docs=5,3+1,8/12 mb=2 vocab=50 dtype=f32 dim=2 seed=99 ignore=300 invalid=200");
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

}  // namespace
}  // namespace cplab::properties
