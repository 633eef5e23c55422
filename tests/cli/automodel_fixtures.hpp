#pragma once
// What the files a user saves around NeMo Automodel's CP sharders are made of, key for key,
// dtype for dtype (the dicts saved as they are, non-tensor entries included): each sharder's own
// builder lives with the layout it follows (layouts/thd_test.cpp: make_cp_batch_for_te,
// layouts/head_tail_test.cpp: make_cp_batch_and_ctx). Token values identify their token:
// input_ids 1000 + b·S + s, labels 2000 + b·S + s (pads 0 and -100), so that a wrong slot says
// which token it holds.
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
