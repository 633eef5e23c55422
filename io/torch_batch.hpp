#pragma once
// Batches saved with Python's torch.save, read into cplab's Batch (and written, for fixtures).
//
// File format: a dict (zip format, the default of torch.save) of
//   token-aligned keys   input_ids [B,S] int | inputs_embeds [B,S,H] float, labels [B,S],
//                        position_ids [B,S] / [1,S] / [3,B,S], loss_mask, valid, padding_mask
//   "extra_tokens"       a dict of further token-aligned [B,S,...] tensors (pad value 0)
//   "passthrough"        a dict of non-token tensors handed to every rank unchanged
//   "seq_lens"           packed rows: int [B, n] real document lengths, then any negative value
//                        (-1, Automodel's -1000) past a row's last document
//   "seq_lens_padded"    optional, same shape: the length each document occupies in the row
// Entries of any other key that are not tensors (strings, ints, dicts: Automodel keeps
// `qkv_format: "thd"` in its batches) are skipped and reported in `skipped`; a known key that is
// not a tensor is refused. Nested dicts and lists need two or more entries (a limit of torch's C++
// unpickler).
#include <map>
#include <string>

#include "core/batch.hpp"

namespace cplab::io {

// True when this build can read and write torch files.
bool torch_available();
// Non-tensor entries a file held: their key ("outer.inner" inside a nested dict) → their kind.
using SkippedEntries = std::map<std::string, std::string>;
Batch load_torch_batch(const std::string& path, SkippedEntries* skipped = nullptr);
void save_torch_batch(const Batch& batch, const std::string& path);

}  // namespace cplab::io
