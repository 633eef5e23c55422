#pragma once
// Host tensors to and from the device, and the token-copy descriptors the verbs build from a
// tensor's token axes ([outer, rows, seq, inner], core/token_moves.hpp).
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "core/token_moves.hpp"
#include "gpu/device.hpp"
#include "gpu/kernels/copy_tokens.hpp"

namespace cplab::gpu {

DeviceBuffer upload_tensor(const Tensor& t, Stream stream);
Tensor download_tensor(const DeviceBuffer& buffer, DType dtype, Shape shape, Stream stream);
// `value` as one element of dtype, repeated into the copy kernel's fill pattern.
std::array<std::uint8_t, 16> fill_of(DType dtype, double value);
// Row-major per-row maps ([rows][n]) as one device array.
DeviceBuffer upload_rows(const std::vector<std::vector<std::int64_t>>& rows, Stream stream);
// The shape of t with its row and seq dims replaced.
Shape token_shape(const Tensor& t, std::int64_t seq_dim, std::int64_t rows, std::int64_t seq);
// A copy of whole tokens of a tensor with these axes: src/dst/source and lengths still to be set.
TokenCopy token_copy(const TokenAxes& axes);
// Checks the copy kernel's error slot: a source index out of range is a bug in what built it.
void check_sources(const ErrorSlot& bad, Stream stream, const char* verb);

}  // namespace cplab::gpu
