#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0; C order; little-endian) as cplab tensors.
//   '<f4' ↔ f32   '<f2' ↔ f16   '<i8' ↔ i64   '<i4' ↔ i32   '|u1' ↔ u8   '|b1' ↔ b8
//   '<f8' is read and narrowed to f32 (cplab computes in f32); it is never written.
// A malformed, truncated or unsupported file is a cplab::Error of one line naming the file.
#include <string>

#include "core/tensor.hpp"

namespace cplab::io::npy {

Tensor read(const std::string& path);
// Writes format 1.0 (header padded to 64 bytes). bf16 has no NumPy dtype and is refused.
void write(const std::string& path, const Tensor& tensor);

}  // namespace cplab::io::npy
