#pragma once
// `cplab check`'s engine: the shards a production sharder wrote (one torch.save dict per rank)
// compared with what the reference says each rank must hold under one layout. Every differing
// local slot is found, told by the global position it should hold and the one it holds (found by
// value in the global stream), and runs of slots that are wrong the same way are one Difference.
//
// Conventions that are not bugs (the pad policy, the pad id, whether cu_seqlens are local or the
// global table) are either given or read off the shards; the outcome says which were used.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "core/layout_spec.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::check {

enum class DiffKind : std::uint8_t {
  slot,         // a real slot holds another value than its token's
  pad,          // a slot the layout added holds another value than the pad convention gives
  missing_key,  // the batch has the key, the shard does not
  extra_key,    // the shard has a key the layout does not give a rank
  shape,        // the key's tensor has another shape than the rank's shard
  dtype,        // ... or another dtype
  cu_seqlens,   // local cu_seqlens entries that differ
  max_seqlen,   // a max_seqlen below the largest segment of the rank's cu_seqlens (TE's contract)
};
const char* diff_kind_name(DiffKind kind);

struct Difference {
  std::int64_t rank = -1;  // -1: the gathered tensor
  std::string key;
  DiffKind kind = DiffKind::slot;
  std::int64_t row = 0;
  std::int64_t begin = 0, end = 0;   // local slots (gathered: positions, cu_seqlens: entries)
  std::vector<std::int64_t> should;  // global slot each of them should hold
  std::vector<std::int64_t> holds;   // global slot whose value it holds; -1 none, -2 several
  std::string text;                  // one line, led by rank and key
};

struct Conventions {
  std::optional<std::int64_t> pad_id;  // --pad-id; else read off the shards' pad slots
  std::optional<PadPolicy> policy;     // --pad-policy; else the one that explains the shards best
};

struct Outcome {
  LayoutSpec spec;          // the layout with the pad policy and pad id that were used
  std::string pad_id_from;  // "--pad-id", "the shards' pad slots", "default (no pad slots)"
  bool policy_given = false;
  std::string cu_seqlens;                   // "local", "global", "" when the shards hold none
  std::vector<std::string> cu_conventions;  // one entry per table read (before joining)
  // Conventions of production sharders read off the shards (Automodel's THD output among them):
  std::vector<std::int64_t> cu_fillers;  // values after a row's last cu_seqlens entry (-1000, -1)
  bool max_seqlen_checked = false;       // ranks hold max_seqlen, checked against their cu_seqlens
  bool padding_mask_for_attention_mask = false;  // ranks hold padding_mask (True = pad) in place of
                                                 // the batch's attention_mask
  std::vector<Difference> diffs;
  std::vector<std::string> notes;  // things read differently, not wrong (a [ℓ] read as [1,ℓ])
  std::int64_t score = 0;          // wrong slots + wrong keys + wrong entries: 0 is a match
};

// The name and meaning of each pad policy cplab knows.
struct PolicyInfo {
  PadPolicy policy;
  const char* name;
  const char* meaning;
};
const std::vector<PolicyInfo>& pad_policies();
PadPolicy parse_pad_policy(const std::string& name);  // throws listing the known names

// The shards must be one per rank (spec.cp of them). Packed batches are planned one row per
// microbatch. Throws cplab::Error when the layout cannot plan the batch.
Outcome check_shards(const LayoutSpec& spec, const Batch& batch,
                     const std::vector<io::TensorFile>& shards, const Conventions& conventions);

// A gather_token_tensor output (trimmed to the caller's S, or the padded L) against the batch,
// under outcome.spec's conventions: every key the file holds (a bare tensor stands for the
// primary). Appends to outcome.diffs and outcome.score.
void check_gathered(const Batch& batch, const io::TensorFile& file, Outcome& outcome);

// The ℓ the shards hold (of input_ids, else labels, else the first token key): 0 when unknown.
std::int64_t shard_local_len(const Batch& batch, const std::vector<io::TensorFile>& shards);

}  // namespace cplab::check
