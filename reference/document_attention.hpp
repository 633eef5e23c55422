#pragma once
// What the references share: a row's documents as lists of their real slots, and the causal
// softmax of one document's scores. A query sees only keys of its own document, so the references
// compute attention one document at a time (Σ n² work instead of L², the padding taking no part)
// as small dense problems in double.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "core/shard_plan.hpp"

namespace cplab::reference {

// The real slots of each document of `row`, ascending; documents in the order of their first
// slot. A document's slots need not be contiguous.
std::vector<std::vector<std::int64_t>> document_slots(const RowPlan& row);

using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The causal softmax of one document's scores (n×n, its slots ascending, so query i sees keys
// 0..i, itself always): probabilities, 0 past the diagonal. With `lse`, each query's
// log-sum-exp of its visible scores (max + log Σ exp(s - max)) is written there (n entries).
RowMajorD causal_softmax(RowMajorD scores, Eigen::VectorXd* lse = nullptr);

}  // namespace cplab::reference
