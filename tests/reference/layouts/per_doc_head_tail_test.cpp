// per-doc-head-tail (SPEC §10.1): the worked examples of §9.10 by the reference and through
// `cplab layout`, and its refusals there.
#include "layouts/thd_map.hpp"
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/cli_layout.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

// The document-major order of §9.4 / §9.10: every document's per-rank chunks in rank order, the
// flattened stream cut into C equal contiguous pieces.
std::vector<Ints> document_major(const RowPlan& row, const Ints& bounds) {
  Ints flat;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    for (const Ints& local : row.index) {
      for (std::int64_t g : local) {
        if (g >= bounds[i] && g < bounds[i + 1]) flat.push_back(g);
      }
    }
  }
  std::vector<Ints> pieces;
  const auto piece = static_cast<std::ptrdiff_t>(flat.size() / row.index.size());
  for (std::size_t r = 0; r < row.index.size(); ++r)
    pieces.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(r) * piece,
                        flat.begin() + static_cast<std::ptrdiff_t>(r + 1) * piece);
  return pieces;
}

TEST(SpecExample10, PerDocHeadTailDocuments8And4) {
  const Ints docs{8, 4};
  RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), sum(docs), &docs);
  EXPECT_EQ(row.padded_len, 12);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 6, 7, 8, 11}, {2, 3, 4, 5, 9, 10}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 1, 6, 7, 8, 11}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{2, 3, 4, 5, 9, 10}));
  for (std::int64_t r = 0; r < 2; ++r) {
    Ints ids;
    for (std::int64_t g : row.index[r]) ids.push_back(row.doc_ids[g]);
    EXPECT_EQ(ids, (Ints{1, 1, 1, 1, 2, 2})) << "rank " << r;
  }
  EXPECT_TRUE(row.local_cu_seqlens.empty());
  EXPECT_EQ(causal_work(row), (Ints{23, 23}));
  row.index = document_major(row, {0, 8, 12});
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 1, 6, 7, 2, 3}, {4, 5, 8, 11, 9, 10}}));
  EXPECT_EQ(causal_work(row), (Ints{25, 21}));
}

TEST(SpecExample10, PerDocHeadTailDocuments4And12IsThdsMap) {
  const Ints docs{4, 12};
  RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), sum(docs), &docs);
  // Documents already multiples of 2C: the closed form of head-tail inside every document over the
  // row's own document bounds (index_math::ThdMap), every rank.
  ASSERT_EQ(row.cu_seqlens_padded, (Ints{0, 4, 16}));
  const index_math::ThdMap per_document{
      .cp = 2, .cu_padded = row.cu_seqlens_padded.data(), .n_docs = 2};
  std::vector<Ints> closed_form(2);
  for (std::int64_t r = 0; r < 2; ++r) {
    for (std::int64_t k = 0; k < per_document.local_len(); ++k)
      closed_form[r].push_back(per_document.global_index(r, k));
  }
  EXPECT_EQ(row.index, closed_form);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(causal_work(row), (Ints{44, 44}));
  row.index = document_major(row, {0, 4, 16});
  EXPECT_EQ(causal_work(row), (Ints{26, 62}));
}

TEST(SpecExample10, PerDocHeadTailTheCallersPadding) {
  const Ints real{3, 4}, padded{4, 4};
  const RowPlan row = plan_row(make_spec("per-doc-head-tail", 2), 8, &real, &padded);
  EXPECT_EQ(row.index, (std::vector<Ints>{{0, 3, 4, 7}, {1, 2, 5, 6}}));
  EXPECT_EQ(row.real[3], 0) << "slot 3 is the caller's pad";
  EXPECT_EQ(row.valid_tokens, (Ints{3, 4}));
}

TEST(SpecExample10, PerDocHeadTailRefusesRowsTheCallerDidNotPad) {
  const LayoutSpec spec = make_spec("per-doc-head-tail", 2);
  const Ints odd{5, 3}, short_row{4, 4};
  const auto message = [](const auto& plan) -> std::string {
    try {
      plan();
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const auto expect_refused = [&](const std::string& got, const std::string& part) {
    EXPECT_NE(got.find(part), std::string::npos) << got;
  };
  expect_refused(message([&] { plan_row(spec, 8, &odd); }),
                 "document 1 occupies 5 slots, not a multiple of 2C=4");
  expect_refused(message([&] { plan_row(spec, 10); }),
                 "a BSHD row of S=10 is one document, not a multiple of 2C=4");
  expect_refused(message([&] { plan_row(spec, 12, &short_row); }),
                 "the documents occupy 8 of the row's S=12 slots");
  // At C = 1 every layout is the identity, whatever the documents.
  const LayoutSpec one = make_spec("per-doc-head-tail", 1);
  EXPECT_EQ(plan_row(one, 8, &odd).index, (std::vector<Ints>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(plan_row(one, 10).padded_len, 10);
}

// SPEC §9.10 through `cplab layout`.
TEST(CliLayout, Example10PerDocHeadTail) {
  const auto out = layout_json("--layout per-doc-head-tail --cp 2 --doc-lens 8,4");
  EXPECT_EQ(out["layout"], "per-doc-head-tail");
  EXPECT_EQ(out["padded_seq_len"], 12);
  EXPECT_EQ(indices(out), (std::vector<Ints>{{0, 1, 6, 7, 8, 11}, {2, 3, 4, 5, 9, 10}}));
  EXPECT_EQ(out["ranks"][0]["positions"].get<Ints>(), (Ints{0, 1, 6, 7, 8, 11}));
  EXPECT_EQ(out["ranks"][1]["doc_ids"].get<Ints>(), (Ints{1, 1, 1, 1, 2, 2}));
  EXPECT_EQ(out["ranks"][0]["causal_work"], 23);
  EXPECT_EQ(out["ranks"][1]["causal_work"], 23);
  EXPECT_EQ(out["imbalance"].get<double>(), 1.0);
  // A BSHD row is one document: chunk r, then chunk 2C-1-r, of the whole row (SPEC §9.1's map).
  EXPECT_EQ(indices(layout_json("--layout per-doc-head-tail --cp 4 --seq-len 16")),
            (std::vector<Ints>{{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}}));
}

TEST(CliLayout, PerDocHeadTailBadArgumentsExit2WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--layout per-doc-head-tail --cp 2 --doc-lens 5,3", "not a multiple of 2C=4"},
      {"--layout per-doc-head-tail --cp 2 --seq-len 10", "not a multiple of 2C=4"},
  };
  for (const auto& [args, part] : cases) {
    testsupport::expect_usage_error(testsupport::run_cplab("layout " + args), {part}, args);
  }
}

}  // namespace
}  // namespace cplab::testing
