// `cplab check --gathered`'s engine (check_gathered): a gather that gives the batch back is clean,
// NaN values included, and a swapped pair is two wrong slots, each naming the token it holds.
#include <gtest/gtest.h>

#include <limits>

#include "check/shard_check.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::check {
namespace {

constexpr std::int64_t kSeq = 8, kHidden = 2;

Batch embeds_batch() {
  Tensor embeds(DType::f32, {1, kSeq, kHidden});
  for (std::int64_t i = 0; i < embeds.numel(); ++i) embeds.set(i, static_cast<double>(i));
  embeds.set(3 * kHidden + 1, std::numeric_limits<double>::quiet_NaN());  // token 3
  Batch batch;
  batch.add(keys::inputs_embeds, std::move(embeds));
  return batch;
}

// The trimmed gather of `batch` under a plain layout at C = 2 (the gather undoes any layout).
Outcome gathered(const Batch& batch, const Tensor& output) {
  Outcome outcome;
  outcome.spec.layout = testsupport::a_plain_layout();
  outcome.spec.cp = 2;
  check_gathered(batch, io::TensorFile{.tensors = {{keys::inputs_embeds, output}}, .skipped = {}},
                 outcome);
  return outcome;
}

TEST(GatheredCheck, TheBatchGivenBackIsCleanNaNIncluded) {
  const Batch batch = embeds_batch();
  const Outcome outcome = gathered(batch, batch.at(keys::inputs_embeds));
  EXPECT_TRUE(outcome.diffs.empty()) << outcome.diffs.front().text;
  EXPECT_EQ(outcome.score, 0);
}

TEST(GatheredCheck, ASwappedPairIsTwoSlotsEachNamingTheTokenItHolds) {
  const Batch batch = embeds_batch();
  Tensor output = batch.at(keys::inputs_embeds);
  for (std::int64_t e = 0; e < kHidden; ++e) {  // tokens 5 and 6 change places
    const double five = output.get(5 * kHidden + e);
    output.set(5 * kHidden + e, output.get(6 * kHidden + e));
    output.set(6 * kHidden + e, five);
  }
  const Outcome outcome = gathered(batch, output);
  EXPECT_EQ(outcome.score, 2);
  ASSERT_FALSE(outcome.diffs.empty());
  std::vector<std::int64_t> should, holds;
  for (const Difference& d : outcome.diffs) {
    should.insert(should.end(), d.should.begin(), d.should.end());
    holds.insert(holds.end(), d.holds.begin(), d.holds.end());
  }
  EXPECT_EQ(should, (std::vector<std::int64_t>{5, 6}));
  EXPECT_EQ(holds, (std::vector<std::int64_t>{6, 5}));
}

}  // namespace
}  // namespace cplab::check
