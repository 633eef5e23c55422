#pragma once
// A token as its values, and where a value sits in one row of a global stream: how the shard and
// gathered checks say which token a wrong slot holds instead of only that it is wrong.
#include <cstdint>
#include <map>
#include <vector>

#include "core/tensor.hpp"
#include "core/token_moves.hpp"

namespace cplab::check {

// Every element of token (b, s), outer planes first (mRoPE), then the inner ones.
std::vector<double> token_at(const Tensor& t, const TokenAxes& axes, std::int64_t b,
                             std::int64_t s);

// The same values, a NaN equal to a NaN (a NaN the sharder moved is the token's own).
bool same_token(const std::vector<double>& a, const std::vector<double>& b);

// Where each token value sits in row `row` of a global stream: finds a held token by its value.
class ValueIndex {
 public:
  ValueIndex(const Tensor& global, const TokenAxes& axes, std::int64_t row);
  // The one slot holding `value` (-1: none does). When several do, the one continuing
  // `previous` (the slot the neighbouring wrong slot holds, +1 or -1; -1: none), else -2.
  std::int64_t locate(const std::vector<double>& value, std::int64_t previous) const;

 private:
  // Keyed by each value's bits, every NaN one bit pattern and -0 as 0: the order a map needs is
  // total there (doubles compared with < are not once a NaN is among them), and equal keys are
  // exactly same_token's equal values.
  using Key = std::vector<std::uint64_t>;
  static Key key_of(const std::vector<double>& value);
  std::map<Key, std::vector<std::int64_t>> slots_;
};

}  // namespace cplab::check
