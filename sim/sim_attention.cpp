// Attention equivalence (SPEC §7) on one rank: local queries, keys and values of every rank
// gathered with gather_tokens, a document-causal mask from the gathered global slots and document
// ids, and the backward with dK/dV carried back to their owners by gather_tokens_backward. A layout
// whose ranks attend through varlen segments sees, instead, the keys its segments give each query
// (layouts/varlen_windows.hpp), the segments prepared on this rank from the row's document bounds.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "layouts/varlen_windows.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {
namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Row b of a [B, n, D] f32 tensor as an n×D double matrix.
Eigen::MatrixXd row_of(const Tensor& t, std::int64_t b) {
  const std::int64_t n = t.size(1), d = t.size(2);
  return Eigen::Map<const RowMajorF>(t.data<float>().data() + b * n * d, n, d).cast<double>();
}

Tensor tensor_of(const Eigen::MatrixXd& m) {
  Tensor t(DType::f32, {m.rows(), m.cols()});
  Eigen::Map<RowMajorF>(t.data<float>().data(), m.rows(), m.cols()) = m.cast<float>();
  return t;
}

void store_row(Tensor& t, std::int64_t b, const Eigen::MatrixXd& m) {
  Eigen::Map<RowMajorF>(t.data<float>().data() + b * m.rows() * m.cols(), m.rows(), m.cols()) =
      m.cast<float>();
}

void store_row(Tensor& t, std::int64_t b, const Tensor& rows) {
  std::copy(rows.data<float>().begin(), rows.data<float>().end(),
            t.data<float>().begin() + b * rows.numel());
}

}  // namespace

AttentionOutput SimImplementation::do_attention(Comm& comm, const ShardLayout& layout,
                                                const Tensor& q, const Tensor& k, const Tensor& v,
                                                const Tensor& grad_out) {
  const std::int64_t rows = layout.rows, len = layout.local_len();
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
  AttentionOutput out{.out = Tensor(DType::f32, q.shape()),
                      .grad_q = Tensor(DType::f32, q.shape()),
                      .grad_k = Tensor(DType::f32, q.shape()),
                      .grad_v = Tensor(DType::f32, q.shape())};
  const bool segmented = layout_descriptor(layout.layout).attention.varlen_segments;
  for (std::int64_t b = 0; b < rows; ++b) {
    std::vector<KeyWindow> windows;
    if (segmented) {
      CPLAB_CHECK(static_cast<std::int64_t>(layout.cu_seqlens_padded.size()) == rows,
                  "attention: {} attends through varlen segments, but the layout records no "
                  "document bounds for row {}",
                  layout.layout, b);
      windows = query_key_windows(
          varlen_segments(layout.cu_seqlens_padded[b], layout.padded_len, layout.cp, layout.rank),
          len, layout.padded_len);
    }
    // What every key is: its global slot, document and whether it is real, gathered with it.
    Tensor facts(DType::i64, {len, 3});
    auto mine = facts.data<std::int64_t>();
    for (std::int64_t t = 0; t < len; ++t) {
      mine[3 * t] = layout.index[b][t];
      mine[3 * t + 1] = layout.doc_ids[b][t];
      mine[3 * t + 2] = layout.real[b][t];
    }
    const Tensor key_facts = gather_tokens(comm, facts);
    const auto keys = key_facts.data<std::int64_t>();
    const Eigen::MatrixXd qb = row_of(q, b), grad_ob = row_of(grad_out, b);
    const Tensor k_all = gather_tokens(comm, tensor_of(row_of(k, b)));
    const Tensor v_all = gather_tokens(comm, tensor_of(row_of(v, b)));
    const Eigen::MatrixXd kb =
        Eigen::Map<const RowMajorF>(k_all.data<float>().data(), k_all.size(0), k_all.size(1))
            .cast<double>();
    const Eigen::MatrixXd vb =
        Eigen::Map<const RowMajorF>(v_all.data<float>().data(), v_all.size(0), v_all.size(1))
            .cast<double>();
    const Eigen::MatrixXd scores = qb * kb.transpose() * scale;
    Eigen::MatrixXd probs = Eigen::MatrixXd::Zero(scores.rows(), scores.cols());
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
      if (!layout.real[b][i]) continue;  // a pad query sees nothing: output 0, no gradient
      auto visible = [&](Eigen::Index j) {
        if (segmented) {
          const KeyWindow& w = windows[static_cast<std::size_t>(i)];
          return keys[3 * j + 2] != 0 && keys[3 * j] >= w.begin && keys[3 * j] < w.end;
        }
        return keys[3 * j + 2] != 0 && keys[3 * j + 1] == layout.doc_ids[b][i] &&
               keys[3 * j] <= layout.index[b][i];
      };
      double top = -INFINITY;
      for (Eigen::Index j = 0; j < scores.cols(); ++j) {
        if (visible(j)) top = std::max(top, scores(i, j));
      }
      if (top == -INFINITY) continue;
      for (Eigen::Index j = 0; j < scores.cols(); ++j) {
        if (visible(j)) probs(i, j) = std::exp(scores(i, j) - top);
      }
      probs.row(i) /= probs.row(i).sum();
    }
    const Eigen::MatrixXd grad_probs = grad_ob * vb.transpose();
    const Eigen::VectorXd row_dot = probs.cwiseProduct(grad_probs).rowwise().sum();
    const Eigen::MatrixXd grad_scores = probs.cwiseProduct(grad_probs.colwise() - row_dot);
    store_row(out.out, b, probs * vb);
    store_row(out.grad_q, b, grad_scores * kb * scale);
    // Every rank computed gradients for every rank's keys; each owner gets the sum of them.
    store_row(out.grad_k, b,
              gather_tokens_backward(comm, tensor_of(grad_scores.transpose() * qb * scale)));
    store_row(out.grad_v, b, gather_tokens_backward(comm, tensor_of(probs.transpose() * grad_ob)));
  }
  return out;
}

}  // namespace cplab::sim
