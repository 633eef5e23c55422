// Invariants of every layout at several C (1, primes, powers of two) on BSHD rows and packed rows,
// against SPEC §0-§3 formulas written out here (owner of g, L, valid tokens) and a naive count.
#include <algorithm>
#include <random>

#include "reference/work.hpp"
#include "support.hpp"

namespace cplab::testing {
namespace {

struct RowCase {
  std::int64_t seq;
  bool packed = false;
  Ints docs;
  Ints docs_padded;  // empty: as docs
};

std::vector<RowCase> row_cases() {
  std::vector<RowCase> cases;
  for (std::int64_t seq : {1, 5, 7, 16, 23, 32}) cases.push_back({seq, false, {}, {}});
  for (const Ints& docs :
       std::vector<Ints>{{5, 3, 8}, {4, 12}, {1}, {0, 5, 0, 3}, {7, 0}, {13}, {2, 2, 2, 2, 2}}) {
    cases.push_back({sum(docs), true, docs, {}});
  }
  cases.push_back({20, true, {5, 3}, {6, 4}});        // caller document padding, then row padding
  cases.push_back({11, true, {4, 0, 2}, {4, 1, 5}});  // a zero-length document that occupies a slot
  std::mt19937 draw(20240611);
  for (int i = 0; i < 8; ++i) {
    Ints docs(static_cast<std::size_t>(1 + draw() % 5));
    for (auto& len : docs) len = static_cast<std::int64_t>(draw() % 14);
    cases.push_back({sum(docs) + static_cast<std::int64_t>(draw() % 3), true, docs, {}});
  }
  return cases;
}

struct Owner {
  std::int64_t rank;
  std::int64_t offset;
};

// The owner of global slot g as SPEC §3 states it for each layout.
Owner spec_owner(const std::string& layout, const RowPlan& row, std::int64_t chunk_size,
                 std::int64_t g) {
  const std::int64_t cp = row.cp, local = row.padded_len / cp;
  if (cp == 1) return {0, g};
  if (layout == "contiguous") return {g / local, g % local};
  if (layout == "head-tail") {
    const std::int64_t c = row.padded_len / (2 * cp), q = g / c;
    return q < cp ? Owner{q, g - q * c} : Owner{2 * cp - 1 - q, c + g - q * c};
  }
  if (layout == "thd") {
    const Ints& cu = row.cu_seqlens_padded;
    std::size_t i = 0;
    while (!(cu[i] <= g && g < cu[i + 1])) ++i;
    const std::int64_t c = (cu[i + 1] - cu[i]) / (2 * cp), j = g - cu[i], q = j / c,
                       start = cu[i] / cp;
    return q < cp ? Owner{q, start + j - q * c} : Owner{2 * cp - 1 - q, start + c + j - q * c};
  }
  // magi: the chunk's rank, at the chunk's place among that rank's ascending chunks.
  const std::int64_t chunk = g / chunk_size;
  for (std::int64_t r = 0; r < cp; ++r) {
    const Ints& chunks = row.magi_chunks[r];
    const auto at = std::find(chunks.begin(), chunks.end(), chunk);
    if (at != chunks.end()) return {r, (at - chunks.begin()) * chunk_size + g % chunk_size};
  }
  return {-1, -1};
}

std::int64_t spec_padded_len(const std::string& layout, const LayoutSpec& spec, const RowCase& rc) {
  const auto ceil_to = [](std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; };
  if (spec.cp == 1) return rc.seq;
  if (layout == "contiguous") return ceil_to(rc.seq, spec.cp * spec.pad_multiple);
  if (layout == "head-tail") return ceil_to(rc.seq, 2 * spec.cp);
  if (layout == "magi") return ceil_to(rc.seq, spec.chunk_size * spec.cp);
  std::int64_t documents = 0;
  for (std::int64_t n : rc.docs) documents += ceil_to(n, 2 * spec.cp);
  return std::max(documents, ceil_to(rc.seq, 2 * spec.cp));
}

// Real keys each real query sees, by the definition: a double loop.
Ints naive_visible(const RowPlan& row) {
  Ints visible(static_cast<std::size_t>(row.padded_len), 0);
  for (std::int64_t q = 0; q < row.padded_len; ++q) {
    for (std::int64_t k = 0; k <= q; ++k) {
      visible[q] += row.real[q] && row.real[k] && row.doc_ids[q] == row.doc_ids[k];
    }
  }
  return visible;
}

struct LayoutParam {
  std::string layout;
  std::int64_t cp;
};

void PrintTo(const LayoutParam& param, std::ostream* os) {
  *os << param.layout << " cp=" << param.cp;
}

class LayoutInvariants : public ::testing::TestWithParam<LayoutParam> {};

TEST_P(LayoutInvariants, HoldOnEveryRow) {
  const auto& [layout, cp] = GetParam();
  LayoutSpec spec = make_spec(layout, cp);
  for (const RowCase& rc : row_cases()) {
    if (layout == "thd" && !rc.packed) continue;  // thd lays out documents only (errors_test)
    SCOPED_TRACE(::testing::Message()
                 << "S=" << rc.seq << " docs=" << ::testing::PrintToString(rc.docs)
                 << " padded=" << ::testing::PrintToString(rc.docs_padded));
    const RowPlan row =
        reference::plan_row(spec, rc.seq, rc.packed ? &rc.docs : nullptr, &rc.docs_padded);
    const std::int64_t len = row.padded_len;
    ASSERT_EQ(len, spec_padded_len(layout, spec, rc));
    ASSERT_EQ(static_cast<std::int64_t>(row.index.size()), cp);
    Ints all;
    for (const Ints& local : row.index) {
      ASSERT_EQ(static_cast<std::int64_t>(local.size()), len / cp);
      all.insert(all.end(), local.begin(), local.end());
    }
    std::sort(all.begin(), all.end());
    Ints arange(static_cast<std::size_t>(len));
    std::iota(arange.begin(), arange.end(), 0);
    ASSERT_EQ(all, arange) << "the ranks' index maps are not a permutation of [0, L)";
    for (std::int64_t g = 0; g < len; ++g) {
      const Owner owner = spec_owner(layout, row, spec.chunk_size, g);
      ASSERT_TRUE(owner.rank >= 0 && owner.rank < cp && owner.offset >= 0 &&
                  owner.offset < len / cp)
          << "g=" << g;
      ASSERT_EQ(row.index[owner.rank][owner.offset], g) << "owner of g=" << g;
    }
    const std::int64_t real_tokens = rc.packed ? sum(rc.docs) : rc.seq;
    EXPECT_EQ(sum(row.valid_tokens), real_tokens);
    EXPECT_EQ(std::count(row.real.begin(), row.real.end(), 1), real_tokens);
    EXPECT_EQ(reference::visible_keys(row), naive_visible(row));
    const Ints work = reference::causal_work(row);
    EXPECT_EQ(sum(work), sum(naive_visible(row)));
    if (cp == 1) {
      EXPECT_EQ(row.index[0], Ints(arange.begin(), arange.end())) << "C = 1 must be the identity";
    }
  }
}

std::vector<LayoutParam> layout_params() {
  std::vector<LayoutParam> params{{"identity", 1}};
  for (const char* layout : {"contiguous", "head-tail", "thd", "magi"}) {
    for (std::int64_t cp : {1, 2, 3, 4, 5, 8}) params.push_back({layout, cp});
  }
  return params;
}

std::string param_name(const ::testing::TestParamInfo<LayoutParam>& info) {
  std::string name = info.param.layout + "_cp" + std::to_string(info.param.cp);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Reference, LayoutInvariants, ::testing::ValuesIn(layout_params()),
                         param_name);

}  // namespace
}  // namespace cplab::testing
