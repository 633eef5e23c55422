// What a torch.save file declares, from the fuzzer: a token tensor's sizes, strides, offset and
// storage bytes, and packed rows' seq_lens. The extent check must refuse every view that reaches
// past its storage, the dense-copy size must be exact or refused on overflow (it bounds what a
// view repeating its storage may allocate); a batch that validates must plan within the limits
// (small ones are planned).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"
#include "io/tensor_extent.hpp"
#include "reference/plan.hpp"

namespace {

__extension__ typedef __int128 Wide;  // exact products of two int64

struct Reader {
  const std::uint8_t* data;
  std::size_t size, at = 0;
  std::int64_t next() {  // 8 bytes, little-endian; zeros past the end
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{at < size ? data[at++] : 0u} << (8 * i);
    return static_cast<std::int64_t>(v);
  }
  std::int64_t small(std::int64_t mod) {
    return static_cast<std::int64_t>(next() & 0x7fffffff) % mod;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  // A strided view and its storage.
  const std::size_t dims = static_cast<std::size_t>(in.small(5));
  std::vector<std::int64_t> sizes(dims), strides(dims);
  for (std::size_t i = 0; i < dims; ++i) {
    sizes[i] = in.next();
    strides[i] = in.next();
  }
  const std::int64_t offset = in.next(), itemsize = in.small(9);
  const auto bytes = cplab::io::strided_extent_bytes(sizes, strides, offset, itemsize);
  if (bytes && *bytes > 0) {
    // Recompute in 128 bits: the checked result must be exact.
    Wide last = offset;
    for (std::size_t i = 0; i < dims; ++i) last += static_cast<Wide>(sizes[i] - 1) * strides[i];
    if (static_cast<Wide>(*bytes) != (last + 1) * itemsize) __builtin_trap();
  }
  // The dense copy's bytes: exact, or refused exactly when the itemsize or a size is negative
  // (or the itemsize 0, which no dtype has) or the product leaves int64.
  const auto copy = cplab::io::dense_bytes(sizes, itemsize);
  bool has_negative = false, has_zero = false;
  for (std::int64_t s : sizes) {
    has_negative |= s < 0;
    has_zero |= s == 0;
  }
  if (itemsize <= 0 || has_negative) {
    if (copy) __builtin_trap();
  } else if (has_zero) {
    if (!copy || *copy != 0) __builtin_trap();
  } else {
    Wide product = itemsize;  // stops growing once past int64: stays below 2^126
    for (std::int64_t s : sizes) {
      if (product <= INT64_MAX) product *= s;
    }
    const bool fits = product <= INT64_MAX;
    if (fits != copy.has_value() || (fits && static_cast<Wide>(*copy) != product)) __builtin_trap();
  }
  // A packed batch: B rows of S, each with documents.
  try {
    const std::int64_t rows = 1 + in.small(3), seq = in.small(300);
    cplab::Batch batch;
    batch.add(cplab::keys::input_ids, cplab::Tensor(cplab::DType::i64, {rows, seq}));
    for (std::int64_t b = 0; b < rows; ++b) {
      auto& lens = batch.seq_lens.emplace_back();
      for (std::int64_t d = in.small(6); d > 0; --d) lens.push_back(in.next() >> in.small(64));
    }
    cplab::LayoutSpec spec;
    // Every registered layout, each of its options small.
    const std::vector<std::string> names = cplab::reference::layout_names();
    spec.layout =
        names[static_cast<std::size_t>(in.small(static_cast<std::int64_t>(names.size())))];
    spec.cp = 1 + in.small(16);
    for (const auto* option : cplab::layouts::options_of(spec.layout)) {
      option->set(spec, option->is_switch ? in.small(2) : 1 + in.small(8));
    }
    spec.microbatches = rows;
    validate_batch(batch);
    const cplab::ShardPlan plan = cplab::reference::plan(spec, batch);
    for (const cplab::RowPlan& row : plan.rows) {
      if (row.padded_len > cplab::limits::kMaxPaddedLen) __builtin_trap();
    }
  } catch (const cplab::Error&) {
  }
  return 0;
}
