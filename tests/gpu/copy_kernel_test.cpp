// copy_tokens on the device against a host loop written from the layout's definition: every
// element size, token width, alignment (so every vector width runs), plain and blocked sides,
// shared and microbatch rows, fills, and out-of-range sources reported.
#include <cstdint>
#include <random>

#include "gpu/host/copy_plan.hpp"
#include "gpu/kernels/copy_tokens.hpp"
#include "gpu_test.hpp"

namespace cplab::gputest {
namespace {

using gpu::DeviceBuffer;

struct Case {
  std::int64_t element, inner, misalign;  // bytes per element, elements per token, pointer offset
  std::int64_t src_block, dst_block;      // 0 or the block size
  std::int64_t src_rows, src_row_begin, source_rows;
};

// Index of token t of slice (o, b) in a plain [outer, rows, tokens] or blocked
// [tokens/blk][outer·rows][blk] tensor.
std::int64_t at(std::int64_t o, std::int64_t b, std::int64_t rows, std::int64_t outer,
                std::int64_t t, std::int64_t tokens, std::int64_t blk) {
  if (blk == 0) return (o * rows + b) * tokens + t;
  return ((t / blk) * outer * rows + o * rows + b) * blk + t % blk;
}

void run_case(const Case& c, std::mt19937& rng) {
  const std::int64_t outer = 2, rows = 3, src_tokens = 12, dst_tokens = 8;
  const std::int64_t token_bytes = c.element * c.inner;
  const std::int64_t src_slices = outer * c.src_rows;
  std::vector<std::uint8_t> src(static_cast<std::size_t>(src_slices * src_tokens * token_bytes));
  for (auto& byte : src) byte = static_cast<std::uint8_t>(rng());
  std::vector<std::int64_t> source(static_cast<std::size_t>(c.source_rows * dst_tokens));
  for (auto& s : source) s = static_cast<std::int64_t>(rng() % (src_tokens + 1)) - 1;  // -1 = fill
  const std::uint64_t fill_value = 0x8877665544332211ull;
  gpu::TokenCopy copy;
  copy.outer = outer;
  copy.rows = rows;
  copy.src_rows = c.src_rows;
  copy.src_row_begin = c.src_row_begin;
  copy.token_bytes = token_bytes;
  copy.element_bytes = c.element;
  copy.src_tokens = src_tokens;
  copy.src_block = c.src_block;
  copy.dst_tokens = dst_tokens;
  copy.dst_block = c.dst_block;
  copy.source_rows = c.source_rows;
  copy.fill = gpu::fill_pattern(&fill_value, c.element);

  const std::size_t dst_bytes = static_cast<std::size_t>(outer * rows * dst_tokens * token_bytes);
  DeviceBuffer d_src(src.size() + 16), d_dst(dst_bytes + 16),
      d_source = gpu::upload_vector(source, nullptr);
  const gpu::ErrorSlot bad(nullptr);
  auto* src_ptr = static_cast<std::uint8_t*>(d_src.get()) + c.misalign;
  auto* dst_ptr = static_cast<std::uint8_t*>(d_dst.get()) + c.misalign;
  gpu::copy_bytes(src_ptr, src.data(), src.size(), nullptr);
  copy.src = src_ptr;
  copy.dst = dst_ptr;
  copy.source = d_source.as<std::int64_t>();
  copy.bad = bad.get();
  gpu::copy_tokens(copy, nullptr);
  std::vector<std::uint8_t> got(dst_bytes);
  gpu::copy_bytes(got.data(), dst_ptr, dst_bytes, nullptr);
  gpu::synchronize(nullptr);
  EXPECT_EQ(bad.first_bad(nullptr), -1);

  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t b = 0; b < rows; ++b) {
      for (std::int64_t t = 0; t < dst_tokens; ++t) {
        const std::int64_t s = source[(c.source_rows == 1 ? 0 : b) * dst_tokens + t];
        const std::int64_t src_b = c.src_rows == 1 ? 0 : c.src_row_begin + b;
        const std::uint8_t* want =
            s < 0 ? nullptr
                  : src.data() +
                        at(o, src_b, c.src_rows, outer, s, src_tokens, c.src_block) * token_bytes;
        const std::uint8_t* have =
            got.data() + at(o, b, rows, outer, t, dst_tokens, c.dst_block) * token_bytes;
        for (std::int64_t i = 0; i < token_bytes; ++i) {
          const auto expected =
              want ? want[i] : static_cast<std::uint8_t>(fill_value >> (8 * (i % c.element)));
          ASSERT_EQ(have[i], expected)
              << "element " << c.element << " inner " << c.inner << " misalign " << c.misalign
              << " blocks " << c.src_block << "/" << c.dst_block << " token (" << o << "," << b
              << "," << t << ") byte " << i;
        }
      }
    }
  }
}

class CopyTokens : public GpuTest {};

TEST_F(CopyTokens, matches_the_host_loop_for_every_width_layout_and_row_mapping) {
  std::mt19937 rng(7);
  for (std::int64_t element : {1, 2, 4, 8}) {
    for (std::int64_t inner : {1, 3, 8, 64}) {
      for (std::int64_t misalign : {std::int64_t{0}, element}) {
        for (std::int64_t src_block : {0, 4}) {
          for (std::int64_t dst_block : {0, 2}) {
            run_case({element, inner, misalign, src_block, dst_block, 3, 0, 3}, rng);  // plain rows
            run_case({element, inner, misalign, src_block, dst_block, 1, 0, 1},
                     rng);  // one shared row
            run_case({element, inner, misalign, src_block, dst_block, 5, 2, 1},
                     rng);  // a microbatch's rows
          }
        }
      }
    }
  }
}

TEST_F(CopyTokens, reports_the_first_out_of_range_source_and_fills_it) {
  const std::vector<std::int64_t> src = {10, 11, 12, 13};
  const std::vector<std::int64_t> source = {3, 4, 0, -7};  // 4 and -7 are out of range
  DeviceBuffer d_src = gpu::upload_vector(src, nullptr),
               d_source = gpu::upload_vector(source, nullptr), d_dst(32);
  const gpu::ErrorSlot bad(nullptr);
  const std::int64_t fill = -1;
  gpu::TokenCopy copy{.src = d_src.get(),
                      .dst = d_dst.get(),
                      .token_bytes = 8,
                      .element_bytes = 8,
                      .src_tokens = 4,
                      .dst_tokens = 4,
                      .source = d_source.as<std::int64_t>(),
                      .fill = gpu::fill_pattern(&fill, 8),
                      .bad = bad.get()};
  gpu::copy_tokens(copy, nullptr);
  EXPECT_EQ(fetch<std::int64_t>(d_dst, 4), (std::vector<std::int64_t>{13, -1, 10, -1}));
  EXPECT_EQ(bad.first_bad(nullptr), 1);
}

}  // namespace
}  // namespace cplab::gputest
