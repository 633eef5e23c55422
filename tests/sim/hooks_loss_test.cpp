// Every loss hook of SimImplementation is live: a variant overriding only that hook with one of
// SPEC §6's known wrong variants (or another bug that has shipped) fails the loss check.
#include <gtest/gtest.h>

#include "loss_check.hpp"

namespace cplab::simtest {
namespace {

using sim::LossToken;
using sim::SimImplementation;
using sim::Target;

class LabelsShiftedLocally : public SimImplementation {
 protected:
  std::vector<std::vector<Target>> resolve_targets(Comm&, const ShardLayout& layout,
                                                   const Tensor& labels) const override {
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
  bool crosses_document(const ShardLayout&, std::int32_t, std::int32_t) const override {
    return false;
  }
};

// head-tail: rank C-1's early chunk ends where its own tail chunk begins; this takes that target
// from its next-rank neighbour (rank 0's first token) instead. (Run on head-tail only.)
class WrongNeighbourForLastRank : public SimImplementation {
 protected:
  index_math::Slot target_owner(const sim::LayoutMap& map, std::int64_t slot) const override {
    const index_math::Slot right = SimImplementation::target_owner(map, slot);
    const std::int64_t c = map.padded_len() / (2 * map.cp());
    if (map.cp() > 1 && slot == map.cp() * c) return {0, right.offset - c};
    return right;
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

const Batch& docs_5_3_8() {
  static const Batch batch = packed_batch({{5, 3, 8}}, 16);
  return batch;
}

template <typename Variant>
std::string loss_report(const std::string& layout, std::int64_t cp, const Batch& batch) {
  Variant variant;
  return check_loss_against_reference(spec_for(layout, cp), batch, &variant);
}

TEST(LossHooks, standard_sim_passes_the_check_these_variants_fail) {
  EXPECT_EQ(loss_report<SimImplementation>("head-tail", 2, bshd_batch(1, 16)), "");
  EXPECT_EQ(loss_report<SimImplementation>("head-tail", 2, dense_batch(1, 16)), "");
  EXPECT_EQ(loss_report<SimImplementation>("contiguous", 2, docs_5_3_8()), "");
}

TEST(LossHooks, labels_shifted_locally_after_the_split) {
  EXPECT_NE(loss_report<LabelsShiftedLocally>("head-tail", 2, dense_batch(1, 16)), "");
}
TEST(LossHooks, mean_of_per_rank_means) {
  EXPECT_NE(loss_report<MeanOfRankMeans>("contiguous", 2, bshd_batch(2, 13)), "");
}
TEST(LossHooks, factor_c_forgotten) {
  EXPECT_NE(loss_report<FactorCForgotten>("head-tail", 3, bshd_batch(2, 13)), "");
}
TEST(LossHooks, count_summed_over_copies) {
  EXPECT_NE(loss_report<CountOverCopies>("magi", 2, bshd_batch(2, 13)), "");
}
TEST(LossHooks, count_from_one_rank) {
  EXPECT_NE(loss_report<CountFromOneRank>("thd", 2, docs_5_3_8()), "");
}
TEST(LossHooks, shift_across_a_document_boundary) {
  EXPECT_NE(loss_report<ShiftAcrossDocuments>("contiguous", 2, docs_5_3_8()), "");
}
TEST(LossHooks, last_ranks_early_chunk_target_from_the_wrong_neighbour) {
  EXPECT_NE(loss_report<WrongNeighbourForLastRank>("head-tail", 2, dense_batch(1, 16)), "");
}
TEST(LossHooks, valid_mask_ignored) {
  EXPECT_NE(loss_report<ValidMaskIgnored>("head-tail", 2, bshd_batch(1, 16)), "");
}
TEST(LossHooks, n_counts_tokens_whose_target_is_ignore) {
  EXPECT_NE(loss_report<CountsIgnoredTargets>("thd", 2, docs_5_3_8()), "");
}

}  // namespace
}  // namespace cplab::simtest
