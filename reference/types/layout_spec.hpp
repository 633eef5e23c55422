#pragma once
// What the caller asks for: which layout, on how many CP ranks, with which options.
#include <cstdint>
#include <string>

namespace cplab {

enum class PadPolicy : std::uint8_t {
  spec,  // SPEC §2: ids ← pad token id, positions continue, labels IGNORE, masks off
  zero,  // Automodel's head-tail path: ids and positions padded with 0 (labels/masks as spec)
};

struct LayoutSpec {
  std::string layout =
      "identity";       // a name in the layout registries (sim/layouts/, reference/layouts/)
  std::int64_t cp = 1;  // C, ranks in the CP group
  std::int64_t pad_multiple = 2;  // m of contiguous: D = C·m
  std::int64_t chunk_size = 512;  // K of magi: the stream is padded to a multiple of K·C
  // magi at C = 1: pad to a multiple of K as MagiAttention's own dispatch does ("identity + chunk
  // padding"), instead of the identity every layout falls back to.
  bool chunk_pad_at_cp1 = false;
  // Pipeline microbatches along the batch axis (SPEC §4; the case key "mb").
  std::int64_t microbatches = 1;
  bool shard_primary = true;  // false: input_ids / inputs_embeds stay global (SPEC §4)
  PadPolicy pad_policy = PadPolicy::spec;
  std::int64_t pad_token_id = 0;
  // R of usp: the ring degree, U = C/R the Ulysses degree (R must divide C; 1: Ulysses only).
  std::int64_t ring_degree = 1;
  // B of ptrr: the stream is cut into blocks of B tokens, balanced by their processing time.
  // torch's flex_attention BlockMask default, 128.
  std::int64_t block_size = 128;
};

// Throws on C < 1, m < 1, K < 1, microbatches < 1, R < 1, B < 1 and unknown layout names.
void validate_spec(const LayoutSpec& spec);
std::string spec_brief(
    const LayoutSpec& spec);  // "thd cp=4" plus the options that differ from defaults

}  // namespace cplab
