#include "check/token_values.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace cplab::check {

std::vector<double> token_at(const Tensor& t, const TokenAxes& axes, std::int64_t b,
                             std::int64_t s) {
  std::vector<double> out;
  for (std::int64_t o = 0; o < axes.outer; ++o) {
    for (std::int64_t e = 0; e < axes.inner; ++e) out.push_back(t.get(axes.flat(o, b, s, e)));
  }
  return out;
}

bool same_token(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  }
  return true;
}

ValueIndex::Key ValueIndex::key_of(const std::vector<double>& value) {
  Key key;
  key.reserve(value.size());
  for (double v : value) {
    if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
    if (v == 0.0) v = 0.0;  // -0 is the same token value as 0
    key.push_back(std::bit_cast<std::uint64_t>(v));
  }
  return key;
}

ValueIndex::ValueIndex(const Tensor& global, const TokenAxes& axes, std::int64_t row) {
  for (std::int64_t g = 0; g < axes.seq; ++g)
    slots_[key_of(token_at(global, axes, row, g))].push_back(g);
}

std::int64_t ValueIndex::locate(const std::vector<double>& value, std::int64_t previous) const {
  const auto it = slots_.find(key_of(value));
  if (it == slots_.end()) return -1;
  if (it->second.size() == 1) return it->second[0];
  if (previous >= 0) {
    for (std::int64_t next : {previous + 1, previous - 1}) {
      if (std::binary_search(it->second.begin(), it->second.end(), next)) return next;
    }
  }
  return -2;
}

}  // namespace cplab::check
