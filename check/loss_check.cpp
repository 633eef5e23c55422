#include "check/loss_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace cplab::check {

LossExpectation::LossExpectation(const ShardPlan& plan, const std::vector<Tensor>& depth_logits,
                                 const Tensor& labels, const Tensor& valid) {
  CPLAB_CHECK(!depth_logits.empty(), "a loss expectation needs the logits of one depth at least");
  for (const Tensor& logits : depth_logits) add_depth(plan, logits, labels, valid);
}

void LossExpectation::add_depth(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                                const Tensor& valid) {
  depths_.push_back(reference::shifted_loss_caller(plan, logits, labels, valid, depths() + 1));
}

void LossExpectation::release_gradient(std::int64_t depth) {
  CPLAB_CHECK(depth >= 1 && depth <= depths(), "depth {} is not in [1, {}]", depth, depths());
  depths_[static_cast<std::size_t>(depth - 1)].grad_global = Tensor{};
}

std::int64_t LossExpectation::cp() const {
  CPLAB_CHECK(!depths_.empty(), "a loss expectation with no depth has no CP size");
  return static_cast<std::int64_t>(depths_.front().rank_loss.size());
}

const reference::LossReference& LossExpectation::at(std::int64_t depth) const {
  CPLAB_CHECK(depth >= 1 && depth <= depths(), "depth {} is not in [1, {}]", depth, depths());
  return depths_[static_cast<std::size_t>(depth - 1)];
}

std::vector<double> LossExpectation::global_means() const {
  std::vector<double> means;
  for (const reference::LossReference& d : depths_) means.push_back(d.global_mean);
  return means;
}

reference::MtpCombination LossExpectation::global_total(double scaling_factor) const {
  return reference::combine_depths(global_means(), scaling_factor);
}

double LossExpectation::depth_weight(std::int64_t depth, double scaling_factor) const {
  return depth == 1 ? 1.0 : global_total(scaling_factor).weight;
}

double LossExpectation::rank_total(std::int64_t rank, double scaling_factor) const {
  double total = 0.0;
  for (std::int64_t k = 1; k <= depths(); ++k)
    total += depth_weight(k, scaling_factor) * at(k).rank_loss.at(static_cast<std::size_t>(rank));
  return total;
}

GradDifference LossExpectation::grad_difference(const ShardPlan& plan, std::int64_t rank,
                                                std::int64_t depth, std::span<const float> grad,
                                                double weight, double tolerance) const {
  const reference::LossReference& expected = at(depth);
  CPLAB_CHECK(expected.grad_global.defined(), "depth {}'s reference gradient was released", depth);
  const auto global = expected.grad_global.data<float>();
  const std::int64_t rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows[0].padded_len, local = plan.rows[0].local_len();
  const std::int64_t vocab = expected.grad_global.size(2);
  CPLAB_CHECK(static_cast<std::int64_t>(grad.size()) == rows * local * vocab,
              "rank {}'s gradient has {} elements; its logits shard [B={}, l={}, V={}] has {}",
              rank, grad.size(), rows, local, vocab, rows * local * vocab);
  const double scale = weight * static_cast<double>(cp());
  GradDifference out;
  for (std::int64_t b = 0; b < rows; ++b) {
    const std::vector<std::int64_t>& index =
        plan.rows[static_cast<std::size_t>(b)].index.at(static_cast<std::size_t>(rank));
    for (std::int64_t k = 0; k < local; ++k) {
      const std::int64_t g = index[static_cast<std::size_t>(k)];
      for (std::int64_t v = 0; v < vocab; ++v) {
        const double want = scale * global[(b * len + g) * vocab + v];
        const double got = grad[static_cast<std::size_t>((b * local + k) * vocab + v)];
        // NaN-aware: a non-finite gradient is an infinite error, never a match.
        const double error =
            std::isfinite(got) ? std::abs(got - want) : std::numeric_limits<double>::infinity();
        out.max_abs_error = std::max(out.max_abs_error, error);
        if (!out.first && !(error <= tolerance)) out.first = GradMismatch{b, k, g, v, got, want};
      }
    }
  }
  return out;
}

bool loss_matches(double got, double want, double tolerance) {
  return std::abs(got - want) <= tolerance * std::max(1.0, std::abs(want));
}

}  // namespace cplab::check
