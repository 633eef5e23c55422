// The loss check notices broken communication: a corrupted label exchange, a dropped rank and a
// contributing count summed twice are each reported, never passed. A late but complete exchange
// is not a failure.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "loss_check.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::simtest {
namespace {

using namespace std::chrono_literals;
using sim::Fault;

// One causal row of 16 tokens with a label everywhere, at C = 2.
Batch boundary_batch() { return dense_batch(1, 16); }

// A layout in which rank 1 holds a token whose target (the next slot) rank 0 holds, so that rank 0
// must send rank 1 that label: the first registered layout of that kind (the reference's plan of
// the boundary row at C = 2 says which).
const std::string& boundary_layout() {
  static const std::string layout = testsupport::first_layout(
      "one in which rank 0 sends rank 1 a label at C = 2", [](const sim::LayoutDescriptor& d) {
        if (d.cp_off || !d.bshd_rows) return false;
        ShardPlan plan;
        if (!error_of([&] {
               plan = reference::plan(spec_for(d.name, 2), boundary_batch());
             }).empty())
          return false;
        const RowPlan& row = plan.rows[0];
        const std::set<std::int64_t> on_rank0(row.index[0].begin(), row.index[0].end());
        for (std::int64_t g : row.index[1]) {
          if (on_rank0.count(g + 1) != 0 && g + 1 < row.caller_len) return true;
        }
        return false;
      });
  return layout;
}

TEST(FaultDetection, clean_run_passes_the_check) {
  EXPECT_EQ(check_loss_against_reference(spec_for(boundary_layout(), 2), boundary_batch()), "");
}

TEST(FaultDetection, corrupted_label_exchange_is_reported) {
  const Fault corrupt{.kind = Fault::Kind::corrupt,
                      .rank = 0,
                      .call = "send",
                      .occurrence = -1,
                      .delay = {},
                      .corrupt = {}};
  std::int64_t fired = 0;
  const std::string report =
      check_loss_against_reference(spec_for(boundary_layout(), 2), boundary_batch(), nullptr,
                                   {.timeout = 60s, .faults = {corrupt}}, &fired);
  EXPECT_GE(fired, 1) << "the fault never fired: the check proved nothing";
  EXPECT_NE(report.find("rank 1: loss"), std::string::npos) << report;
}

TEST(FaultDetection, dropped_rank_is_reported_by_name) {
  const Fault drop{.kind = Fault::Kind::drop,
                   .rank = 1,
                   .call = "all_reduce",
                   .occurrence = 0,
                   .delay = {},
                   .corrupt = {}};
  std::int64_t fired = 0;
  const std::string report = check_loss_against_reference(
      spec_for(testsupport::a_plain_layout(), 3), packed_batch({{5, 3, 8}}, 16), nullptr,
      {.timeout = 60s, .faults = {drop}}, &fired);
  EXPECT_EQ(fired, 1);
  EXPECT_NE(report.find("all_reduce #0: rank 1 "), std::string::npos) << report;
}

TEST(FaultDetection, dropped_label_message_is_a_deadlock_reported_at_once_with_its_sender) {
  // Rank 1 waits for the lost labels while rank 0 waits for rank 1 in the count's all-reduce:
  // nothing can ever arrive, which the comm knows at once. The timeout (a minute) plays no part.
  const Fault drop{.kind = Fault::Kind::drop,
                   .rank = 0,
                   .call = "send",
                   .occurrence = 0,
                   .delay = {},
                   .corrupt = {}};
  const auto start = std::chrono::steady_clock::now();
  const std::string report =
      check_loss_against_reference(spec_for(boundary_layout(), 2), boundary_batch(), nullptr,
                                   {.timeout = 60s, .faults = {drop}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 1 waits in recv from rank 0 tag 427"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 0 waits in all_reduce #0"), std::string::npos) << report;
  EXPECT_EQ(report.find("timed out"), std::string::npos) << report;
}

// The count summed twice: the group's sum is summed over the group again (C × N).
class CountSummedTwice : public sim::SimImplementation {
 protected:
  std::int64_t total_contributing(Comm& comm, std::int64_t local) const override {
    return SimImplementation::total_contributing(
        comm, SimImplementation::total_contributing(comm, local));
  }
};

TEST(FaultDetection, count_summed_twice_is_reported) {
  CountSummedTwice twice;
  const std::string report = check_loss_against_reference(
      spec_for(testsupport::a_plain_layout(), 4), bshd_batch(2, 13), &twice);
  EXPECT_NE(report.find("N "), std::string::npos) << report;
  EXPECT_NE(report.find("gradient differs"), std::string::npos) << report;
}

TEST(FaultDetection, late_but_complete_exchange_is_not_a_failure) {
  const Fault late{.kind = Fault::Kind::delay,
                   .rank = 0,
                   .call = "send",
                   .occurrence = -1,
                   .delay = 20ms,
                   .corrupt = {}};
  std::int64_t fired = 0;
  EXPECT_EQ(check_loss_against_reference(spec_for(boundary_layout(), 2), boundary_batch(), nullptr,
                                         {.timeout = 60s, .faults = {late}}, &fired),
            "");
  EXPECT_GE(fired, 1);
}

}  // namespace
}  // namespace cplab::simtest
