#include "properties/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "properties/case_data.hpp"

namespace cplab::properties {

namespace {

std::vector<std::int64_t> coords_of(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    coords[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coords;
}

std::string show(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<std::int64_t>(v));
  return fmt::format("{:.7g}", v);
}

}  // namespace

bool close(double expected, double actual, double abs, double rel) {
  return std::fabs(actual - expected) <= abs + rel * std::fabs(expected);
}

std::string name_token(const TokenFrame& frame, std::int64_t row, std::int64_t pos) {
  if (frame.caller) return fmt::format("row {} caller token {}", row, pos);
  std::int64_t slot = pos;
  std::string name;
  if (!frame.slots.empty()) {
    const auto& slots = frame.slots[static_cast<std::size_t>(row)];
    if (pos >= static_cast<std::int64_t>(slots.size()))
      return fmt::format("row {} local token {}", row, pos);
    slot = slots[static_cast<std::size_t>(pos)];
    name = fmt::format("row {} local token {} (global slot {}", row, pos, slot);
  } else {
    name = fmt::format("row {} global slot {} (", row, slot);
  }
  std::string caller;
  if (frame.plan && row < static_cast<std::int64_t>(frame.plan->rows.size())) {
    const RowPlan& plan_row = frame.plan->rows[static_cast<std::size_t>(row)];
    if (slot >= 0 && slot < plan_row.padded_len) {
      const std::int64_t t = plan_row.caller_pos[static_cast<std::size_t>(slot)];
      caller = t >= 0 ? fmt::format("caller token {}", t) : std::string("a pad slot");
    }
  }
  if (frame.slots.empty())
    return caller.empty() ? fmt::format("row {} global slot {}", row, slot) : name + caller + ")";
  return name + (caller.empty() ? ")" : ", " + caller + ")");
}

std::string tensor_mismatch(const Case& c, const TokenFrame& frame, const Tensor& expected,
                            const Tensor& actual, Tolerance tol) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape()) {
    return fmt::format("{}: expected {}, got {}", frame.what, tensor_brief(expected),
                       tensor_brief(actual));
  }
  double largest = 0.0;
  if (tol.rel > 0.0) {
    for (std::int64_t i = 0; i < expected.numel(); ++i)
      largest = std::max(largest, std::fabs(expected.get(i)));
  }
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    const double e = expected.get(i), a = actual.get(i);
    const bool same = tol.abs == 0.0 && tol.rel == 0.0
                          ? (e == a || (std::isnan(e) && std::isnan(a)))
                          : std::fabs(a - e) <= tol.abs + tol.rel * largest;
    if (same) continue;
    const std::vector<std::int64_t> at = coords_of(expected.shape(), i);
    std::string where = fmt::format("element [{}]", fmt::join(at, ", "));
    const auto seq = static_cast<std::size_t>(frame.seq_dim);
    if (frame.seq_dim >= 1 && seq < at.size()) {
      where += ", " + name_token(frame, at[seq - 1], at[seq]);
    }
    std::string landed;
    if (frame.locate_len > 0) {
      const std::string from = describe_value(c, frame.locate_len, a);
      if (!from.empty()) landed = fmt::format(" ({})", from);
    }
    return fmt::format("{}: first wrong {}: expected {}, got {}{}", frame.what, where, show(e),
                       show(a), landed);
  }
  return {};
}

std::string vector_mismatch(const std::string& what, const std::vector<std::int64_t>& expected,
                            const std::vector<std::int64_t>& actual) {
  const std::size_t n = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (expected[i] != actual[i]) {
      return fmt::format("{}: position {}: expected {}, got {} (expected [{}], got [{}])", what, i,
                         expected[i], actual[i], fmt::join(expected, ","), fmt::join(actual, ","));
    }
  }
  if (expected.size() != actual.size()) {
    return fmt::format("{}: expected {} entries [{}], got {} [{}]", what, expected.size(),
                       fmt::join(expected, ","), actual.size(), fmt::join(actual, ","));
  }
  return {};
}

}  // namespace cplab::properties
