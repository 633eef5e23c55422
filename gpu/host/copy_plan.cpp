#include "gpu/host/copy_plan.hpp"

#include <cstring>

#include "core/error.hpp"

namespace cplab::gpu {

std::int64_t copy_width(std::uintptr_t src, std::uintptr_t dst, std::int64_t token_bytes) {
  for (std::int64_t w : {16, 8, 4, 2}) {
    const auto uw = static_cast<std::uintptr_t>(w);
    if (token_bytes % w == 0 && src % uw == 0 && dst % uw == 0) return w;
  }
  return 1;
}

CopyPlan plan_copy(std::uintptr_t src, std::uintptr_t dst, std::int64_t token_bytes) {
  CPLAB_CHECK(token_bytes >= 1, "copy_tokens: a token slice must have at least 1 byte, got {}",
              token_bytes);
  CopyPlan plan;
  plan.width = copy_width(src, dst, token_bytes);
  plan.chunks = token_bytes / plan.width;
  // Smallest power of two covering the pieces, so one pass of the threads moves the whole token.
  while (plan.threads_per_token < plan.chunks && plan.threads_per_token < kCopyBlockThreads) {
    plan.threads_per_token *= 2;
  }
  plan.tokens_per_block = kCopyBlockThreads / plan.threads_per_token;
  return plan;
}

std::int64_t grid_blocks(std::int64_t items, std::int64_t per_block, std::int64_t max_blocks) {
  CPLAB_CHECK(per_block >= 1 && max_blocks >= 1,
              "grid_blocks: per_block {} and max_blocks {} must be >= 1", per_block, max_blocks);
  if (items <= 0) return 1;
  const std::int64_t blocks = (items + per_block - 1) / per_block;
  return blocks < max_blocks ? blocks : max_blocks;
}

std::array<std::uint8_t, 16> fill_pattern(const void* element, std::int64_t element_bytes) {
  CPLAB_CHECK(element_bytes == 1 || element_bytes == 2 || element_bytes == 4 || element_bytes == 8,
              "fill_pattern: element size {} is not 1, 2, 4 or 8 bytes", element_bytes);
  std::array<std::uint8_t, 16> pattern{};
  for (std::int64_t at = 0; at < 16; at += element_bytes) {
    std::memcpy(pattern.data() + at, element, static_cast<std::size_t>(element_bytes));
  }
  return pattern;
}

}  // namespace cplab::gpu

namespace cplab::gpu {

std::int64_t loss_vector_elems(std::uintptr_t logits, std::uintptr_t grad, std::int64_t vocab,
                               std::int64_t logits_bytes) {
  CPLAB_CHECK(logits_bytes == 2 || logits_bytes == 4,
              "fused loss: logits of {} bytes; supported: f32, bf16", logits_bytes);
  const std::int64_t n = 16 / logits_bytes;
  return vocab % n == 0 && logits % 16 == 0 && grad % 16 == 0 ? n : 1;
}

}  // namespace cplab::gpu
