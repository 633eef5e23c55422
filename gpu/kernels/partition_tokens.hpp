#pragma once
// The partition of one packed row whose documents were re-laid (every slot lies in a document), on
// one rank, per local token on the device: one thread per token takes its global slot from the
// closed-form map, then finds its document by binary search of the document bounds, its position
// (offset in the document) and whether it is real.
#include <cstdint>

#include "gpu/device.hpp"
#include "gpu/kernels/layout_map.hpp"

namespace cplab::gpu {

struct RelaidRow {
  MapView map;  // device arrays
  std::int64_t rank = 0;
  const std::int64_t* doc_bounds = nullptr;  // device, n_docs + 1 entries, the last one L
  const std::int64_t* doc_lens = nullptr;    // device, n_docs real lengths (seq_lens)
  std::int64_t n_docs = 0;
};

// Each output has ℓ = L / C entries; a null output is skipped.
struct RelaidTokens {
  std::int64_t* index = nullptr;      // global slot
  std::int64_t* positions = nullptr;  // offset in its document (through its padding)
  std::int32_t* doc_ids = nullptr;    // 1-based document
  std::uint8_t* real = nullptr;       // offset < the document's real length
};

void partition_tokens(const RelaidRow& row, const RelaidTokens& out, Stream stream);

}  // namespace cplab::gpu
