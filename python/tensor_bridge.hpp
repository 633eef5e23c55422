#pragma once
// torch.Tensor <-> cplab::Tensor, and the dicts of them cplab's verbs take and give.
//
// Both ways through DLPack (torch.utils.dlpack), so that the module links no libtorch.
// Out of cplab (results, generated batches): no copy. The torch tensor takes ownership of the
// cplab tensor's bytes (a DLPack capsule whose deleter frees them).
// Into cplab (batches, shards, logits): one copy. cplab's Tensor owns its bytes, so a torch
// tensor's are copied once, strides resolved on the way (a non-contiguous view costs the same).
// A CUDA tensor is refused (one line: pass .cpu()), never copied to the host behind the caller.
// Only dense CPU tensors of the dtypes cplab holds are taken; anything else is one line naming
// the key and what to do.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/tensor.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::python {

bool is_tensor(pybind11::handle obj);
// One copy; throws cplab::Error naming `what` when obj is not a tensor cplab can hold.
Tensor tensor_from_torch(pybind11::handle obj, const std::string& what);
// No copy.
pybind11::object tensor_to_torch(Tensor tensor);
pybind11::object int64s_to_torch(const std::vector<std::int64_t>& values, const Shape& shape);

// A batch dict in the layout of a `cplab check --batch` file: token keys (input_ids or
// inputs_embeds, labels, position_ids, loss_mask, valid, padding_mask), "extra_tokens" and
// "passthrough" dicts, "seq_lens" / "seq_lens_padded" for packed rows. Validated as a file is.
Batch batch_from_dict(pybind11::handle dict, const std::string& what);
// The same layout back (seq_lens padded with -1 past a row's last document).
pybind11::dict batch_to_dict(Batch batch);
// One rank's shard dict: every tensor by its key (nested dicts flattened as `cplab check` reads
// them); entries that are not tensors are noted in `skipped`.
io::TensorFile shard_from_dict(pybind11::handle dict, const std::string& what);

}  // namespace cplab::python
