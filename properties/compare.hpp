#pragma once
// Comparisons that say where the first wrong element is: which rank, row and local token, which
// global slot and caller token that is, what was expected, what was found, and (self-locating
// data) which token the found value belongs to, i.e. where a token landed by mistake.
#include <cstdint>
#include <string>
#include <vector>

#include "core/shard_plan.hpp"
#include "core/tensor.hpp"
#include "properties/case.hpp"

namespace cplab::properties {

// How to name an element of a token-aligned tensor [outer..., rows, seq, inner...].
struct TokenFrame {
  std::string what;  // "labels of rank 2, microbatch 1"
  std::int64_t seq_dim = 1;
  // Per row: the global slot of each position along seq (local tensors); empty: the positions are
  // global slots themselves (global tensors), or caller positions when `caller` is true.
  std::vector<std::vector<std::int64_t>> slots = {};
  const ShardPlan* plan = nullptr;  // for slot → caller token (microbatch plan); may be null
  bool caller = false;              // positions along seq are caller positions
  std::int64_t locate_len = 0;  // decode found values with describe_value(c, locate_len, ·); 0: no
};

struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;  // relative to the largest |expected| of the whole tensor
};

// "" when dtype, shape and every element agree (within tol); else one line naming the first wrong
// element as above.
std::string tensor_mismatch(const Case& c, const TokenFrame& frame, const Tensor& expected,
                            const Tensor& actual, Tolerance tol = {});

// "local token 3 (global slot 13, caller token 12)" for row b of a frame.
std::string name_token(const TokenFrame& frame, std::int64_t row, std::int64_t pos);

// "" when equal; else "what: position i: expected x, got y" (or the size difference).
std::string vector_mismatch(const std::string& what, const std::vector<std::int64_t>& expected,
                            const std::vector<std::int64_t>& actual);

// Numbers with tolerance: |a - e| <= abs + rel·|e|.
bool close(double expected, double actual, double abs, double rel);

}  // namespace cplab::properties
