// The conventions read off the shards before any comparison (shard_conventions.hpp).
#include "check/shard_conventions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "check/shard_keys.hpp"

namespace cplab::check {

std::optional<std::int64_t> read_pad_id(const ShardPlan& plan,
                                        const std::vector<io::TensorFile>& shards) {
  std::map<std::int64_t, std::int64_t> counts;
  for (std::size_t r = 0; r < shards.size(); ++r) {
    const auto it = shards[r].tensors.find(keys::input_ids);
    if (it == shards[r].tensors.end()) continue;
    const Tensor& ids = it->second;
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      const RowPlan& row = plan.rows[b];
      const std::int64_t local = row.local_len();
      if (ids.numel() != local * static_cast<std::int64_t>(plan.rows.size())) continue;
      for (std::int64_t k = 0; k < local; ++k) {
        if (row.caller_pos[row.index[r][k]] >= 0) continue;
        ++counts[static_cast<std::int64_t>(ids.get(static_cast<std::int64_t>(b) * local + k))];
      }
    }
  }
  if (counts.empty()) return std::nullopt;
  return std::max_element(counts.begin(), counts.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

Batch with_derived_masks(const Batch& batch, const std::vector<io::TensorFile>& shards,
                         std::vector<std::string>& notes, bool& padding_for_attention) {
  Batch out = batch;
  const std::int64_t rows = batch.rows(), seq = batch.seq_len();
  padding_for_attention = false;
  for (const char* key : {keys::padding_mask, keys::loss_mask, keys::valid}) {
    if (!any_shard_holds(shards, key) || batch.has(key)) continue;
    const bool is_padding = std::string(key) == keys::padding_mask;
    const bool from_attention = is_padding && batch.has(kAttentionMask);
    std::vector<bool> mask(static_cast<std::size_t>(rows * seq), !batch.packed());
    if (from_attention) {
      const Tensor& attention = batch.at(kAttentionMask);
      for (std::int64_t i = 0; i < rows * seq; ++i) mask[i] = attention.get(i) != 0;
    }
    for (std::int64_t b = 0; b < rows && batch.packed() && !from_attention; ++b) {
      const auto& lens = batch.seq_lens[b];
      const bool padded = !batch.seq_lens_padded.empty() && !batch.seq_lens_padded[b].empty();
      std::int64_t start = 0;
      for (std::size_t i = 0; i < lens.size(); ++i) {
        for (std::int64_t j = 0; j < lens[i]; ++j) mask[b * seq + start + j] = true;
        start += padded ? batch.seq_lens_padded[b][i] : lens[i];
      }
    }
    if (is_padding) mask.flip();
    // The dtype the shards use, so that a bool/uint8 choice is not reported as a difference.
    DType dtype = DType::b8;
    for (const auto& f : shards) {
      if (f.tensors.count(key) != 0) dtype = f.tensors.at(key).dtype();
    }
    out.add(key, Tensor::from_bools({rows, seq}, mask).to(dtype));
    if (from_attention && !any_shard_holds(shards, kAttentionMask)) {
      out.tokens.erase(kAttentionMask);
      padding_for_attention = true;
    } else {
      notes.push_back(fmt::format("{} is not in the batch: expected from its {} ({})", key,
                                  from_attention ? "attention_mask" : "documents",
                                  is_padding ? "true on padding" : "true on real tokens"));
    }
  }
  return out;
}

}  // namespace cplab::check
