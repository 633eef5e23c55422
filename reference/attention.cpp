// Unsharded single-head attention under the document-causal mask (SPEC §7), forward and backward,
// on the padded global stream. Dense per document in double: slow and obviously right.
#include "reference/attention.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/document_attention.hpp"
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
    const Eigen::MatrixXd qr = row_matrix(q, b), kr = row_matrix(k, b), vr = row_matrix(v, b);
    const Eigen::MatrixXd grad_or = row_matrix(grad_out, b);
    const auto width = static_cast<Eigen::Index>(q.size(2));
    Eigen::MatrixXd o = Eigen::MatrixXd::Zero(qr.rows(), width), dq = o, dk = o, dv = o;
    for (const auto& slots : document_slots(plan.rows[static_cast<std::size_t>(b)])) {
      const Eigen::MatrixXd qb = qr(slots, Eigen::all), kb = kr(slots, Eigen::all),
                            vb = vr(slots, Eigen::all), grad_ob = grad_or(slots, Eigen::all);
      const RowMajorD probs = causal_softmax((qb * kb.transpose()) * scale);
      const Eigen::MatrixXd grad_probs = grad_ob * vb.transpose();
      // Softmax backward: dS = P ∘ (dP - rowsum(P ∘ dP)); masked entries have P = 0.
      const Eigen::VectorXd row_dot = probs.cwiseProduct(grad_probs).rowwise().sum();
      const Eigen::MatrixXd grad_scores = probs.cwiseProduct(grad_probs.colwise() - row_dot);
      o(slots, Eigen::all) = probs * vb;
      dv(slots, Eigen::all) = probs.transpose() * grad_ob;
      dq(slots, Eigen::all) = grad_scores * kb * scale;
      dk(slots, Eigen::all) = grad_scores.transpose() * qb * scale;
    }
    store_row(out.out, b, o);
    store_row(out.grad_v, b, dv);
    store_row(out.grad_q, b, dq);
    store_row(out.grad_k, b, dk);
  }
  return out;
}

// Forward only, with each row's documents found once for all heads: the same arithmetic as
// attention()'s output, so one head here equals attention(...).out of that head bit for bit (a test
// holds it).
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
    const auto docs = document_slots(plan.rows[static_cast<std::size_t>(b)]);
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t kv = h * kv_heads / heads;
      const Eigen::MatrixXd qr = head_matrix(q, b, h), kr = head_matrix(k, b, kv),
                            vr = head_matrix(v, b, kv);
      Eigen::MatrixXd o = Eigen::MatrixXd::Zero(qr.rows(), qr.cols());
      for (const auto& slots : docs) {
        const Eigen::MatrixXd qb = qr(slots, Eigen::all), kb = kr(slots, Eigen::all),
                              vb = vr(slots, Eigen::all);
        o(slots, Eigen::all) = causal_softmax((qb * kb.transpose()) * scale) * vb;
      }
      store_head(out, b, h, o);
    }
  }
  return out;
}

}  // namespace cplab::reference
