// Bugs planted in every layout shrink to a minimal case: once shrunk, removing any document or
// token (a document, one token of one, one slot of a document's or the row's padding, one BSHD
// token, one row, one microbatch) or taking any smaller C makes the failure go away. The
// reductions are listed here on their own, not taken from the generators' domain shrinks.
#include <gtest/gtest.h>

#include "properties/case.hpp"
#include "properties/case_data.hpp"
#include "properties/mutant_hunt.hpp"
#include "properties/runner.hpp"
#include "sim/sim_implementation.hpp"
#include "tests/properties/test_seed.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::properties {
namespace {

// A rank that counts three or more contributing tokens adds one to the group's N, from C =
// min_cp up: whether a case shows it depends on which rank holds which token, so on the layout.
class CountsThreeAsFour final : public sim::SimImplementation {
 public:
  explicit CountsThreeAsFour(std::int64_t min_cp) : min_cp_(min_cp) {}
  std::string name() const override { return "counts_three_as_four"; }

 protected:
  std::int64_t total_contributing(Comm& comm, std::int64_t local) const override {
    const std::int64_t total = SimImplementation::total_contributing(comm, local);
    return comm.size() >= min_cp_ && local >= 3 ? total + 1 : total;
  }

 private:
  std::int64_t min_cp_;
};

// Every case one document or token smaller than c (or with a smaller C), each valid.
std::vector<std::pair<std::string, Case>> reductions(const Case& c) {
  std::vector<std::pair<std::string, Case>> out;
  const auto add = [&](std::string what, Case s) {
    try {
      validate_case(s);
    } catch (const Error&) {
      return;
    }
    // Nor is a length the layout refuses (the acceptance contract).
    if (sim::nearest_accepted_len(s.spec, s.seq_len) != s.seq_len) return;
    out.emplace_back(std::move(what), std::move(s));
  };
  if (c.spec.microbatches > 1) {
    Case s = c;
    s.spec.microbatches -= 1;
    s.rows -= c.rows_per_microbatch();
    if (s.packed()) s.docs.pop_back();
    add("one microbatch fewer", s);
  }
  if (!c.packed()) {
    if (c.rows > c.spec.microbatches) {
      Case s = c;
      s.rows -= c.spec.microbatches;
      add("one row fewer per microbatch", s);
    }
    if (c.seq_len > 1) {
      Case s = c;
      s.seq_len -= 1;
      s.left_pad = std::min(s.left_pad, s.seq_len);
      add("one token fewer per row", s);
    }
  }
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size(); ++i) {
      const std::string doc = "row " + std::to_string(b) + " document " + std::to_string(i);
      if (c.docs[b].size() > 1) {
        Case s = c;
        s.docs[b].erase(s.docs[b].begin() + static_cast<std::ptrdiff_t>(i));
        add(doc + " removed", s);
      }
      if (c.docs[b][i].real > 0) {
        Case s = c;
        s.docs[b][i].real -= 1;
        add(doc + " one token shorter", s);
      }
      if (c.docs[b][i].extra > 0) {
        Case s = c;
        s.docs[b][i].extra -= 1;
        add(doc + " one padding slot fewer", s);
      }
    }
  }
  if (c.packed()) {
    Case s = c;
    s.seq_len -= 1;
    add("one slot of row padding fewer", s);
  }
  for (std::int64_t cp = 1; cp < c.spec.cp; ++cp) {
    Case s = c;
    s.spec.cp = cp;
    add("C=" + std::to_string(cp), s);
  }
  return out;
}

void expect_minimal(const PropertyInfo& property, const JobResult& result,
                    Implementation& planted) {
  ASSERT_EQ(result.status, JobStatus::failed)
      << "the planted bug survived " << result.cases << " cases";
  const Case c = parse_case(result.counterexample);
  EXPECT_FALSE(run_case(property, c, planted).failure.empty()) << result.counterexample;
  for (const auto& [what, smaller] : reductions(c)) {
    // A row the layout refuses (the acceptance contract) is no smaller case of it.
    if (!sim::accepts(smaller.spec, make_batch(smaller))) continue;
    EXPECT_TRUE(run_case(property, smaller, planted).failure.empty())
        << result.counterexample << "\n  still fails with " << what << ": " << print_case(smaller);
  }
}

RunOptions options_for(const JobSpec& job) {
  RunOptions options;
  options.cases = test_cases(300);
  options.seed = job_seed(test_seed(), job);
  return options;
}

TEST(Shrinking, APlantedCountBugShrinksToAMinimalCaseInEveryLayout) {
  const PropertyInfo& property = find_property("rank_losses_average_to_global_shifted_loss");
  for (const LayoutEntry& entry : layout_table()) {
    SCOPED_TRACE(entry.name);
    // At C = 1 for a layout that is never sharded, else from C = 2: the smallest C is that one.
    const std::int64_t min_cp = entry.descriptor->cp_off ? 1 : 2;
    const ImplementationInfo planted{
        .name = "counts_three_as_four",
        .summary = "a rank counting three or more tokens adds one to N",
        .make = [min_cp] { return std::make_unique<CountsThreeAsFour>(min_cp); }};
    const JobSpec job{&property, &entry, &planted};
    const JobResult result = run_job(job, options_for(job));
    CountsThreeAsFour bug(min_cp);
    expect_minimal(property, result, bug);
    if (result.status == JobStatus::failed) {
      EXPECT_EQ(parse_case(result.counterexample).spec.cp, min_cp) << result.counterexample;
      EXPECT_GT(result.shrinks, 0);
    }
  }
}

TEST(Shrinking, APackedRowBugNeedingThreeDocumentsShrinksToThreeDocuments) {
  const PropertyInfo& property = find_property("rank_losses_average_to_global_shifted_loss");
  const ImplementationInfo& mutant = find_implementation("only_first_document_boundary");
  for (const LayoutEntry& entry : layout_table()) {
    SCOPED_TRACE(entry.name);
    const JobSpec job{&property, &entry, &mutant};
    const JobResult result = run_job(job, options_for(job));
    const auto bug = mutant.make();
    expect_minimal(property, result, *bug);
    if (result.status != JobStatus::failed) continue;
    // One packed row of exactly three documents: the third's first label is the wrong target.
    const Case c = parse_case(result.counterexample);
    ASSERT_EQ(c.docs.size(), 1u) << result.counterexample;
    EXPECT_EQ(c.docs[0].size(), 3u) << result.counterexample;
    EXPECT_EQ(c.spec.cp, 1) << result.counterexample;
  }
}

}  // namespace
}  // namespace cplab::properties
