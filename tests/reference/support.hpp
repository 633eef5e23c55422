#pragma once
// Shared helpers of the reference tests: batches whose values say where they came from (SPEC-free
// formulas of (row, caller position, feature), tests/support/fixtures.hpp), and an error matcher
// (EXPECT_ERROR, from there too).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "reference/plan.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::testing {

using testsupport::error_of;
using testsupport::Ints;
using testsupport::located;
using testsupport::token_value;

inline LayoutSpec make_spec(const std::string& layout, std::int64_t cp) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::magi_chunk_size.set(spec, 4);
  layouts::ptrr_block_size.set(spec, 1);
  return spec;
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

// values[g] for every slot g rank `rank` holds, in its local order (its positions, doc ids, ...).
inline Ints local_values(const RowPlan& row, const Ints& values, std::int64_t rank) {
  Ints out;
  for (std::int64_t g : row.index[static_cast<std::size_t>(rank)])
    out.push_back(values[static_cast<std::size_t>(g)]);
  return out;
}

}  // namespace cplab::testing
