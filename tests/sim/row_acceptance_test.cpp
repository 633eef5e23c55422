// The acceptance contract (layouts/row_acceptance.hpp) against both constructions, for every
// registered layout and some values of each of its options: the reference plans a row exactly when
// the contract accepts it, the twin's stream refuses exactly with the contract's reason, and the
// nearest accepted row is accepted, no shorter, a fixed point, and the row itself exactly when the
// row is accepted.
#include "layouts/row_acceptance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/layout_option.hpp"
#include "layouts/partition.hpp"
#include "reference/plan.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::simtest {
namespace {

using Ints = std::vector<std::int64_t>;
using testsupport::error_of;

// The spec at its defaults, then with each value option at its least and its least + 1, one option
// at a time, where the spec is valid.
std::vector<LayoutSpec> specs_of(const std::string& layout, std::int64_t cp) {
  LayoutSpec base;
  base.layout = layout;
  base.cp = cp;
  std::vector<LayoutSpec> out = {base};
  for (const layouts::LayoutOption* o : layouts::options_of(layout)) {
    if (o->is_switch) continue;
    for (std::int64_t v : {o->least, o->least + 1}) {
      if (v > o->most_at(cp)) continue;
      LayoutSpec s = base;
      o->set(s, v);
      const sim::LayoutDescriptor& d = sim::layout_descriptor(layout);
      const std::string invalid = error_of([&] {
        layouts::check_options(s);
        if (d.check_spec != nullptr) d.check_spec(s);
      });
      if (invalid.empty()) out.push_back(s);
    }
  }
  return out;
}

struct Row {
  sim::RowShape shape;
  Ints real;  // packed: the real tokens of each document (at most its slots)
};

std::vector<Row> rows_for(std::mt19937_64& draw) {
  std::vector<Row> rows;
  for (std::int64_t s = 1; s <= 26; ++s) rows.push_back({sim::bshd_row(s), {}});
  for (int i = 0; i < 40; ++i) {
    Row row;
    const auto count = static_cast<std::size_t>(1 + draw() % 4);
    Ints slots(count);
    for (std::size_t d = 0; d < count; ++d) {
      slots[d] = static_cast<std::int64_t>(draw() % 9);
      row.real.push_back(slots[d] - static_cast<std::int64_t>(draw() % (slots[d] + 1) / 2));
    }
    std::int64_t seq = 0;
    for (std::int64_t n : slots) seq += n;
    row.shape = sim::packed_row(slots, seq + static_cast<std::int64_t>(draw() % 3));
    rows.push_back(row);
  }
  return rows;
}

sim::MicrobatchRows microbatch(const Row& row) {
  sim::MicrobatchRows rows;
  rows.rows = 1;
  rows.caller_len = row.shape.seq_len;
  rows.packed = row.shape.packed;
  if (row.shape.packed) {
    rows.seq_lens = row.real;
    rows.seq_lens_padded = row.shape.documents;
  }
  return rows;
}

std::string reference_error(const LayoutSpec& spec, const Row& row) {
  return error_of([&] {
    if (row.shape.packed) {
      reference::plan_row(spec, row.shape.seq_len, &row.real, &row.shape.documents);
    } else {
      reference::plan_row(spec, row.shape.seq_len);
    }
  });
}

TEST(RowAcceptance, both_constructions_take_exactly_the_rows_the_contract_accepts) {
  std::mt19937_64 draw(20261203);
  const std::vector<Row> rows = rows_for(draw);
  std::int64_t accepted = 0, refused = 0;
  for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 4})) {
    for (const LayoutSpec& spec : specs_of(layout, cp)) {
      for (const Row& row : rows) {
        SCOPED_TRACE(::testing::Message() << spec_brief(spec) << " S=" << row.shape.seq_len
                                          << " packed=" << row.shape.packed << " slots="
                                          << ::testing::PrintToString(row.shape.documents));
        const std::string why = sim::refusal(spec, row.shape);
        EXPECT_EQ(sim::accepts(spec, row.shape), why.empty());
        const std::string twin = error_of([&] { sim::row_stream(spec, microbatch(row)); });
        if (why.empty()) {
          EXPECT_EQ(twin, "");
        } else {
          EXPECT_NE(twin.find(why), std::string::npos) << twin << "\n  the contract: " << why;
        }
        EXPECT_EQ(reference_error(spec, row).empty(), why.empty()) << reference_error(spec, row);
        (why.empty() ? accepted : refused) += 1;
      }
    }
  }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 100);  // the contract refuses something, so the comparison can fail
}

TEST(RowAcceptance, the_nearest_accepted_row_is_taken_no_shorter_and_a_fixed_point) {
  std::mt19937_64 draw(7);
  const std::vector<Row> rows = rows_for(draw);
  std::int64_t moved = 0;
  for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 4, 8})) {
    for (const LayoutSpec& spec : specs_of(layout, cp)) {
      for (const Row& row : rows) {
        if (!testsupport::takes_rows(layout, row.shape.packed)) continue;
        if (!sim::kind_refusal(sim::layout_descriptor(layout), spec, row.shape).empty()) continue;
        SCOPED_TRACE(::testing::Message() << spec_brief(spec) << " S=" << row.shape.seq_len
                                          << " packed=" << row.shape.packed << " slots="
                                          << ::testing::PrintToString(row.shape.documents));
        const sim::RowShape near = sim::nearest_accepted(spec, row.shape);
        EXPECT_TRUE(sim::accepts(spec, near)) << sim::refusal(spec, near);
        EXPECT_GE(near.seq_len, row.shape.seq_len);
        EXPECT_EQ(near.documents.size(), row.shape.documents.size());
        for (std::size_t d = 0; d < near.documents.size(); ++d)
          EXPECT_GE(near.documents[d], row.shape.documents[d]);
        EXPECT_EQ(sim::nearest_accepted(spec, near), near);
        EXPECT_EQ(near == row.shape, sim::accepts(spec, row.shape));
        if (!row.shape.packed) {
          EXPECT_EQ(sim::nearest_accepted_len(spec, row.shape.seq_len), near.seq_len);
        }
        moved += near == row.shape ? 0 : 1;
      }
    }
  }
  EXPECT_GT(moved, 100);
}

}  // namespace
}  // namespace cplab::simtest
