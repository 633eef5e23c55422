// Reference attention (SPEC §7) against a naive loop written here, forward and backward, and its
// backward against finite differences of its own forward.
#include "reference/attention.hpp"

#include <cmath>
#include <random>

#include "support.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

struct Qkv {
  Tensor q, k, v, grad_out;
};

Qkv random_qkv(std::int64_t rows, std::int64_t len, std::int64_t dim, unsigned seed) {
  std::mt19937 draw(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  Qkv x{Tensor(DType::f32, {rows, len, dim}), Tensor(DType::f32, {rows, len, dim}),
        Tensor(DType::f32, {rows, len, dim}), Tensor(DType::f32, {rows, len, dim})};
  for (Tensor* t : {&x.q, &x.k, &x.v, &x.grad_out}) {
    for (std::int64_t i = 0; i < t->numel(); ++i) t->set(i, value(draw));
  }
  return x;
}

// One query at a time, one key at a time.
reference::AttentionReference naive_attention(const ShardPlan& plan, const Qkv& x) {
  const std::int64_t rows = x.q.size(0), len = x.q.size(1), dim = x.q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  reference::AttentionReference out{
      Tensor(DType::f32, x.q.shape()), Tensor(DType::f32, x.q.shape()),
      Tensor(DType::f32, x.q.shape()), Tensor(DType::f32, x.q.shape())};
  auto at = [&](std::int64_t b, std::int64_t t, std::int64_t d) { return (b * len + t) * dim + d; };
  std::vector<double> dk(static_cast<std::size_t>(x.q.numel()), 0.0), dv(dk.size(), 0.0);
  for (std::int64_t b = 0; b < rows; ++b) {
    const RowPlan& row = plan.rows[b];
    for (std::int64_t i = 0; i < len; ++i) {
      std::vector<std::int64_t> keys;
      for (std::int64_t j = 0; j <= i; ++j) {
        if (row.real[i] && row.real[j] && row.doc_ids[i] == row.doc_ids[j]) keys.push_back(j);
      }
      if (keys.empty()) continue;
      std::vector<double> p;
      double norm = 0.0;
      for (std::int64_t j : keys) {
        double s = 0.0;
        for (std::int64_t d = 0; d < dim; ++d) s += x.q.get(at(b, i, d)) * x.k.get(at(b, j, d));
        p.push_back(std::exp(s * scale));
        norm += p.back();
      }
      double p_dot_dp = 0.0;
      std::vector<double> dp;
      for (std::size_t n = 0; n < keys.size(); ++n) {
        p[n] /= norm;
        double grad_p = 0.0;
        for (std::int64_t d = 0; d < dim; ++d) {
          out.out.set(at(b, i, d), out.out.get(at(b, i, d)) + p[n] * x.v.get(at(b, keys[n], d)));
          grad_p += x.grad_out.get(at(b, i, d)) * x.v.get(at(b, keys[n], d));
          dv[at(b, keys[n], d)] += p[n] * x.grad_out.get(at(b, i, d));
        }
        dp.push_back(grad_p);
        p_dot_dp += p[n] * grad_p;
      }
      for (std::size_t n = 0; n < keys.size(); ++n) {
        const double ds = p[n] * (dp[n] - p_dot_dp) * scale;
        for (std::int64_t d = 0; d < dim; ++d) {
          out.grad_q.set(at(b, i, d),
                         out.grad_q.get(at(b, i, d)) + ds * x.k.get(at(b, keys[n], d)));
          dk[at(b, keys[n], d)] += ds * x.q.get(at(b, i, d));
        }
      }
    }
  }
  for (std::size_t i = 0; i < dk.size(); ++i) {
    out.grad_k.set(static_cast<std::int64_t>(i), dk[i]);
    out.grad_v.set(static_cast<std::int64_t>(i), dv[i]);
  }
  return out;
}

void expect_close(const Tensor& got, const Tensor& want, const char* what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (std::int64_t i = 0; i < got.numel(); ++i)
    EXPECT_NEAR(got.get(i), want.get(i), 1e-5) << what << "[" << i << "]";
}

// Every layout at C = 3, on the rows nearest to these that it takes (as the caller pads them for
// it, or fitted to the lengths it takes): two BSHD rows of 11; a packed row with a caller-padded
// and an empty document; a packed row of two documents and row padding after them.
std::vector<std::pair<std::string, Batch>> attention_cases() {
  std::vector<std::pair<std::string, Batch>> cases;
  for (const auto& [layout, cp] : testsupport::layouts_at({3})) {
    const LayoutSpec spec = make_spec(layout, cp);
    if (testsupport::takes_rows(layout, false)) {
      cases.emplace_back(layout,
                         bshd_batch(2, sim::nearest_accepted(spec, sim::bshd_row(11)).seq_len));
    }
    if (testsupport::takes_rows(layout, true)) {
      sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row({6, 1, 3, 2}, 13));
      cases.emplace_back(layout, packed_batch({{5, 0, 3, 2}}, row.seq_len, {row.documents}));
      row = sim::nearest_accepted(spec, sim::packed_row({4, 4}, 9));
      cases.emplace_back(layout, packed_batch({{4, 4}}, row.seq_len, {row.documents}));
    }
  }
  return cases;
}

TEST(Attention, MatchesNaiveLoops) {
  for (const auto& [layout, batch] : attention_cases()) {
    SCOPED_TRACE(::testing::Message() << layout << " S=" << batch.seq_len());
    const ShardPlan plan = reference::plan(make_spec(layout, 3), batch);
    const Qkv x = random_qkv(batch.rows(), plan.rows[0].padded_len, 4, 17);
    const auto got = reference::attention(plan, x.q, x.k, x.v, x.grad_out);
    const auto want = naive_attention(plan, x);
    expect_close(got.out, want.out, "out");
    expect_close(got.grad_q, want.grad_q, "grad_q");
    expect_close(got.grad_k, want.grad_k, "grad_k");
    expect_close(got.grad_v, want.grad_v, "grad_v");
    // Pad queries see nothing: output 0, no gradient to their query.
    for (std::int64_t g = 0; g < plan.rows[0].padded_len; ++g) {
      if (plan.rows[0].real[g]) continue;
      for (std::int64_t d = 0; d < 4; ++d) {
        EXPECT_EQ(got.out.get(g * 4 + d), 0.0);
        EXPECT_EQ(got.grad_q.get(g * 4 + d), 0.0);
        EXPECT_EQ(got.grad_k.get(g * 4 + d), 0.0);
      }
    }
  }
}

// The backward and the refusals, whatever the layout: a plain one, its L from its plan.
TEST(Attention, BackwardMatchesFiniteDifferences) {
  const Batch batch = packed_batch({{3, 4}}, 8);
  const ShardPlan plan = reference::plan(make_spec(testsupport::a_plain_layout(), 2), batch);
  const Qkv x = random_qkv(1, plan.rows[0].padded_len, 3, 23);
  const auto base = reference::attention(plan, x.q, x.k, x.v, x.grad_out);
  // The scalar whose gradient the backward returns: Σ grad_out · out.
  auto objective = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    const Tensor out = reference::attention(plan, q, k, v, x.grad_out).out;
    double total = 0.0;
    for (std::int64_t i = 0; i < out.numel(); ++i) total += out.get(i) * x.grad_out.get(i);
    return total;
  };
  const double h = 1e-2;
  for (int which = 0; which < 3; ++which) {
    const Tensor& grad = which == 0 ? base.grad_q : which == 1 ? base.grad_k : base.grad_v;
    for (std::int64_t i = 0; i < x.q.numel(); ++i) {
      Qkv up = x, down = x;
      Tensor* up_t = which == 0 ? &up.q : which == 1 ? &up.k : &up.v;
      Tensor* down_t = which == 0 ? &down.q : which == 1 ? &down.k : &down.v;
      up_t->set(i, up_t->get(i) + h);
      down_t->set(i, down_t->get(i) - h);
      const double numeric =
          (objective(up.q, up.k, up.v) - objective(down.q, down.k, down.v)) / (2 * h);
      EXPECT_NEAR(numeric, grad.get(i), 2e-4) << "input " << which << " element " << i;
    }
  }
}

TEST(Attention, RefusesMismatchedInputs) {
  const ShardPlan plan =
      reference::plan(make_spec(testsupport::a_plain_layout(), 2), bshd_batch(1, 8));
  const std::int64_t len = plan.rows[0].padded_len;
  const Qkv x = random_qkv(1, len, 3, 1);
  const std::string shape = "f32[1, " + std::to_string(len) + ", 2]";
  EXPECT_ERROR(reference::attention(plan, x.q, Tensor(DType::f32, {1, len, 2}), x.v, x.grad_out),
               "k", shape.c_str());
  EXPECT_ERROR(reference::attention(plan, x.q.to(DType::bf16), x.k, x.v, x.grad_out), "q", "bf16");
}

}  // namespace
}  // namespace cplab::testing
