#pragma once
// Any torch.save file as named tensors: what a production sharder wrote for one rank (its sharded
// batch dict, with keys such as cu_seqlens that are not token-aligned), or a gather's output. The
// batch reader (torch_batch.hpp) gives token keys their meaning; this one only reads.
#include <cstdint>
#include <map>
#include <string>
#include <variant>

#include "core/tensor.hpp"

namespace cplab::io {

struct TensorFile {
  // Top-level tensors by key; entries of a nested dict by their own key (extra_tokens, ...), or
  // "outer.inner" when that name is taken. A file holding one bare tensor has it under "".
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> skipped;  // non-tensor entries (ints, strings) → their kind
};

// Throws cplab::Error with one line when the file cannot be opened or is not a torch.save zip of a
// tensor or a dict; this build without libtorch says so.
TensorFile load_torch_tensors(const std::string& path);
// A flat dict of tensors, readable by Python's torch.load (test fixtures, gathered outputs).
void save_torch_tensors(const std::map<std::string, Tensor>& tensors, const std::string& path);
// The same with plain values beside the tensors, as sharders write them (Automodel's
// `qkv_format: "thd"`, `cp_rank: 1`): fixtures of the files users really save.
using DictEntry = std::variant<Tensor, std::string, std::int64_t>;
void save_torch_dict(const std::map<std::string, DictEntry>& entries, const std::string& path);

}  // namespace cplab::io
