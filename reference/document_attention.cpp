#include "reference/document_attention.hpp"

#include <cmath>
#include <unordered_map>

namespace cplab::reference {

std::vector<std::vector<std::int64_t>> document_slots(const RowPlan& row) {
  std::vector<std::vector<std::int64_t>> docs;
  std::unordered_map<std::int32_t, std::size_t> index_of;
  for (std::size_t g = 0; g < row.real.size() && g < row.doc_ids.size(); ++g) {
    if (row.real[g] == 0) continue;
    const auto [at, fresh] = index_of.try_emplace(row.doc_ids[g], docs.size());
    if (fresh) docs.emplace_back();
    docs[at->second].push_back(static_cast<std::int64_t>(g));
  }
  return docs;
}

// Each query's visible keys are one contiguous run of its row, so max, exp and sum run over it
// vectorised.
RowMajorD causal_softmax(RowMajorD scores, Eigen::VectorXd* lse) {
  const Eigen::Index n = scores.rows();
  if (lse != nullptr) lse->resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    auto seen = scores.row(i).head(i + 1).array();
    const double top = seen.maxCoeff();
    seen = (seen - top).exp();
    const double sum = seen.sum();
    seen /= sum;
    scores.row(i).tail(n - i - 1).setZero();
    if (lse != nullptr) (*lse)(i) = top + std::log(sum);
  }
  return scores;
}

}  // namespace cplab::reference
