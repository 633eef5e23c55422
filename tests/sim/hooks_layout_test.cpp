// Every partition, shard and gather hook of SimImplementation is live: a variant that overrides
// only that hook with a bug that has shipped in real CP code is caught by a check against the
// reference, on every layout that takes the batch (or every one of the kind the bug shows on). A
// hook only one layout's map shows a bug through is tested in that layout's own file
// (layouts/ID_test.cpp). (The mutants proper live with the properties; these prove their hooks
// take effect.)
#include <gtest/gtest.h>

#include <numeric>

#include "checks.hpp"
#include "hooks_fixtures.hpp"

namespace cplab::simtest {
namespace {

using sim::SimImplementation;

class PositionsAfterPartition : public SimImplementation {
 protected:
  Ints local_positions(const sim::StreamSlots&, const Ints& index) const override {
    Ints positions(index.size());
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
    return positions;
  }
};

class PadLabelsZero : public SimImplementation {
 protected:
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return key == keys::labels ? 0.0 : SimImplementation::pad_value(key, field, layout);
  }
};

class GatherWithoutReorder : public SimImplementation {
 protected:
  Tensor reorder_to_global(const Tensor& rank_ordered, std::int64_t,
                           const std::vector<Ints>&) const override {
    return rank_ordered;
  }
};

class GatherBackwardKeepsLocal : public SimImplementation {
 protected:
  Tensor reduce_token_gradient(Comm& comm, const Tensor& blocks) const override {
    return rows_slice(blocks, comm.rank(), comm.rank() + 1).reshaped({blocks.size(1)});
  }
};

class GatherTokensBackwardWithoutSum : public SimImplementation {
 protected:
  Tensor reduce_gathered_gradient(Comm& comm, const Tensor& grad) const override {
    const std::int64_t slice = grad.size(0) / comm.size();
    return rows_slice(grad, comm.rank() * slice, (comm.rank() + 1) * slice);
  }
};

// Whether the reference's plan of `batch` at `spec` holds slot order other than rank order: some
// rank's map, concatenated in rank order, is not the slots 0, 1, 2, ... (a gather that skips the
// reorder puts those tokens in the wrong places).
bool rank_order_is_not_slot_order(const LayoutSpec& spec, const Batch& batch) {
  const ShardPlan plan = reference::plan(spec, batch);
  for (const RowPlan& row : plan.rows) {
    std::int64_t next = 0;
    for (const Ints& index : row.index) {
      for (std::int64_t g : index) {
        if (g != next++) return true;
      }
    }
  }
  return false;
}

// Whether the reference's plan pads some row of `batch` at `spec` (L > S): a pad slot some rank
// holds, whose label must be IGNORE.
bool pads_a_row(const LayoutSpec& spec, const Batch& batch) {
  const ShardPlan plan = reference::plan(spec, batch);
  for (const RowPlan& row : plan.rows) {
    if (row.padded_len > row.caller_len) return true;
  }
  return false;
}

// The layouts that take `batch` at C = cp and, where `kind` is given, are of that kind; at least
// one, so that the check is never vacuous.
std::vector<std::string> layouts_for(std::int64_t cp, const Batch& batch, const char* kind = "",
                                     bool (*of_kind)(const LayoutSpec&, const Batch&) = nullptr) {
  std::vector<std::string> out;
  for (const std::string& layout : layouts_taking(cp, batch)) {
    if (of_kind == nullptr || of_kind(spec_for(layout, cp), batch)) out.push_back(layout);
  }
  EXPECT_FALSE(out.empty()) << "no layout takes the batch at C=" << cp << " " << kind;
  return out;
}

TEST(LayoutHooks, standard_sim_passes_the_checks_these_variants_fail) {
  SimImplementation sim;
  for (const std::string& layout : layouts_for(2, docs_5_3_8()))
    EXPECT_EQ(check_shard_against_reference(spec_for(layout, 2), docs_5_3_8(), sim), "") << layout;
  for (const std::string& layout : layouts_for(3, bshd_batch(2, 13)))
    EXPECT_EQ(check_shard_against_reference(spec_for(layout, 3), bshd_batch(2, 13), sim), "")
        << layout;
  for (const std::string& layout : layouts_for(4, bshd_batch(2, 13)))
    EXPECT_EQ(check_gathers_against_reference(spec_for(layout, 4), bshd_batch(2, 13), sim), "")
        << layout;
}

TEST(LayoutHooks, positions_computed_after_partitioning) {
  PositionsAfterPartition variant;
  for (const std::string& layout : layouts_for(2, docs_5_3_8())) {
    EXPECT_NE(check_shard_against_reference(spec_for(layout, 2), docs_5_3_8(), variant)
                  .find("position_ids"),
              std::string::npos)
        << layout;
  }
}

TEST(LayoutHooks, pad_labels_zero_instead_of_ignore) {
  PadLabelsZero variant;
  const Batch batch = bshd_batch(2, 13);
  for (const std::string& layout : layouts_for(2, batch, "that pads the row", pads_a_row)) {
    EXPECT_NE(check_shard_against_reference(spec_for(layout, 2), batch, variant).find("labels"),
              std::string::npos)
        << layout;
  }
}

TEST(LayoutHooks, gather_without_the_reorder) {
  GatherWithoutReorder variant;
  const Batch batch = bshd_batch(1, 8);
  for (const std::string& layout :
       layouts_for(2, batch, "whose ranks hold slots out of order", rank_order_is_not_slot_order)) {
    EXPECT_NE(check_gathers_against_reference(spec_for(layout, 2), batch, variant)
                  .find("gather_token_tensor"),
              std::string::npos)
        << layout;
  }
}

TEST(LayoutHooks, gather_backward_keeps_only_the_local_contribution) {
  GatherBackwardKeepsLocal variant;
  for (const std::string& layout : layouts_for(3, bshd_batch(1, 12))) {
    EXPECT_NE(check_gathers_against_reference(spec_for(layout, 3), bshd_batch(1, 12), variant)
                  .find("gather_token_tensor_backward"),
              std::string::npos)
        << layout;
  }
}

TEST(LayoutHooks, gather_tokens_backward_without_the_sum) {
  GatherTokensBackwardWithoutSum variant;
  for (const std::string& layout : layouts_for(3, bshd_batch(1, 12))) {
    EXPECT_NE(check_gathers_against_reference(spec_for(layout, 3), bshd_batch(1, 12), variant)
                  .find("gather_tokens_backward"),
              std::string::npos)
        << layout;
  }
}

}  // namespace
}  // namespace cplab::simtest
