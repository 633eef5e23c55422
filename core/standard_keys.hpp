#pragma once
// The keys whose meaning fixes their dtype and rank (SPEC §1): a float or 3-D input_ids is a
// mistaken input, not a batch to shard. Every reader of batches (torch.save files, the Python
// module's dicts) checks its keys with this one function.
#include <string>

#include "core/tensor.hpp"

namespace cplab {

// Throws one line naming the key when a standard key has the wrong dtype or rank; other keys pass.
void check_standard_key(const std::string& key, const Tensor& t);

}  // namespace cplab
