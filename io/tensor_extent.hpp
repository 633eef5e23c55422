#pragma once
// How many bytes of its storage a strided tensor reads, and how many its dense copy holds, computed
// overflow-safe. A torch.save file names each tensor's sizes, strides and storage offset
// separately from the storage's bytes; a tensor whose view reaches past its storage is a malformed
// file, refused before it is read. A view can also repeat its storage's elements (expand() makes
// stride 0): 8 bytes of storage may declare 10^10 elements, which a dense copy would allocate.
#include <cstdint>
#include <optional>
#include <span>

namespace cplab::io {

// (offset + Σ (size_i - 1) · stride_i + 1) · itemsize, 0 for an empty tensor; nullopt when a size,
// stride or the offset is negative, or the arithmetic overflows.
inline std::optional<std::uint64_t> strided_extent_bytes(std::span<const std::int64_t> sizes,
                                                         std::span<const std::int64_t> strides,
                                                         std::int64_t offset,
                                                         std::int64_t itemsize) {
  if (sizes.size() != strides.size() || offset < 0 || itemsize <= 0) return std::nullopt;
  std::int64_t last = offset;  // the largest element index the view reads
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) return std::nullopt;
    if (sizes[i] == 0) return std::uint64_t{0};
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::int64_t step = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &step)) return std::nullopt;
    if (__builtin_add_overflow(last, step, &last)) return std::nullopt;
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, itemsize, &bytes))
    return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

// Π size_i · itemsize: the bytes of the tensor's dense copy; nullopt when a size is negative or
// the product overflows.
inline std::optional<std::uint64_t> dense_bytes(std::span<const std::int64_t> sizes,
                                                std::int64_t itemsize) {
  if (itemsize <= 0) return std::nullopt;
  bool empty = false;
  for (std::int64_t size : sizes) {
    if (size < 0) return std::nullopt;  // wherever it is, even after a 0
    empty = empty || size == 0;
  }
  if (empty) return std::uint64_t{0};
  std::int64_t bytes = itemsize;
  for (std::int64_t size : sizes) {
    if (__builtin_mul_overflow(bytes, size, &bytes)) return std::nullopt;
  }
  return static_cast<std::uint64_t>(bytes);
}

// What the dense copies of one file's tensors may hold beyond the file's own size: room for the
// views that repeat their storage as real batches have them (position_ids saved as an expanded
// arange), never a multi-gigabyte allocation declared by a few bytes.
inline constexpr std::uint64_t kMaxCopiedBytesBeyondFile = std::uint64_t{1} << 30;

}  // namespace cplab::io
