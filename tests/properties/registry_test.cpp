// The three tables the sweep iterates: layouts (one entry per reference layout; each layout's
// closed form against SPEC §9's examples is in its own file, layouts/ID_test.cpp),
// implementations (sim, the gpu entries, at least 20 mutants) and properties.
#include <gtest/gtest.h>

#include <set>

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
                                  "mtp_rank_losses_average_to_global_depth_k_loss",
                                  "shifted_shards_are_the_global_shift",
                              }));
  for (const PropertyInfo& p : property_table()) EXPECT_FALSE(p.invariant.empty()) << p.name;
  EXPECT_THROW(find_property("gather_is_fast"), Error);
}

}  // namespace
}  // namespace cplab::properties
