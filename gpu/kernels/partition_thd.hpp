#pragma once
// The thd partition of one packed row on one rank, per local token on the device: one thread per
// token finds its document by binary search of cu_seqlens_padded (local boundaries are
// cu_seqlens_padded / C), then its global slot, position id, document id and whether it is real.
#include <cstdint>

#include "gpu/device.hpp"

namespace cplab::gpu {

struct ThdRow {
  std::int64_t cp = 1;
  std::int64_t rank = 0;
  const std::int64_t* cu_padded = nullptr;  // device, n_docs + 1 entries, each P_i a multiple of 2C
  const std::int64_t* doc_lens = nullptr;   // device, n_docs real lengths (seq_lens)
  std::int64_t n_docs = 0;
  std::int64_t padded_len = 0;  // L = cu_padded[n_docs]
};

// Each output has ℓ = L / C entries; a null output is skipped.
struct ThdTokens {
  std::int64_t* index = nullptr;  // global slot
  std::int64_t* positions =
      nullptr;  // offset in its document (restarting per document, through its padding)
  std::int32_t* doc_ids = nullptr;  // 1-based document
  std::uint8_t* real = nullptr;     // offset < the document's real length
};

void partition_thd(const ThdRow& row, const ThdTokens& out, Stream stream);

}  // namespace cplab::gpu
