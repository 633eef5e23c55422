// A second opinion on the reference loss: libtorch's cross_entropy (ignore_index -100, mean) and
// its autograd gradient, on the HF-shifted targets of a packed batch, against
// reference::shifted_loss on the row as every registered layout that takes it plans it at C = 1.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <random>

#include "layouts/layout_descriptor.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"

namespace cplab {
namespace {

struct Case {
  std::int64_t S, V;
  std::vector<std::int64_t> docs;  // empty: a BSHD row
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "S=" << c.S << " V=" << c.V << " docs=" << c.docs.size();
}

class TorchCrossEntropy : public ::testing::TestWithParam<Case> {};

TEST_P(TorchCrossEntropy, ReferenceMeanAndGradientMatchTorch) {
  const Case c = GetParam();
  std::mt19937_64 rng(1234 + static_cast<std::uint64_t>(c.S * 31 + c.V));
  std::normal_distribution<float> normal(0.f, 2.f);
  std::uniform_int_distribution<std::int64_t> token(0, c.V - 1);
  std::vector<float> logits(static_cast<std::size_t>(c.S * c.V));
  for (float& x : logits) x = normal(rng);
  std::vector<std::int64_t> labels(static_cast<std::size_t>(c.S));
  std::vector<std::uint8_t> valid(static_cast<std::size_t>(c.S));
  for (std::int64_t t = 0; t < c.S; ++t) {
    labels[t] = t % 7 == 3 ? kIgnoreIndex : token(rng);
    valid[t] = t % 11 == 5 ? 0 : 1;
  }
  // Torch side: HF shift, plus -100 where the next token starts another document or the token is
  // masked out. The document test here reads the test's own document list, not the plan.
  std::vector<std::int64_t> doc_of(static_cast<std::size_t>(c.S), 0);
  std::int64_t start = 0, id = 1;
  for (std::int64_t n : c.docs) {
    for (std::int64_t t = start; t < start + n; ++t) doc_of[t] = id;
    start += n;
    ++id;
  }
  std::vector<std::int64_t> shifted(static_cast<std::size_t>(c.S - 1));
  for (std::int64_t t = 0; t + 1 < c.S; ++t) {
    const bool crosses = !c.docs.empty() && doc_of[t] != doc_of[t + 1];
    shifted[t] = (crosses || !valid[t] || (doc_of[t] == 0 && !c.docs.empty())) ? kIgnoreIndex
                                                                               : labels[t + 1];
  }
  at::Tensor z =
      at::from_blob(logits.data(), {c.S, c.V}, at::kFloat).clone().set_requires_grad(true);
  at::Tensor y = at::from_blob(shifted.data(), {c.S - 1}, at::kLong).clone();
  at::Tensor loss =
      at::cross_entropy_loss(z.slice(0, 0, c.S - 1), y, {}, at::Reduction::Mean, kIgnoreIndex);
  loss.backward();
  const std::int64_t counted = (y != kIgnoreIndex).sum().item<std::int64_t>();

  const at::Tensor grad = z.grad().contiguous();
  const float* g = grad.data_ptr<float>();

  // The reference on the same row as each layout that takes it sees it at C = 1: the caller's row
  // as it is (nothing padded, L = S), so every one of them must give libtorch's loss.
  int checked = 0;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    LayoutSpec spec;
    spec.layout = layout.name;
    if ((c.docs.empty() && !layout.bshd_rows) || sim::partitions(layout, spec)) continue;
    SCOPED_TRACE(layout.name);
    ++checked;
    const RowPlan row =
        c.docs.empty() ? reference::plan_row(spec, c.S) : reference::plan_row(spec, c.S, &c.docs);
    ASSERT_EQ(row.padded_len, c.S);
    ShardPlan plan{spec, {row}};
    const auto ref = reference::shifted_loss(plan, Tensor::from<float>({1, c.S, c.V}, logits),
                                             Tensor::from<std::int64_t>({1, c.S}, labels),
                                             Tensor::from<std::uint8_t>({1, c.S}, valid));
    ASSERT_EQ(ref.contributing_total, counted);
    EXPECT_NEAR(ref.global_mean, loss.item<double>(),
                1e-5 * std::max(1.0, std::abs(ref.global_mean)));
    const auto ref_grad = ref.grad_global.data<float>();
    double worst = 0;
    for (std::int64_t i = 0; i < c.S * c.V; ++i)
      worst = std::max(worst, std::abs(double(g[i]) - ref_grad[i]));
    EXPECT_LT(worst, 1e-6) << "largest gradient difference";
  }
  EXPECT_GT(checked, 0) << "no registered layout takes the row at C = 1";
}

INSTANTIATE_TEST_SUITE_P(Rows, TorchCrossEntropy,
                         ::testing::Values(Case{17, 5, {}}, Case{64, 33, {}},
                                           Case{20, 9, {5, 3, 8, 4}},
                                           Case{30, 2, {1, 0, 12, 1, 16}}, Case{48, 257, {48}}));

}  // namespace
}  // namespace cplab
