#pragma once
// The files a user saves around NeMo Automodel's CP sharders, written here key for key, dtype for
// dtype, as those sharders produce them (the dicts saved as they are, non-tensor entries included):
//
// - THD (`make_cp_batch_for_te`): the batch holds packed rows [B, S] whose documents the collater
//   padded to multiples of 2C (`seq_lens`, `seq_lens_padded` [B, n] ending in -1000) and the entry
//   `qkv_format: "thd"`. Each rank holds input_ids, labels and position_ids cut by TE's
//   `thd_get_partitioned_indices` (head and tail chunk of every document), `cu_seqlens`: the row's
//   whole padded table as int32, `max_seqlen`: an int32 scalar, the longest padded document,
//   `padding_mask`: `input_ids == pad id`, and `qkv_format`, `cp_size`, `cp_rank` as plain values.
//   With one row the tokens are [ℓ] and the table [n+1]; with several (num_chunks = B) every key is
//   stacked: tokens [B, ℓ], `cu_seqlens` [B, n_max + 1] right-filled with -1000, `max_seqlen` [B].
// - head-tail (`make_cp_batch_and_ctx`): the batch holds BSHD rows with an HF `attention_mask`
//   (1 on real tokens, right padding); the sharder pops it and gives each rank `padding_mask =
//   ~attention_mask` instead, pads the row to 2C (ids 0, labels -100, positions 0, padding_mask
//   True) and cuts chunks r and 2C-1-r.
// Token values identify their token: input_ids 1000 + b·S + s, labels 2000 + b·S + s (pads 0 and
// -100), so that a wrong slot says which token it holds.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/torch_tensors.hpp"

namespace cplab::testing::automodel {

using Ints = std::vector<std::int64_t>;
using Dict = std::map<std::string, io::DictEntry>;

inline constexpr std::int64_t kFiller = -1000;

inline std::int64_t ceil_to(std::int64_t n, std::int64_t unit) {
  return (n + unit - 1) / unit * unit;
}

inline Tensor ints(Shape shape, const Ints& values) {
  return Tensor::from<std::int64_t>(shape, values);
}

inline Tensor int32s(Shape shape, const Ints& values) {
  return Tensor::from<std::int64_t>(shape, values).to(DType::i32);
}

// [rows, width] of `rows`, each right-filled with `fill`.
inline Tensor filled_rows(const std::vector<Ints>& rows, std::int64_t fill, DType dtype) {
  std::size_t width = 0;
  for (const Ints& r : rows) width = std::max(width, r.size());
  Ints flat;
  for (const Ints& r : rows) {
    flat.insert(flat.end(), r.begin(), r.end());
    flat.insert(flat.end(), width - r.size(), fill);
  }
  return ints({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)}, flat)
      .to(dtype);
}

struct Files {
  Dict batch;
  std::vector<Dict> ranks;
  std::vector<std::vector<Ints>> global_of;  // [row][rank]: the global slot of each local slot
};

// make_cp_batch_for_te on C ranks: every row holds `docs[b]`, each padded to 2C, the last padded
// further so that every row has S slots (S a multiple of 2C, at least the padded documents).
inline Files thd(const std::vector<Ints>& docs, std::int64_t cp, std::int64_t seq) {
  const auto rows = static_cast<std::int64_t>(docs.size());
  Files out;
  Ints ids, labels, positions;
  std::vector<Ints> lens, padded_lens, cu_rows;
  Ints max_seqlen;
  out.global_of.resize(docs.size());
  std::vector<Ints> local_ids(cp), local_labels(cp), local_positions(cp);
  for (std::int64_t b = 0; b < rows; ++b) {
    Ints padded;
    for (std::int64_t n : docs[b]) padded.push_back(ceil_to(n, 2 * cp));
    std::int64_t total = 0;
    for (std::int64_t p : padded) total += p;
    padded.back() += seq - total;
    Ints cu = {0};
    for (std::size_t i = 0; i < padded.size(); ++i) {
      for (std::int64_t j = 0; j < padded[i]; ++j) {
        const std::int64_t s = cu.back() + j;
        const bool real = j < docs[b][i];
        ids.push_back(real ? 1000 + b * seq + s : 0);
        labels.push_back(real ? 2000 + b * seq + s : -100);
        positions.push_back(j);
      }
      cu.push_back(cu.back() + padded[i]);
    }
    for (std::int64_t r = 0; r < cp; ++r) {
      Ints index;
      for (std::size_t i = 0; i < padded.size(); ++i) {
        const std::int64_t c = padded[i] / (2 * cp);
        for (std::int64_t chunk : {r, 2 * cp - 1 - r}) {
          for (std::int64_t k = 0; k < c; ++k) index.push_back(cu[i] + chunk * c + k);
        }
      }
      for (std::int64_t g : index) {
        local_ids[r].push_back(ids[b * seq + g]);
        local_labels[r].push_back(labels[b * seq + g]);
        local_positions[r].push_back(positions[b * seq + g]);
      }
      out.global_of[b].push_back(index);
    }
    lens.push_back(docs[b]);
    padded_lens.push_back(padded);
    cu_rows.push_back(cu);
    max_seqlen.push_back(*std::max_element(padded.begin(), padded.end()));
  }
  out.batch = {{"input_ids", ints({rows, seq}, ids)},
               {"labels", ints({rows, seq}, labels)},
               {"position_ids", ints({rows, seq}, positions)},
               {"seq_lens", filled_rows(lens, kFiller, DType::i64)},
               {"seq_lens_padded", filled_rows(padded_lens, kFiller, DType::i64)},
               {"qkv_format", std::string("thd")}};
  const std::int64_t local = seq / cp;
  const Shape tokens = rows == 1 ? Shape{local} : Shape{rows, local};
  for (std::int64_t r = 0; r < cp; ++r) {
    std::vector<bool> pad;
    for (std::int64_t id : local_ids[r]) pad.push_back(id == 0);
    Dict rank = {{"input_ids", ints(tokens, local_ids[r])},
                 {"labels", ints(tokens, local_labels[r])},
                 {"position_ids", ints(tokens, local_positions[r])},
                 {"padding_mask", Tensor::from_bools(tokens, pad)},
                 {"qkv_format", std::string("thd")},
                 {"cp_size", cp},
                 {"cp_rank", r}};
    if (rows == 1) {
      rank["cu_seqlens"] = int32s({static_cast<std::int64_t>(cu_rows[0].size())}, cu_rows[0]);
      rank["max_seqlen"] = int32s({}, {max_seqlen[0]});
    } else {
      rank["cu_seqlens"] = filled_rows(cu_rows, kFiller, DType::i32);
      rank["max_seqlen"] = int32s({rows}, max_seqlen);
    }
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

// make_cp_batch_and_ctx (head-tail) on C ranks: row b of S slots has real[b] real tokens, then
// right padding (attention_mask 0, id 0, label -100); the sharder pads the row to L = ceil_to(S,
// 2C) and hands out padding_mask in place of attention_mask.
inline Files head_tail(const Ints& real, std::int64_t seq, std::int64_t cp) {
  const auto rows = static_cast<std::int64_t>(real.size());
  const std::int64_t len = ceil_to(seq, 2 * cp), c = len / (2 * cp);
  Files out;
  Ints ids, labels, attention;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t s = 0; s < seq; ++s) {
      const bool is_real = s < real[b];
      ids.push_back(is_real ? 1000 + b * seq + s : 0);
      labels.push_back(is_real ? 2000 + b * seq + s : -100);
      attention.push_back(is_real ? 1 : 0);
    }
  }
  out.batch = {{"input_ids", ints({rows, seq}, ids)},
               {"labels", ints({rows, seq}, labels)},
               {"attention_mask", ints({rows, seq}, attention)}};
  out.global_of.assign(static_cast<std::size_t>(rows), {});
  for (std::int64_t r = 0; r < cp; ++r) {
    Ints local_ids, local_labels, local_positions;
    std::vector<bool> pad;
    for (std::int64_t b = 0; b < rows; ++b) {
      Ints index;
      for (std::int64_t chunk : {r, 2 * cp - 1 - r}) {
        for (std::int64_t g = chunk * c; g < (chunk + 1) * c; ++g) index.push_back(g);
      }
      for (std::int64_t g : index) {
        const bool added = g >= seq;
        local_ids.push_back(added ? 0 : ids[b * seq + g]);
        local_labels.push_back(added ? -100 : labels[b * seq + g]);
        local_positions.push_back(added ? 0 : g);
        pad.push_back(added || attention[b * seq + g] == 0);
      }
      out.global_of[b].push_back(index);
    }
    out.ranks.push_back({{"input_ids", ints({rows, 2 * c}, local_ids)},
                         {"labels", ints({rows, 2 * c}, local_labels)},
                         {"position_ids", ints({rows, 2 * c}, local_positions)},
                         {"padding_mask", Tensor::from_bools({rows, 2 * c}, pad)}});
  }
  return out;
}

// The ints a tensor entry holds, and the entry rewritten with new ones (same shape and dtype).
inline Ints values(const Dict& dict, const std::string& key) {
  return std::get<Tensor>(dict.at(key)).to(DType::i64).to_vector<std::int64_t>();
}

inline void set_values(Dict& dict, const std::string& key, const Ints& new_values) {
  const Tensor& old = std::get<Tensor>(dict.at(key));
  if (old.dtype() == DType::b8) {
    dict[key] =
        Tensor::from_bools(old.shape(), std::vector<bool>(new_values.begin(), new_values.end()));
  } else {
    dict[key] = ints(old.shape(), new_values).to(old.dtype());
  }
}

}  // namespace cplab::testing::automodel
