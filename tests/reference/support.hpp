#pragma once
// Shared helpers of the reference tests: batches whose values say where they came from (SPEC-free
// formulas of (row, caller position, feature)), and an error matcher.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "reference/plan.hpp"
#include "reference/types/batch.hpp"
#include "reference/types/error.hpp"

namespace cplab::testing {

using Ints = std::vector<std::int64_t>;

inline LayoutSpec make_spec(const std::string& layout, std::int64_t cp) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  spec.chunk_size = 4;
  return spec;
}

// Self-locating token values: row b, caller position s, feature e.
inline double token_value(std::int64_t b, std::int64_t s, std::int64_t e = 0) {
  return 1000.0 * static_cast<double>(b) + static_cast<double>(s) + 0.25 * static_cast<double>(e);
}

inline Tensor located(DType dtype, std::int64_t rows, std::int64_t seq, std::int64_t features = 0) {
  Tensor t(dtype, features > 0 ? Shape{rows, seq, features} : Shape{rows, seq});
  const std::int64_t inner = features > 0 ? features : 1;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < seq; ++s) {
      for (std::int64_t e = 0; e < inner; ++e)
        t.set((b * seq + s) * inner + e, token_value(b, s, e));
    }
  }
  return t;
}

// A BSHD batch: input_ids and labels located, loss_mask 1.
inline Batch bshd_batch(std::int64_t rows, std::int64_t seq) {
  Batch batch;
  batch.add(keys::input_ids, located(DType::i64, rows, seq));
  batch.add(keys::labels, located(DType::i64, rows, seq));
  Tensor mask(DType::u8, {rows, seq});
  for (std::int64_t i = 0; i < mask.numel(); ++i) mask.set(i, 1);
  batch.add(keys::loss_mask, mask);
  return batch;
}

// A packed batch, one row per entry of seq_lens, each row S long.
inline Batch packed_batch(const std::vector<Ints>& seq_lens, std::int64_t seq,
                          const std::vector<Ints>& seq_lens_padded = {}) {
  const auto rows = static_cast<std::int64_t>(seq_lens.size());
  Batch batch = bshd_batch(rows, seq);
  batch.seq_lens = seq_lens;
  batch.seq_lens_padded = seq_lens_padded;
  return batch;
}

inline std::int64_t sum(const Ints& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
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

}  // namespace cplab::testing

// EXPECT_ERROR(statement, "part one", "part two", ...): throws cplab::Error containing every part.
#define EXPECT_ERROR(statement, ...)                                                          \
  do {                                                                                        \
    const std::string cplab_message = ::cplab::testing::error_of([&] { (void)(statement); }); \
    EXPECT_FALSE(cplab_message.empty()) << "no cplab::Error from " #statement;                \
    for (const char* part : {__VA_ARGS__}) {                                                  \
      EXPECT_NE(cplab_message.find(part), std::string::npos)                                  \
          << "error of " #statement " lacks '" << part << "': " << cplab_message;             \
    }                                                                                         \
  } while (0)
