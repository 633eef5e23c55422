#pragma once
// What the shard comparison (shard_check.cpp) and its table rules (seqlens_rules.cpp) share: a
// Difference of a whole key, the "rank r key" that leads every line, and whether a shard holds a
// key at all.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "check/shard_check.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::check {

inline constexpr const char* kAttentionMask = "attention_mask";

inline bool any_shard_holds(const std::vector<io::TensorFile>& shards, const std::string& key) {
  return std::any_of(shards.begin(), shards.end(),
                     [&](const io::TensorFile& f) { return f.tensors.count(key) != 0; });
}

inline Difference key_difference(std::int64_t rank, const std::string& key, DiffKind kind,
                                 std::string text) {
  Difference d;
  d.rank = rank;
  d.key = key;
  d.kind = kind;
  d.text = std::move(text);
  return d;
}

inline std::string lead(std::int64_t rank, const std::string& key) {
  return rank >= 0 ? fmt::format("rank {} {}", rank, key) : "gathered " + key;
}

// A difference into the outcome, with what it adds to the score its conventions are ranked by.
inline void add_difference(Outcome& out, Difference d, std::int64_t score) {
  out.diffs.push_back(std::move(d));
  out.score += score;
}

}  // namespace cplab::check
