// Unsharded single-head attention under the document-causal mask (SPEC §7), forward and backward,
// on the padded global stream. Dense L×L per row in double: slow and obviously right.
#include "reference/attention.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

using Mask = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>;

// Query g sees key h: both real, same document, h <= g.
Mask document_causal_mask(const RowPlan& row) {
  const auto len = static_cast<Eigen::Index>(row.padded_len);
  Mask mask(len, len);
  for (Eigen::Index g = 0; g < len; ++g) {
    for (Eigen::Index h = 0; h < len; ++h) {
      mask(g, h) = h <= g && row.real[g] && row.real[h] && row.doc_ids[g] == row.doc_ids[h];
    }
  }
  return mask;
}

// Softmax over the visible keys of each query; a query that sees nothing keeps an all-zero row,
// so it outputs 0 and passes no gradient. The matrices are column-major: the passes walk key by
// key with every query's running max and sum side by side, so that memory is read in order (a
// query's row is L strided reads otherwise, most of the sweep's attention time). Each query's max,
// exponentials and sum (keys in ascending order) are those of a row-by-row walk, bit for bit.
Eigen::MatrixXd masked_softmax(const Eigen::MatrixXd& scores, const Mask& mask) {
  const Eigen::Index queries = scores.rows(), keys = scores.cols();
  Eigen::MatrixXd probs = Eigen::MatrixXd::Zero(queries, keys);
  std::vector<double> top(static_cast<std::size_t>(queries), -INFINITY);
  std::vector<std::uint8_t> sees(static_cast<std::size_t>(queries), 0);
  for (Eigen::Index h = 0; h < keys; ++h) {
    for (Eigen::Index g = 0; g < queries; ++g) {
      if (!mask(g, h)) continue;
      top[g] = std::max(top[g], scores(g, h));
      sees[g] = 1;
    }
  }
  std::vector<double> sum(static_cast<std::size_t>(queries), 0.0);
  for (Eigen::Index h = 0; h < keys; ++h) {
    for (Eigen::Index g = 0; g < queries; ++g) {
      if (mask(g, h)) probs(g, h) = std::exp(scores(g, h) - top[g]);
      sum[g] += probs(g, h);
    }
  }
  for (Eigen::Index h = 0; h < keys; ++h) {
    for (Eigen::Index g = 0; g < queries; ++g) {
      if (sees[g]) probs(g, h) /= sum[g];
    }
  }
  return probs;
}

// Head h of row b of a [B, L, H, D] f32 tensor as an L×D matrix (a strided view, copied to double).
Eigen::MatrixXd head_matrix(const Tensor& t, std::int64_t b, std::int64_t h) {
  const auto len = static_cast<Eigen::Index>(t.size(1));
  const auto width = static_cast<Eigen::Index>(t.size(3));
  const float* start = t.data<float>().data() + ((b * t.size(1)) * t.size(2) + h) * t.size(3);
  using Stride = Eigen::OuterStride<Eigen::Dynamic>;
  return Eigen::Map<const RowMajorF, 0, Stride>(start, len, width, Stride(t.size(2) * t.size(3)))
      .cast<double>();
}

void store_head(Tensor& t, std::int64_t b, std::int64_t h, const Eigen::MatrixXd& value) {
  float* start = t.data<float>().data() + ((b * t.size(1)) * t.size(2) + h) * t.size(3);
  using Stride = Eigen::OuterStride<Eigen::Dynamic>;
  Eigen::Map<RowMajorF, 0, Stride>(start, value.rows(), value.cols(),
                                   Stride(t.size(2) * t.size(3))) = value.cast<float>();
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
    const Eigen::MatrixXd probs = masked_softmax(scores, mask);
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

// Forward only, with each row's mask built once for all heads: the same arithmetic as attention()'s
// output, so one head here equals attention(...).out of that head bit for bit (a test holds it).
Tensor multi_head_attention(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                            const Tensor& v) {
  const PlanLengths lengths = plan_lengths(plan);
  CPLAB_CHECK(q.dtype() == DType::f32 && q.dim() == 4 && q.size(0) == lengths.rows &&
                  q.size(1) == lengths.padded && k.dtype() == DType::f32 &&
                  k.shape() == v.shape() && v.dtype() == DType::f32 && k.dim() == 4 &&
                  k.size(0) == q.size(0) && k.size(1) == q.size(1) && k.size(3) == q.size(3) &&
                  k.size(2) >= 1 && q.size(2) % k.size(2) == 0,
              "multi_head_attention: q {}, k {}, v {}; expected f32 [B, L, H, d] = [{}, {}, H, d] "
              "and k, v [B, L, H_kv, d] with H_kv dividing H",
              tensor_brief(q), tensor_brief(k), tensor_brief(v), lengths.rows, lengths.padded);
  const std::int64_t heads = q.size(2), kv_heads = k.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  Tensor out(DType::f32, q.shape());
  for (std::int64_t b = 0; b < lengths.rows; ++b) {
    const Mask mask = document_causal_mask(plan.rows[b]);
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t kv = h * kv_heads / heads;
      const Eigen::MatrixXd qb = head_matrix(q, b, h), kb = head_matrix(k, b, kv);
      const Eigen::MatrixXd scores = (qb * kb.transpose()) * scale;
      store_head(out, b, h, masked_softmax(scores, mask) * head_matrix(v, b, kv));
    }
  }
  return out;
}

}  // namespace cplab::reference
