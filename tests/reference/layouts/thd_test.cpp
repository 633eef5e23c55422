// thd (SPEC §3.4): the worked examples of §9.3 and §9.4 by the reference.
#include "reference/plan.hpp"
#include "reference/work.hpp"
#include "tests/reference/support.hpp"

namespace cplab::testing {
namespace {

using reference::causal_work;
using reference::plan_row;

TEST(SpecExample3, ThdDocuments5And3And8AtCp2) {
  const Ints docs{5, 3, 8};
  const RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.cu_seqlens_padded, (Ints{0, 8, 12, 20}));
  Ints chunks;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    chunks.push_back((row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i]) / 4);
  }
  EXPECT_EQ(chunks, (Ints{2, 1, 2}));
  EXPECT_EQ(row.index[0], (Ints{0, 1, 6, 7, 8, 11, 12, 13, 18, 19}));
  EXPECT_EQ(row.index[1], (Ints{2, 3, 4, 5, 9, 10, 14, 15, 16, 17}));
  EXPECT_EQ(row.local_cu_seqlens, (std::vector<Ints>{{0, 4, 6, 10}, {0, 4, 6, 10}}));
  EXPECT_EQ(local_values(row, row.positions, 0), (Ints{0, 1, 6, 7, 0, 3, 0, 1, 6, 7}));
  EXPECT_EQ(local_values(row, row.positions, 1), (Ints{2, 3, 4, 5, 1, 2, 2, 3, 4, 5}));
}

TEST(SpecExample4, ThdDocuments4And12BalanceWork) {
  const Ints docs{4, 12};
  RowPlan row = plan_row(make_spec("thd", 2), sum(docs), &docs);
  EXPECT_EQ(row.padded_len, 16);
  EXPECT_EQ(row.index,
            (std::vector<Ints>{{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}}));
  EXPECT_EQ(causal_work(row), (Ints{44, 44}));
  // The document-major bug: every document's chunks in rank order, then cut into equal halves.
  Ints document_major;
  for (std::size_t i = 0; i + 1 < row.cu_seqlens_padded.size(); ++i) {
    for (const Ints& local : row.index) {
      for (std::int64_t g : local) {
        if (g >= row.cu_seqlens_padded[i] && g < row.cu_seqlens_padded[i + 1])
          document_major.push_back(g);
      }
    }
  }
  row.index = {Ints(document_major.begin(), document_major.begin() + 8),
               Ints(document_major.begin() + 8, document_major.end())};
  EXPECT_EQ(causal_work(row), (Ints{26, 62}));
}

}  // namespace
}  // namespace cplab::testing
