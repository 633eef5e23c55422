#pragma once
// Batches and the shards a production sharder would write for them, built here by the formulas of
// SPEC §3 (not by cplab's reference), and saved with libtorch's pickle_save like torch.save does.
// Token values identify their token: input_ids 1000 + caller position, labels 2000 + it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/torch_batch.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::testing {

using Ints = std::vector<std::int64_t>;
using ShardDict = std::map<std::string, Tensor>;

inline Tensor row_tensor(const Ints& values) {
  return Tensor::from<std::int64_t>({1, static_cast<std::int64_t>(values.size())}, values);
}

inline Ints tensor_values(const Tensor& t) { return t.to(DType::i64).to_vector<std::int64_t>(); }

// One packed row of documents back to back (no caller padding), S = their sum.
inline Batch packed_batch(const Ints& docs, bool with_positions = false) {
  std::int64_t len = 0;
  for (std::int64_t n : docs) len += n;
  Ints ids, labels, positions;
  for (std::int64_t t = 0; t < len; ++t) {
    ids.push_back(1000 + t);
    labels.push_back(2000 + t);
  }
  for (std::int64_t n : docs) {
    for (std::int64_t j = 0; j < n; ++j) positions.push_back(j);
  }
  Batch batch;
  batch.add(keys::input_ids, row_tensor(ids));
  batch.add(keys::labels, row_tensor(labels));
  if (with_positions) batch.add(keys::position_ids, row_tensor(positions));
  batch.seq_lens = {docs};
  return batch;
}

// thd on C ranks (SPEC §3): every document padded to 2C at its end, head chunk r and tail chunk
// 2C-1-r of each document, rank-major; pads hold id 0, label -100 and continuing positions; local
// cu_seqlens = cu_seqlens_padded / C. `global_of[r][k]` is the global slot of local slot k.
struct ThdShards {
  std::vector<ShardDict> ranks;
  std::vector<Ints> global_of;
  Ints global_ids;  // the padded global stream of input_ids
};

inline ThdShards thd_shards(const Ints& docs, std::int64_t cp) {
  ThdShards out;
  Ints ids, labels, positions, cu = {0};
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;  // start, padded length
  std::int64_t caller = 0;
  for (std::int64_t n : docs) {
    const std::int64_t padded = (n + 2 * cp - 1) / (2 * cp) * (2 * cp);
    spans.emplace_back(cu.back(), padded);
    for (std::int64_t j = 0; j < padded; ++j) {
      ids.push_back(j < n ? 1000 + caller + j : 0);
      labels.push_back(j < n ? 2000 + caller + j : -100);
      positions.push_back(j);
    }
    caller += n;
    cu.push_back(cu.back() + padded);
  }
  out.global_ids = ids;
  Ints local_cu;
  for (std::int64_t v : cu) local_cu.push_back(v / cp);
  for (std::int64_t r = 0; r < cp; ++r) {
    Ints index;
    for (const auto& [start, padded] : spans) {
      const std::int64_t c = padded / (2 * cp);
      for (std::int64_t k = 0; k < c; ++k) index.push_back(start + r * c + k);
      for (std::int64_t k = 0; k < c; ++k) index.push_back(start + (2 * cp - 1 - r) * c + k);
    }
    Ints local_ids, local_labels, local_positions;
    for (std::int64_t g : index) {
      local_ids.push_back(ids[g]);
      local_labels.push_back(labels[g]);
      local_positions.push_back(positions[g]);
    }
    ShardDict dict;
    dict[keys::input_ids] = row_tensor(local_ids);
    dict[keys::labels] = row_tensor(local_labels);
    dict[keys::position_ids] = row_tensor(local_positions);
    std::vector<std::int32_t> cu32(local_cu.begin(), local_cu.end());
    dict["cu_seqlens"] = Tensor::from<std::int32_t>({static_cast<std::int64_t>(cu32.size())}, cu32);
    out.ranks.push_back(std::move(dict));
    out.global_of.push_back(index);
  }
  return out;
}

// head-tail on C ranks of a BSHD row of S tokens, as Automodel pads it (pad policy zero: ids and
// positions of the added slots are 0, labels -100): L = ceil_to(S, 2C), chunks r and 2C-1-r.
inline std::vector<ShardDict> head_tail_zero_pad_shards(std::int64_t seq, std::int64_t cp) {
  const std::int64_t len = (seq + 2 * cp - 1) / (2 * cp) * (2 * cp), c = len / (2 * cp);
  std::vector<ShardDict> out;
  for (std::int64_t r = 0; r < cp; ++r) {
    Ints ids, labels, positions;
    for (std::int64_t chunk : {r, 2 * cp - 1 - r}) {
      for (std::int64_t g = chunk * c; g < (chunk + 1) * c; ++g) {
        ids.push_back(g < seq ? 1000 + g : 0);
        labels.push_back(g < seq ? 2000 + g : -100);
        positions.push_back(g < seq ? g : 0);
      }
    }
    out.push_back({{keys::input_ids, row_tensor(ids)},
                   {keys::labels, row_tensor(labels)},
                   {keys::position_ids, row_tensor(positions)}});
  }
  return out;
}

inline Batch bshd_batch(std::int64_t seq) {
  Ints ids, labels;
  for (std::int64_t t = 0; t < seq; ++t) {
    ids.push_back(1000 + t);
    labels.push_back(2000 + t);
  }
  Batch batch;
  batch.add(keys::input_ids, row_tensor(ids));
  batch.add(keys::labels, row_tensor(labels));
  return batch;
}

}  // namespace cplab::testing
