// Invariants of every registered layout at several C (1, primes, powers of two) on BSHD rows and
// packed rows: the construction against L from the layout's padding rule, its closed-form owner
// of g (derived independently of the construction), valid tokens and a naive count.
#include "tests/support/layouts.hpp"

#include <algorithm>
#include <optional>
#include <random>

#include "core/layout_option.hpp"
#include "layouts/layout_map.hpp"
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

// The row nearest to rc that the layout takes (the acceptance contract): where the padding is the
// caller's (SPEC §10.1) every document's slots up to a multiple of the layout's unit, the row
// exactly their sum; where it takes only some lengths, S up to the next it takes.
RowCase nearest_accepted(const LayoutSpec& spec, RowCase rc) {
  const Ints& occupied = rc.docs_padded.empty() ? rc.docs : rc.docs_padded;
  const sim::RowShape near = sim::nearest_accepted(
      spec, rc.packed ? sim::packed_row(occupied, rc.seq) : sim::bshd_row(rc.seq));
  rc.seq = near.seq_len;
  if (rc.packed && near.documents != occupied) rc.docs_padded = near.documents;
  return rc;
}

// L as SPEC §0-§3 state it, from the layout's descriptor (its padding rule), not from the plan.
std::int64_t spec_padded_len(const sim::LayoutDescriptor& layout, const LayoutSpec& spec,
                             const RowCase& rc) {
  const auto ceil_to = [](std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; };
  if (spec.cp == 1) return rc.seq;
  const std::int64_t unit = layout.padding.unit(spec);
  if (!rc.packed || layout.padding.document_unit == nullptr) return ceil_to(rc.seq, unit);
  std::int64_t documents = 0;
  for (std::int64_t n : rc.docs) documents += ceil_to(n, layout.padding.document_unit(spec));
  return std::max(documents, ceil_to(rc.seq, unit));
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
  const sim::LayoutDescriptor& descriptor = sim::layout_descriptor(layout);
  for (const RowCase& given : row_cases()) {
    if (!testsupport::takes_rows(layout, given.packed)) continue;  // refused (errors_test)
    // The row nearest to it that the layout takes (as the caller pads it for the layout, or
    // fitted to the lengths it takes); the refusals are errors_test's and the layouts' own.
    const RowCase rc = nearest_accepted(spec, given);
    SCOPED_TRACE(::testing::Message()
                 << "S=" << rc.seq << " docs=" << ::testing::PrintToString(rc.docs)
                 << " padded=" << ::testing::PrintToString(rc.docs_padded));
    const RowPlan row =
        reference::plan_row(spec, rc.seq, rc.packed ? &rc.docs : nullptr, &rc.docs_padded);
    const std::int64_t len = row.padded_len;
    ASSERT_EQ(len, spec_padded_len(descriptor, spec, rc));
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
    // The closed form (layouts/), from the parameters the construction recorded.
    const sim::LayoutMap map(descriptor, cp, len, row.map);
    for (std::int64_t g = 0; g < len; ++g) {
      const index_math::Slot owner = map.owner(g);
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

// Every registered layout, at C = 1 and beyond unless it is CP off.
std::vector<LayoutParam> layout_params() {
  std::vector<LayoutParam> params;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : {1, 2, 3, 4, 5, 8}) {
      if (cp == 1 || !layout.cp_off) params.push_back({layout.name, cp});
    }
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

// The plan of a row, or nullopt when the layout refuses it.
std::optional<RowPlan> plan_or_refusal(const LayoutSpec& spec, std::int64_t seq, const Ints* docs) {
  try {
    return reference::plan_row(spec, seq, docs);
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool same_row_plan(const std::optional<RowPlan>& a, const std::optional<RowPlan>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return a->padded_len == b->padded_len && a->index == b->index && a->positions == b->positions &&
         a->caller_pos == b->caller_pos && a->local_cu_seqlens == b->local_cu_seqlens;
}

// Each layout reads exactly the options it declares (layouts/ID.cpp, what `check --layout auto`
// searches over): other values (than make_spec's) of an option it does not declare leave every
// plan as it was, at C = 1 and C = 4, and each option it declares changes some row's plan.
TEST(LayoutOptions, EachLayoutReadsExactlyTheOptionsItDeclares) {
  const Ints docs = {16, 24, 8, 16};
  for (const reference::LayoutInfo& info : reference::layouts()) {
    const auto declared = layouts::options_of(info.name);
    for (const layouts::LayoutOption* option : layouts::all_options()) {
      bool differs = false;
      for (std::int64_t cp : {1, 4}) {
        const LayoutSpec base = make_spec(info.name, cp);
        const std::vector<std::int64_t> values =
            option->is_switch               ? std::vector<std::int64_t>{0, 1}
            : option->candidates != nullptr ? option->candidates(4, 16)
                                            : std::vector<std::int64_t>{option->fallback + 1};
        for (std::int64_t value : values) {
          LayoutSpec other = base;
          option->set(other, value);
          differs =
              differs ||
              !same_row_plan(plan_or_refusal(base, 64, nullptr),
                             plan_or_refusal(other, 64, nullptr)) ||
              !same_row_plan(plan_or_refusal(base, 64, &docs), plan_or_refusal(other, 64, &docs));
        }
      }
      const bool is_declared =
          std::find(declared.begin(), declared.end(), option) != declared.end();
      EXPECT_EQ(differs, is_declared) << info.name << " " << option->name
                                      << (differs ? " changes its plans but is not declared"
                                                  : " is declared but changes no plan");
    }
  }
}

}  // namespace
}  // namespace cplab::testing
