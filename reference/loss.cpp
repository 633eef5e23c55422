// The shifted cross-boundary loss of SPEC §6 on the unsharded padded stream: targets from the
// global neighbour (never a local shift), one global count N, and each rank's share of the mean.
#include "reference/loss.hpp"

#include <Eigen/Core>
#include <cmath>

#include "core/batch.hpp"
#include "reference/plan_lengths.hpp"
#include "reference/verbs.hpp"

namespace cplab::reference {
namespace {

void check_loss_inputs(const PlanLengths& lengths, const Tensor& logits, const Tensor& labels,
                       const Tensor& valid, std::int64_t seq, const char* seq_name) {
  CPLAB_CHECK(logits.dim() == 3 && logits.size(0) == lengths.rows && logits.size(1) == seq,
              "logits {} must be [B, {}, V] = [{}, {}, V]", tensor_brief(logits), seq_name,
              lengths.rows, seq);
  CPLAB_CHECK(
      logits.dtype() == DType::f32 || logits.dtype() == DType::bf16 || logits.dtype() == DType::f16,
      "logits {} must be f32, bf16 or f16", tensor_brief(logits));
  const Shape rows_by_seq{lengths.rows, seq};
  CPLAB_CHECK(labels.shape() == rows_by_seq, "labels {} must be [B, {}] = {}", tensor_brief(labels),
              seq_name, shape_str(rows_by_seq));
  CPLAB_CHECK(valid.shape() == rows_by_seq, "valid {} must be [B, {}] = {}", tensor_brief(valid),
              seq_name, shape_str(rows_by_seq));
}

std::int64_t target_of(const RowPlan& row, const Tensor& labels, std::int64_t b, std::int64_t g,
                       std::int64_t depth) {
  const std::int64_t slot = target_slot(row, g, depth);
  return slot < 0 ? -1 : static_cast<std::int64_t>(labels.get(b * row.padded_len + slot));
}

}  // namespace

MtpCombination combine_depths(const std::vector<double>& depth_losses, double scaling_factor) {
  CPLAB_CHECK(!depth_losses.empty(), "the MTP loss needs depth 1's loss at least");
  MtpCombination out;
  const auto modules = static_cast<double>(depth_losses.size() - 1);
  out.weight = depth_losses.size() > 1 ? scaling_factor / modules : 0.0;
  for (std::size_t k = 1; k < depth_losses.size(); ++k) out.mtp += out.weight * depth_losses[k];
  out.total = depth_losses.front() + out.mtp;
  return out;
}

LossReference shifted_loss(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                           const Tensor& valid, std::int64_t depth) {
  const PlanLengths lengths = plan_lengths(plan);
  check_loss_inputs(lengths, logits, labels, valid, lengths.padded, "L");
  CPLAB_CHECK(depth >= 1, "the loss depth must be at least 1, not {}", depth);
  const Tensor logits_f32 = logits.to(DType::f32);
  const std::int64_t vocab = logits.size(2);
  const std::int64_t len = lengths.padded;
  const auto z_all = logits_f32.data<float>();

  LossReference out;
  out.target.assign(static_cast<std::size_t>(lengths.rows),
                    std::vector<std::int64_t>(static_cast<std::size_t>(len)));
  out.contributes.assign(static_cast<std::size_t>(lengths.rows),
                         std::vector<std::uint8_t>(static_cast<std::size_t>(len)));
  out.token_ce.assign(static_cast<std::size_t>(lengths.rows),
                      std::vector<double>(static_cast<std::size_t>(len)));
  for (std::int64_t b = 0; b < lengths.rows; ++b) {
    for (std::int64_t g = 0; g < len; ++g) {
      const std::int64_t target = target_of(plan.rows[b], labels, b, g, depth);
      out.target[b][g] = target;
      const bool contributes =
          valid.get(b * len + g) != 0.0 && target != -1 && target != kIgnoreIndex;
      if (!contributes) continue;
      CPLAB_CHECK(target >= 0 && target < vocab,
                  "row {} slot {}: target label {} outside the vocabulary [0, {})", b, g, target,
                  vocab);
      out.contributes[b][g] = 1;
      ++out.contributing_total;
    }
  }

  out.grad_global = Tensor(DType::f32, {lengths.rows, len, vocab});
  auto grad = out.grad_global.data<float>();
  const double count = static_cast<double>(out.contributing_total);
  double total = 0.0;
  for (std::int64_t b = 0; b < lengths.rows; ++b) {
    for (std::int64_t g = 0; g < len; ++g) {
      if (!out.contributes[b][g]) continue;
      const std::int64_t at = (b * len + g) * vocab;
      const Eigen::VectorXd z =
          Eigen::Map<const Eigen::VectorXf>(z_all.data() + at, static_cast<Eigen::Index>(vocab))
              .cast<double>();
      const double top = z.maxCoeff();
      const double logsumexp = top + std::log((z.array() - top).exp().sum());
      const std::int64_t y = out.target[b][g];
      out.token_ce[b][g] = logsumexp - z(y);
      total += out.token_ce[b][g];
      // ∂(global mean)/∂z = (softmax(z) - onehot(y)) / N.
      Eigen::VectorXd d = (z.array() - logsumexp).exp();
      d(y) -= 1.0;
      Eigen::Map<Eigen::VectorXf>(grad.data() + at, static_cast<Eigen::Index>(vocab)) =
          (d / count).cast<float>();
    }
  }
  out.global_mean = out.contributing_total > 0 ? total / count : 0.0;

  out.rank_loss.assign(static_cast<std::size_t>(lengths.cp), 0.0);
  out.rank_contributing.assign(static_cast<std::size_t>(lengths.cp), 0);
  for (std::int64_t r = 0; r < lengths.cp; ++r) {
    double rank_total = 0.0;
    for (std::int64_t b = 0; b < lengths.rows; ++b) {
      for (std::int64_t g : plan.rows[b].index[r]) {
        if (!out.contributes[b][g]) continue;
        rank_total += out.token_ce[b][g];
        ++out.rank_contributing[r];
      }
    }
    // FSDP averages over the CP group, so each rank carries C times its share of the global mean.
    out.rank_loss[r] =
        out.contributing_total > 0 ? rank_total * static_cast<double>(lengths.cp) / count : 0.0;
  }
  return out;
}

LossReference shifted_loss_caller(const ShardPlan& plan, const Tensor& logits, const Tensor& labels,
                                  const Tensor& valid, std::int64_t depth) {
  const PlanLengths lengths = plan_lengths(plan);
  check_loss_inputs(lengths, logits, labels, valid, lengths.caller, "S");
  auto padded = [&](const Tensor& value, double pad_value) {
    return pad_to_global(
        plan, TokenField{
                  .value = value, .seq_dim = 1, .rule = PadRule::constant, .pad_value = pad_value});
  };
  return shifted_loss(plan, padded(logits, 0.0), padded(labels, static_cast<double>(kIgnoreIndex)),
                      padded(valid, 0.0), depth);
}

}  // namespace cplab::reference
