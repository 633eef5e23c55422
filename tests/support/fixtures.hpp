#pragma once
// Fixtures every module's tests share: the layouts × C parameters, self-locating token values
// (a pure function of row, caller position and feature, so a wrong element tells where a token
// landed), and matching a cplab::Error's message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "reference/plan.hpp"

namespace cplab::testsupport {

using Ints = std::vector<std::int64_t>;

inline const std::vector<std::int64_t>& cp_sizes() {
  static const std::vector<std::int64_t> sizes = {1, 2, 3, 4, 8};
  return sizes;
}

// (layout, C) for every registered layout and every C of cp_sizes(); names like "head_tail_cp4".
using LayoutCp = std::tuple<std::string, std::int64_t>;
inline std::vector<LayoutCp> every_layout_and_cp() {
  std::vector<LayoutCp> params;
  for (const std::string& layout : reference::layout_names()) {
    for (std::int64_t cp : cp_sizes()) params.emplace_back(layout, cp);
  }
  return params;
}
inline std::string layout_cp_name(const ::testing::TestParamInfo<LayoutCp>& info) {
  std::string name = std::get<0>(info.param) + "_cp" + std::to_string(std::get<1>(info.param));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// Self-locating token values: row b, caller position s, feature e.
inline double token_value(std::int64_t b, std::int64_t s, std::int64_t e = 0) {
  return 1000.0 * static_cast<double>(b) + static_cast<double>(s) + 0.25 * static_cast<double>(e);
}

// A [rows, seq, ...] tensor of token_value(row, position, flat feature).
inline Tensor located(DType dtype, Shape shape) {
  Tensor t(dtype, shape);
  const std::int64_t rows = shape[0], seq = shape[1];
  const std::int64_t inner = t.numel() / std::max<std::int64_t>(rows * seq, 1);
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < seq; ++s) {
      for (std::int64_t e = 0; e < inner; ++e)
        t.set((b * seq + s) * inner + e, token_value(b, s, e));
    }
  }
  return t;
}

// [rows, seq], or [rows, seq, features] when features > 0.
inline Tensor located(DType dtype, std::int64_t rows, std::int64_t seq, std::int64_t features = 0) {
  return located(dtype, features > 0 ? Shape{rows, seq, features} : Shape{rows, seq});
}

// Runs f and returns the cplab::Error message it throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace cplab::testsupport

// EXPECT_ERROR(statement, "part one", "part two", ...): throws cplab::Error containing every part.
#define EXPECT_ERROR(statement, ...)                                                              \
  do {                                                                                            \
    const std::string cplab_message = ::cplab::testsupport::error_of([&] { (void)(statement); }); \
    EXPECT_FALSE(cplab_message.empty()) << "no cplab::Error from " #statement;                    \
    for (const char* part : {__VA_ARGS__}) {                                                      \
      EXPECT_NE(cplab_message.find(part), std::string::npos)                                      \
          << "error of " #statement " lacks '" << part << "': " << cplab_message;                 \
    }                                                                                             \
  } while (0)
