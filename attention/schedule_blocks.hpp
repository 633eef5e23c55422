#pragma once
// How one rank's query and key buffers at one step are cut into blocks and each block's mask
// chosen (SPEC §13.2). Every block's pair count is exact: closed forms for full and causal
// blocks, a sorted count for doc-causal ones; nothing here is quadratic in the buffer lengths.
#include <cstdint>
#include <vector>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {

// The row's per-slot facts the masks read, with each slot's document start (documents occupy
// contiguous slots of the stream, so the keys a query may see under the causal mask are slots
// [doc_begin, query]). Under any other mask, the positions in its document a real query may see
// form one range [visible_lo, visible_hi] (SPEC §13.5), from which pairs are counted.
struct SlotFacts {
  const std::vector<std::int32_t>* doc_ids = nullptr;
  const std::vector<std::uint8_t>* real = nullptr;
  std::vector<std::int64_t> doc_begin;  // [L]: first slot of the run of equal ids holding g
  const std::vector<TokenFacts>* tokens = nullptr;
  MaskRule rule;
  std::vector<std::int64_t> visible_lo, visible_hi;  // [L], positions; empty under causal
};
SlotFacts slot_facts(const std::vector<std::int32_t>& doc_ids,
                     const std::vector<std::uint8_t>& real, const std::vector<TokenFacts>& tokens,
                     const MaskRule& rule);

// Pairs (i, j), 0 <= i < n, 0 <= j < m, with j <= i + diagonal.
std::int64_t causal_pairs(std::int64_t n, std::int64_t m, std::int64_t diagonal);

// The blocks of one rank step, given the global slot of every buffer position; throws
// ScheduleTooLarge as soon as it would store more than `max_blocks`.
struct StepBlocks {
  std::vector<ScheduleBlock> blocks;  // mask != skip, query-major
  std::int64_t skipped = 0;
};
// Throws ScheduleTooLarge: more than kMaxScheduleBlocks blocks.
[[noreturn]] void too_many_blocks();

// At least the blocks block_step stores for these buffers (exactly under `runs` and the causal
// mask, at least as many under the others; at most one under `whole`), counted without storing
// any.
std::int64_t count_step_blocks(AttentionBlocking blocking, const std::vector<std::int64_t>& q_slots,
                               const std::vector<std::int64_t>& k_slots, const SlotFacts& facts);
StepBlocks block_step(AttentionBlocking blocking, const std::vector<std::int64_t>& q_slots,
                      const std::vector<std::int64_t>& k_slots, const SlotFacts& facts,
                      std::int64_t max_blocks);

}  // namespace cplab::sim
