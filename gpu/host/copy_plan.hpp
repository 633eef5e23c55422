#pragma once
// Host-side decisions of the token-copy kernel (gpu/kernels/copy_tokens.cu), kept apart from CUDA
// so that the CPU tests run the very functions the launcher calls.
#include <array>
#include <cstdint>

namespace cplab::gpu {

// How one launch of copy_tokens moves its tokens: each token slice is cut into `chunks` pieces of
// `width` bytes (16 when every token start of source and destination is 16-byte aligned, so the
// copy is one 128-bit load and store per piece), and `threads_per_token` threads of a block share a
// token so that small tokens (an int64 id) do not leave most of a block idle.
struct CopyPlan {
  std::int64_t width = 1;              // bytes per piece: 16, 8, 4, 2 or 1
  std::int64_t chunks = 0;             // pieces per token: token_bytes / width
  std::int64_t threads_per_token = 1;  // a power of two, at most block_threads
  std::int64_t tokens_per_block = 1;   // block_threads / threads_per_token
};

inline constexpr std::int64_t kCopyBlockThreads = 256;

// The widest piece w in {16, 8, 4, 2, 1} such that w divides token_bytes and both base addresses
// are w-aligned (then every token start is too, since token starts are multiples of token_bytes).
std::int64_t copy_width(std::uintptr_t src, std::uintptr_t dst, std::int64_t token_bytes);

// Throws when token_bytes < 1.
CopyPlan plan_copy(std::uintptr_t src, std::uintptr_t dst, std::int64_t token_bytes);

// Blocks for a grid-stride launch over `items` work items of `per_block` each, capped so that huge
// inputs loop instead of asking for more blocks than the grid allows. At least 1.
std::int64_t grid_blocks(std::int64_t items, std::int64_t per_block, std::int64_t max_blocks);

// The fill value of a dtype of `element_bytes` (1, 2, 4 or 8), repeated over 16 bytes so that any
// aligned piece of a token at byte offset o is bytes [o mod 16, o mod 16 + width) of the pattern.
std::array<std::uint8_t, 16> fill_pattern(const void* element, std::int64_t element_bytes);

}  // namespace cplab::gpu

namespace cplab::gpu {

// Elements per vector access of the fused loss kernel: one 16-byte load of logits (4 f32 or 8
// bf16) when V is a multiple of that and both rows start 16-byte aligned, else 1 (scalar).
std::int64_t loss_vector_elems(std::uintptr_t logits, std::uintptr_t grad, std::int64_t vocab,
                               std::int64_t logits_bytes);

}  // namespace cplab::gpu
