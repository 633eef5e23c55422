#pragma once
// Shared helpers of the sim tests (and the gpu implementation tests): the batch shapes every layout
// is tried on, built from the self-locating values and layouts × C parameters of
// tests/support/fixtures.hpp, and the loop over the cases the reference can plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "reference/plan.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab::simtest {

using testsupport::cp_sizes;
using testsupport::error_of;
using testsupport::every_layout_and_cp;
using testsupport::Ints;
using testsupport::layout_cp_name;
using testsupport::LayoutCp;
using testsupport::located;
using testsupport::token_value;

// Labels in [0, vocab) from (row, position), with IGNORE at every 7th position.
inline Tensor labels_for(std::int64_t rows, std::int64_t seq, std::int64_t vocab) {
  Tensor t(DType::i64, {rows, seq});
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < seq; ++s) {
      t.set(b * seq + s, s % 7 == 5 ? static_cast<double>(kIgnoreIndex)
                                    : static_cast<double>((3 * s + b) % vocab));
    }
  }
  return t;
}

inline Batch bshd_batch(std::int64_t rows, std::int64_t seq, std::int64_t vocab = 11) {
  Batch batch;
  batch.add(keys::input_ids, located(DType::i64, {rows, seq}));
  batch.add(keys::labels, labels_for(rows, seq, vocab));
  Tensor mask(DType::u8, {rows, seq});
  for (std::int64_t i = 0; i < mask.numel(); ++i) mask.set(i, i % 5 == 3 ? 0 : 1);
  batch.add(keys::loss_mask, mask);
  return batch;
}

// Every token valid with a label: no mask or IGNORE can hide a wrong target.
inline Batch dense_batch(std::int64_t rows, std::int64_t seq, std::int64_t vocab = 11) {
  Batch batch = bshd_batch(rows, seq, vocab);
  Tensor labels(DType::i64, {rows, seq}), mask(DType::u8, {rows, seq});
  for (std::int64_t i = 0; i < rows * seq; ++i) {
    labels.set(i, static_cast<double>((3 * i + 1) % vocab));
    mask.set(i, 1);
  }
  batch.add(keys::labels, labels);
  batch.add(keys::loss_mask, mask);
  return batch;
}

inline Batch packed_batch(const std::vector<Ints>& seq_lens, std::int64_t seq,
                          const std::vector<Ints>& seq_lens_padded = {}) {
  Batch batch = bshd_batch(static_cast<std::int64_t>(seq_lens.size()), seq);
  batch.seq_lens = seq_lens;
  batch.seq_lens_padded = seq_lens_padded;
  return batch;
}

// Every key kind at once: embeddings as the primary, mRoPE position ids [3,B,S] (continued), a
// padding mask, an extra key with its own pad value, and a pass-through image.
inline Batch rich_bshd_batch(std::int64_t rows, std::int64_t seq) {
  Batch batch;
  batch.add(keys::inputs_embeds, located(DType::f32, {rows, seq, 3}));
  batch.add(keys::labels, labels_for(rows, seq, 11));
  Tensor mrope(DType::i64, {3, rows, seq});
  for (std::int64_t i = 0; i < mrope.numel(); ++i)
    mrope.set(i, static_cast<double>(i % seq + 10 * (i / (rows * seq))));
  batch.add(keys::position_ids, mrope);
  batch.add(keys::padding_mask, Tensor(DType::b8, {rows, seq}));
  Tensor mask(DType::b8, {rows, seq});
  for (std::int64_t i = 0; i < mask.numel(); ++i) mask.set(i, i % 4 == 1 ? 0 : 1);
  batch.add(keys::loss_mask, mask);
  TokenField extra = default_token_field("token_type", located(DType::i32, {rows, seq}));
  extra.pad_value = 7;
  batch.tokens["token_type"] = extra;
  batch.passthrough["image"] = located(DType::f32, {3, 2, 2});
  return batch;
}

// A packed row with caller-given positions shared by every row ([1,S]).
inline Batch packed_shared_positions_batch() {
  Batch batch = packed_batch({{6, 2, 5}}, 15);
  Tensor positions(DType::i64, {1, 15});
  for (std::int64_t s = 0; s < 15; ++s) positions.set(s, static_cast<double>(100 + s));
  batch.add(keys::position_ids, positions);
  return batch;
}

// A batch with the spec options it is meant for.
struct BatchCase {
  std::string name;
  Batch batch;
  std::int64_t microbatches = 1;
};

// The batch shapes every layout is tried on: lengths that do not divide, several rows and
// microbatches, zero-length documents, caller padding inside and after documents, ragged rows.
inline std::vector<BatchCase> batch_cases() {
  return {
      {"bshd_B2_S13", bshd_batch(2, 13), 1},
      {"bshd_B4_S16_mb2", bshd_batch(4, 16), 2},
      {"bshd_B1_S5", bshd_batch(1, 5), 1},
      {"packed_5_3_8", packed_batch({{5, 3, 8}}, 16), 1},
      {"packed_4_12", packed_batch({{4, 12}}, 16), 1},
      {"packed_zeros_and_row_padding", packed_batch({{0, 7, 1, 0, 9}}, 21), 1},
      {"packed_caller_padded", packed_batch({{5, 3, 8}}, 24, {{6, 3, 10}}), 1},
      {"packed_two_rows_ragged", packed_batch({{5, 3}, {9, 1, 2}}, 14), 2},
      {"rich_bshd_B2_S13", rich_bshd_batch(2, 13), 1},
      {"packed_shared_positions", packed_shared_positions_batch(), 1},
      // Rows as a caller pads them where the padding is the caller's (every 2C of C <= 8 divides
      // 48), so that such a layout meets BSHD rows, documents with padding, and two microbatches.
      {"bshd_B2_S48", bshd_batch(2, 48), 1},
      {"packed_caller_padded_to_48", packed_batch({{40, 0, 48}}, 96, {{48, 0, 48}}), 1},
      {"packed_two_rows_caller_padded", packed_batch({{90}, {20, 48}}, 96, {{96}, {48, 48}}), 2},
  };
}

inline LayoutSpec spec_for(const std::string& layout, std::int64_t cp,
                           std::int64_t microbatches = 1) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  layouts::magi_chunk_size.set(spec, 3);
  spec.microbatches = microbatches;
  layouts::ptrr_block_size.set(
      spec, 1);  // ptrr: blocks of one slot, so that rows of S divisible by C are taken
  return spec;
}

// body(spec, batch, plan) for every batch case the reference can plan with this layout and C
// (partition_test checks the refusals).
template <typename F>
void for_each_plannable_case(const LayoutCp& param, const F& body) {
  const auto& [layout, cp] = param;
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const LayoutSpec spec = spec_for(layout, cp, c.microbatches);
    ShardPlan plan;
    if (!error_of([&] { plan = reference::plan(spec, c.batch); }).empty()) continue;
    body(spec, c.batch, plan);
  }
}

// Rows [begin, end) of a [B, S, ...] tensor.
inline Tensor rows_slice(const Tensor& t, std::int64_t begin, std::int64_t end) {
  Shape shape = t.shape();
  shape[0] = end - begin;
  Tensor out(t.dtype(), shape);
  const std::int64_t per_row = t.numel() / std::max<std::int64_t>(t.size(0), 1);
  for (std::int64_t i = 0; i < out.numel(); ++i) out.set(i, t.get(begin * per_row + i));
  return out;
}

template <typename T>
std::vector<T> select(const std::vector<T>& values, const Ints& index) {
  std::vector<T> out;
  for (std::int64_t g : index) out.push_back(values[static_cast<std::size_t>(g)]);
  return out;
}

}  // namespace cplab::simtest
