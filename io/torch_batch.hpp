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
// Nested dicts and lists need two or more entries (a limit of torch's C++ unpickler).
#include <string>

#include "reference/types/batch.hpp"

namespace cplab::io {

// True when this build can read and write torch files.
bool torch_available();
Batch load_torch_batch(const std::string& path);
void save_torch_batch(const Batch& batch, const std::string& path);

}  // namespace cplab::io
