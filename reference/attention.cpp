// Unsharded single-head attention under the document-causal mask (SPEC §7), forward and backward,
// on the padded global stream. Dense L×L per row in double: slow and obviously right.
#include "reference/attention.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "reference/plan_lengths.hpp"

namespace cplab::reference {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd row_matrix(const Tensor& t, std::int64_t b) {
  const auto len = static_cast<Eigen::Index>(t.size(1));
  const auto width = static_cast<Eigen::Index>(t.size(2));
  const float* start = t.data<float>().data() + b * t.size(1) * t.size(2);
  return Eigen::Map<const RowMajorF>(start, len, width).cast<double>();
}

void store_row(Tensor& t, std::int64_t b, const Eigen::MatrixXd& value) {
  float* start = t.data<float>().data() + b * t.size(1) * t.size(2);
  Eigen::Map<RowMajorF>(start, value.rows(), value.cols()) = value.cast<float>();
}

// Query g sees key h: both real, same document, h <= g.
Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> document_causal_mask(const RowPlan& row) {
  const auto len = static_cast<Eigen::Index>(row.padded_len);
  Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> mask(len, len);
  for (Eigen::Index g = 0; g < len; ++g) {
    for (Eigen::Index h = 0; h < len; ++h) {
      mask(g, h) = h <= g && row.real[g] && row.real[h] && row.doc_ids[g] == row.doc_ids[h];
    }
  }
  return mask;
}

}  // namespace

AttentionReference attention(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                             const Tensor& v, const Tensor& grad_out) {
  const PlanLengths lengths = plan_lengths(plan);
  const char* names[] = {"q", "k", "v", "grad_out"};
  const Tensor* inputs[] = {&q, &k, &v, &grad_out};
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = *inputs[i];
    CPLAB_CHECK(t.dtype() == DType::f32 && t.dim() == 3 && t.size(0) == lengths.rows &&
                    t.size(1) == lengths.padded && t.shape() == q.shape(),
                "attention: {} is {}; every input must be f32 [B, L, D] = [{}, {}, D] with one D",
                names[i], tensor_brief(t), lengths.rows, lengths.padded);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
  AttentionReference out{.out = Tensor(DType::f32, q.shape()),
                         .grad_q = Tensor(DType::f32, q.shape()),
                         .grad_k = Tensor(DType::f32, q.shape()),
                         .grad_v = Tensor(DType::f32, q.shape())};
  for (std::int64_t b = 0; b < lengths.rows; ++b) {
    const auto mask = document_causal_mask(plan.rows[b]);
    const Eigen::MatrixXd qb = row_matrix(q, b), kb = row_matrix(k, b), vb = row_matrix(v, b);
    const Eigen::MatrixXd grad_ob = row_matrix(grad_out, b);
    const Eigen::MatrixXd scores = (qb * kb.transpose()) * scale;
    // Softmax over the visible keys of each query; a query that sees nothing keeps an all-zero row,
    // so it outputs 0 and passes no gradient.
    Eigen::MatrixXd probs = Eigen::MatrixXd::Zero(scores.rows(), scores.cols());
    for (Eigen::Index g = 0; g < scores.rows(); ++g) {
      if (!mask.row(g).any()) continue;
      double top = -INFINITY;
      for (Eigen::Index h = 0; h < scores.cols(); ++h) {
        if (mask(g, h)) top = std::max(top, scores(g, h));
      }
      for (Eigen::Index h = 0; h < scores.cols(); ++h) {
        if (mask(g, h)) probs(g, h) = std::exp(scores(g, h) - top);
      }
      probs.row(g) /= probs.row(g).sum();
    }
    const Eigen::MatrixXd grad_probs = grad_ob * vb.transpose();
    // Softmax backward: dS = P ∘ (dP - rowsum(P ∘ dP)); masked entries have P = 0.
    const Eigen::VectorXd row_dot = probs.cwiseProduct(grad_probs).rowwise().sum();
    const Eigen::MatrixXd grad_scores = probs.cwiseProduct(grad_probs.colwise() - row_dot);
    store_row(out.out, b, probs * vb);
    store_row(out.grad_v, b, probs.transpose() * grad_ob);
    store_row(out.grad_q, b, grad_scores * kb * scale);
    store_row(out.grad_k, b, grad_scores.transpose() * qb * scale);
  }
  return out;
}

}  // namespace cplab::reference
