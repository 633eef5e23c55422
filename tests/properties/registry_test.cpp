// The three tables the sweep iterates: layouts (one entry per reference layout, closed forms that
// agree with SPEC §9), implementations (sim, the gpu entries, at least 20 mutants) and properties.
#include <gtest/gtest.h>

#include <set>

#include "layouts/magi.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/layout_table.hpp"
#include "properties/property.hpp"
#include "properties/sweep.hpp"
#include "reference/plan.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties {
namespace {

TEST(LayoutTable, HasOneEntryPerReferenceLayout) {
  EXPECT_EQ(layout_table_names(), reference::layout_names());
  for (const LayoutEntry& entry : layout_table()) {
    EXPECT_EQ(entry.reference, &reference::layout_info(entry.name));
    EXPECT_EQ(entry.descriptor, &sim::layout_descriptor(entry.name));
  }
  EXPECT_THROW(layout_entry("no-such-layout"), Error);
}

// The closed form against the index maps SPEC §9 writes out.
void expect_maps(const std::string& layout, std::int64_t cp, std::int64_t seq_len,
                 const std::vector<std::int64_t>* docs,
                 const std::vector<std::vector<std::int64_t>>& expected,
                 std::int64_t chunk_size = 512) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::magi_chunk_size.set(spec, chunk_size);
  const RowPlan row = reference::plan_row(spec, seq_len, docs);
  ASSERT_EQ(row.index.size(), expected.size());
  const sim::LayoutMap map = reference_map(layout_entry(layout), row);
  for (std::size_t r = 0; r < expected.size(); ++r) {
    EXPECT_EQ(row.index[r], expected[r]) << layout << " rank " << r;
    for (std::size_t k = 0; k < expected[r].size(); ++k) {
      EXPECT_EQ(map.global_index(static_cast<std::int64_t>(r), static_cast<std::int64_t>(k)),
                expected[r][k]);
      const index_math::Slot owner = map.owner(expected[r][k]);
      EXPECT_EQ(owner.rank, static_cast<std::int64_t>(r));
      EXPECT_EQ(owner.offset, static_cast<std::int64_t>(k));
    }
  }
}

TEST(LayoutTable, ClosedFormsGiveSpecExamples) {
  expect_maps("head-tail", 4, 16, nullptr,
              {{0, 1, 14, 15}, {2, 3, 12, 13}, {4, 5, 10, 11}, {6, 7, 8, 9}});
  const std::vector<std::int64_t> ex3 = {5, 3, 8}, ex4 = {4, 12}, ex5 = {32};
  expect_maps("thd", 2, 16, &ex3,
              {{0, 1, 6, 7, 8, 11, 12, 13, 18, 19}, {2, 3, 4, 5, 9, 10, 14, 15, 16, 17}});
  expect_maps("thd", 2, 16, &ex4, {{0, 3, 4, 5, 6, 13, 14, 15}, {1, 2, 7, 8, 9, 10, 11, 12}});
  expect_maps("magi", 4, 32, &ex5,
              {{0, 1, 2, 3, 28, 29, 30, 31},
               {4, 5, 6, 7, 24, 25, 26, 27},
               {8, 9, 10, 11, 20, 21, 22, 23},
               {12, 13, 14, 15, 16, 17, 18, 19}},
              4);
}

TEST(LayoutTable, ClosedFormRefusesParametersItCannotIndex) {
  const MapParams bad{.table = {0, 3, 8}, .unit = 0};  // 3 is not a multiple of 2C; no K
  EXPECT_THROW(sim::LayoutMap(*layout_entry("thd").descriptor, 2, 8, bad), Error);
  EXPECT_THROW(sim::LayoutMap(*layout_entry("magi").descriptor, 2, 8, bad), Error);
}

TEST(ImplementationRegistry, HoldsSimGpuAndAtLeastTwentyMutants) {
  EXPECT_TRUE(unavailable_reason(find_implementation("sim")).empty());
  EXPECT_NO_THROW(find_implementation("gpu"));
  const std::vector<std::string> mutants = implementation_names(true);
  EXPECT_GE(mutants.size(), 20u);
  std::set<std::string> names;
  for (const ImplementationInfo& info : implementation_registry()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.summary.empty()) << info.name;
    EXPECT_EQ(info.make()->name(), info.name);
    if (info.mutant) {
      EXPECT_FALSE(info.in_default_sweep) << info.name;
    }
  }
  EXPECT_THROW(find_implementation("cuda"), Error);
}

TEST(ImplementationRegistry, AnUnavailableImplementationIsSkippedNeverPassed) {
  for (const ImplementationInfo& info : implementation_registry()) {
    const std::string why = unavailable_reason(info);
    if (why.empty()) continue;
    const JobSpec job{&property_table().front(), &layout_table().front(), &info};
    RunOptions options;
    options.cases = 3;
    const JobResult result = run_job(job, options);
    EXPECT_EQ(result.status, JobStatus::skipped) << info.name;
    EXPECT_EQ(result.message, why);
    EXPECT_EQ(result.passed, 0);
    EXPECT_EQ(result.cases, 0);
  }
}

// "X-mpi" runs X's rank-local code in MPI processes: it runs CP attention exactly where X does
// (otherwise its attention properties would be skipped for a reason that is not true).
TEST(ImplementationRegistry, ProcessVariantsRunCpAttentionWhereTheirImplementationDoes) {
  int variants = 0;
  for (const ImplementationInfo& info : implementation_registry()) {
    const std::string suffix = "-mpi";
    if (info.name.size() <= suffix.size() ||
        info.name.compare(info.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string base = info.name.substr(0, info.name.size() - suffix.size());
    const auto variant = info.make();
    const auto inner = find_implementation(base).make();
    for (sim::AttentionAlgo algo : sim::all_algos())
      EXPECT_EQ(variant->cp_attention_unsupported(algo), inner->cp_attention_unsupported(algo))
          << info.name << " " << sim::algo_name(algo);
    ++variants;
  }
  EXPECT_GT(variants, 0);
}

// An implementation without the Ulysses all-to-all (as gpu) has those properties' jobs skipped
// with its reason, and still runs the others.
class WithoutUlysses final : public sim::SimImplementation {
  std::string ulysses_unsupported() const override { return "no Ulysses all-to-all here"; }
};

TEST(ImplementationRegistry, AMissingVerbSkipsItsPropertiesWithTheReason) {
  const ImplementationInfo info{.name = "without-ulysses",
                                .summary = "sim without the Ulysses verb",
                                .make = [] { return std::make_unique<WithoutUlysses>(); }};
  RunOptions options;
  options.cases = 3;
  for (const char* name :
       {"ulysses_all_to_all_splits_heads", "ulysses_attention_matches_unsharded"}) {
    const JobResult result =
        run_job({&find_property(name), &layout_table().front(), &info}, options);
    EXPECT_EQ(result.status, JobStatus::skipped) << name;
    EXPECT_EQ(result.message, "no Ulysses all-to-all here");
    EXPECT_EQ(result.cases, 0);
  }
  const JobResult other =
      run_job({&property_table().front(), &layout_table().front(), &info}, options);
  EXPECT_EQ(other.status, JobStatus::passed);
}

class WithoutCpAttention final : public sim::SimImplementation {
  std::string cp_attention_unsupported(sim::AttentionAlgo /*algo*/) const override {
    return "no CP attention by schedule here";
  }
};

TEST(ImplementationRegistry, AnImplementationWithoutCpAttentionSkipsItsProperties) {
  const ImplementationInfo info{.name = "without-cp-attention",
                                .summary = "sim without CP attention by schedule",
                                .make = [] { return std::make_unique<WithoutCpAttention>(); }};
  RunOptions options;
  options.cases = 3;
  for (const char* name : {"cp_attention_matches_unsharded", "lse_merge_is_stable"}) {
    const JobResult result =
        run_job({&find_property(name), &layout_table().front(), &info}, options);
    EXPECT_EQ(result.status, JobStatus::skipped) << name;
    EXPECT_EQ(result.message, "no CP attention by schedule here");
    EXPECT_EQ(result.cases, 0);
  }
}

TEST(PropertyTable, ListsThePropertiesByTheirInvariants) {
  EXPECT_EQ(property_names(), (std::vector<std::string>{
                                  "index_maps_are_a_closed_form_permutation",
                                  "shard_then_gather_is_identity",
                                  "token_data_travels_with_its_token",
                                  "local_documents_match_cu_seqlens",
                                  "rank_losses_average_to_global_shifted_loss",
                                  "gather_backward_sums_to_owner",
                                  "attention_matches_unsharded",
                                  "causal_work_is_balanced",
                                  "microbatches_are_independent_and_repeatable",
                                  "ulysses_all_to_all_splits_heads",
                                  "ulysses_attention_matches_unsharded",
                                  "ring_schedule_covers_mask_once",
                                  "attention_critical_path_is_balanced",
                                  "cp_attention_matches_unsharded",
                                  "lse_merge_is_stable",
                              }));
  for (const PropertyInfo& p : property_table()) EXPECT_FALSE(p.invariant.empty()) << p.name;
  EXPECT_THROW(find_property("gather_is_fast"), Error);
}

}  // namespace
}  // namespace cplab::properties
