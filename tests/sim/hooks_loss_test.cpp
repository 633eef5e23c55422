// Every loss hook of SimImplementation is live: a variant overriding only that hook with one of
// SPEC §6's known wrong variants (or another bug that has shipped) fails the loss check on every
// layout that takes the batch (or every one of the kind the bug shows on). A hook only one layout's
// map shows a bug through is tested in that layout's own file (layouts/ID_test.cpp).
#include <gtest/gtest.h>

#include "hooks_fixtures.hpp"

namespace cplab::simtest {
namespace {

using sim::LossToken;
using sim::SimImplementation;
using sim::Target;

class LabelsShiftedLocally : public SimImplementation {
 protected:
  std::vector<std::vector<Target>> resolve_targets(Comm&, const ShardLayout& layout,
                                                   const Tensor& labels,
                                                   std::int64_t /*depth*/) const override {
    const std::int64_t len = layout.local_len();
    std::vector<std::vector<Target>> targets(static_cast<std::size_t>(layout.rows),
                                             std::vector<Target>(static_cast<std::size_t>(len)));
    for (std::int64_t b = 0; b < layout.rows; ++b) {
      for (std::int64_t k = 0; k + 1 < len; ++k)
        targets[b][k] = {true, static_cast<std::int64_t>(labels.get(b * len + k + 1))};
    }
    return targets;
  }
};

class MeanOfRankMeans : public SimImplementation {
 protected:
  double loss_scale(std::int64_t local, std::int64_t, std::int64_t) const override {
    return local > 0 ? 1.0 / static_cast<double>(local) : 0.0;
  }
};

class FactorCForgotten : public SimImplementation {
 protected:
  double loss_scale(std::int64_t, std::int64_t total, std::int64_t) const override {
    return total > 0 ? 1.0 / static_cast<double>(total) : 0.0;
  }
};

class CountOverCopies : public SimImplementation {  // every rank holds a copy of the sum: C × N
 protected:
  std::int64_t total_contributing(Comm& comm, std::int64_t local) const override {
    return SimImplementation::total_contributing(comm, local) * comm.size();
  }
};

class CountFromOneRank : public SimImplementation {
 protected:
  std::int64_t total_contributing(Comm&, std::int64_t local) const override { return local; }
};

class ShiftAcrossDocuments : public SimImplementation {
 protected:
  bool crosses_document(const ShardLayout&, std::int32_t, std::int32_t,
                        std::int64_t) const override {
    return false;
  }
};

class ValidMaskIgnored : public SimImplementation {
 protected:
  bool token_contributes(const LossToken& token) const override {
    return token.target.exists && token.target.label != kIgnoreIndex;
  }
};

class CountsIgnoredTargets : public SimImplementation {
 protected:
  std::int64_t count_contributing(
      const std::vector<std::vector<LossToken>>& tokens) const override {
    std::int64_t count = 0;
    for (const auto& row : tokens) {
      for (const LossToken& token : row) count += token.valid && token.target.exists ? 1 : 0;
    }
    return count;
  }
};

// The loss report of Variant on every layout the reference plans `batch` with at C = cp; at least
// one layout must take it, so that the check is never vacuous.
template <typename Variant>
std::vector<std::pair<std::string, std::string>> reports(std::int64_t cp, const Batch& batch) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& layout : layouts_taking(cp, batch))
    out.emplace_back(layout, loss_report<Variant>(layout, cp, batch));
  EXPECT_FALSE(out.empty()) << "no layout takes the batch at C=" << cp;
  return out;
}

// Every layout that takes the batch fails the loss check with Variant.
template <typename Variant>
void expect_every_layout_fails(std::int64_t cp, const Batch& batch) {
  for (const auto& [layout, report] : reports<Variant>(cp, batch))
    EXPECT_NE(report, "") << layout << " at C=" << cp << " passed a known wrong variant";
}

TEST(LossHooks, standard_sim_passes_the_check_these_variants_fail) {
  for (std::int64_t cp : {2, 3}) {
    for (const Batch& batch : {bshd_batch(1, 16), dense_batch(1, 16), docs_5_3_8()}) {
      for (const auto& [layout, report] : reports<SimImplementation>(cp, batch))
        EXPECT_EQ(report, "") << layout << " at C=" << cp;
    }
  }
}

TEST(LossHooks, labels_shifted_locally_after_the_split) {
  expect_every_layout_fails<LabelsShiftedLocally>(2, dense_batch(1, 16));
}
TEST(LossHooks, mean_of_per_rank_means) {
  expect_every_layout_fails<MeanOfRankMeans>(2, bshd_batch(2, 13));
}
TEST(LossHooks, factor_c_forgotten) {
  expect_every_layout_fails<FactorCForgotten>(3, bshd_batch(2, 13));
}
TEST(LossHooks, count_summed_over_copies) {
  expect_every_layout_fails<CountOverCopies>(2, bshd_batch(2, 13));
}
TEST(LossHooks, count_from_one_rank) {
  expect_every_layout_fails<CountFromOneRank>(2, docs_5_3_8());
}
// Whether the reference lays two documents of `batch` side by side at `spec`: a real slot whose
// next slot is a real token of another document (a layout that pads every document never does, and
// a shift across the boundary then meets a pad).
bool documents_meet(const LayoutSpec& spec, const Batch& batch) {
  for (const RowPlan& row : reference::plan(spec, batch).rows) {
    for (std::size_t g = 0; g + 1 < row.doc_ids.size(); ++g) {
      if (row.real[g] && row.real[g + 1] && row.doc_ids[g] != row.doc_ids[g + 1]) return true;
    }
  }
  return false;
}

TEST(LossHooks, shift_across_a_document_boundary) {
  int layouts_tried = 0;
  for (const std::string& layout : layouts_taking(2, docs_5_3_8())) {
    if (!documents_meet(spec_for(layout, 2), docs_5_3_8())) continue;
    ++layouts_tried;
    EXPECT_NE(loss_report<ShiftAcrossDocuments>(layout, 2, docs_5_3_8()), "") << layout;
  }
  EXPECT_GE(layouts_tried, 1) << "no layout lays two documents side by side";
}
TEST(LossHooks, valid_mask_ignored) {
  expect_every_layout_fails<ValidMaskIgnored>(2, bshd_batch(1, 16));
}
TEST(LossHooks, n_counts_tokens_whose_target_is_ignore) {
  expect_every_layout_fails<CountsIgnoredTargets>(2, docs_5_3_8());
}

}  // namespace
}  // namespace cplab::simtest
