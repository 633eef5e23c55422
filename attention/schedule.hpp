#pragma once
// A CP attention schedule as data (SPEC §13): for every step and rank, which query and key slots
// the rank holds (whose shard, which part of it), which (query block, key block) pairs it computes
// with which mask, its work and the bytes it moves. Built once from a layout's descriptor and one
// row's maps; the twin, the GPU path, the properties, `cplab schedule` and its pictures consume
// it and never re-derive it.
//
// Coordinates. A rank's query buffer and key buffer at a step are concatenations of pieces, each
// a range of one rank's local shard (local token indices). A block's `q` and `k` are ranges of
// those buffers. The global slot of buffer position p is the map of the piece that holds it, so
// every mask is, in the end, a statement about global slots.
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_algo.hpp"
#include "core/attention_mask.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/layout_spec.hpp"
#include "core/shard_plan.hpp"

namespace cplab::sim {

struct LayoutDescriptor;

// How a block's pairs are masked, as a kernel realises it (local indices i of the block's queries,
// j of its keys):
//   full        every pair;
//   causal      j <= i + diagonal (a causal kernel with its diagonal shifted; diagonal 0 is the
//               usual one on a block whose query and key ranges are the same slots);
//   doc_causal  the row's mask itself, pair by pair from per-token facts (mask_visible; under
//               the causal mask: key slot <= query slot, both real, same document);
//   skip        nothing (not computed; never stored in a RankStep).
enum class MaskKind : std::uint8_t {
  full = 0,
  causal = 1,
  doc_causal = 2,
  skip = 3
};                                     // = kMask* (block_mask.hpp)
const char* mask_name(MaskKind kind);  // "full", "causal", "doc-causal", "skip"

struct LocalRange {
  std::int64_t begin = 0, end = 0;  // [begin, end)
  std::int64_t size() const { return end - begin; }
  friend bool operator==(const LocalRange&, const LocalRange&) = default;
};

// Part of a buffer: local tokens [begin, end) of `rank`'s shard, in their local order.
struct BufferPiece {
  std::int64_t rank = 0;
  LocalRange local;
  friend bool operator==(const BufferPiece&, const BufferPiece&) = default;
};

struct ScheduleBlock {
  LocalRange q;  // positions in the step's query buffer
  LocalRange k;  // positions in the step's key buffer
  MaskKind mask = MaskKind::full;
  std::int64_t diagonal = 0;  // causal only (see MaskKind)
  std::int64_t pairs = 0;     // (query, key) pairs the mask keeps
};

struct RankStep {
  std::int64_t rank = 0;
  // Whose shard's K/V the rank holds at this step: a rank, or -1 when it holds several (all-gather,
  // Ulysses). The pieces say exactly which.
  std::int64_t kv_from = -1;
  std::vector<BufferPiece> queries;   // the query buffer (ring: the rank's own shard)
  std::vector<BufferPiece> keys;      // the key/value buffer held at this step
  std::vector<ScheduleBlock> blocks;  // computed blocks (mask != skip), query-major
  std::int64_t skipped_blocks = 0;    // block pairs the blocking rule formed that compute nothing
  std::int64_t heads = 0;             // query heads this rank computes the blocks for
  std::int64_t work = 0;              // Σ blocks' pairs × heads
  // Bytes this step moves, forward (K and V in) and backward (K, V and dK, dV around again; the
  // last step's dK/dV delivered to their owners counts on that step).
  std::int64_t bytes_sent = 0, bytes_received = 0;
  std::int64_t backward_bytes_sent = 0, backward_bytes_received = 0;
};

// The exchange that brings a step's buffers: none, send_recv (ring: K/V from the previous rank),
// all_gather, all_to_all (Ulysses heads; usp's step 0 within each Ulysses group).
enum class Exchange : std::uint8_t { none, send_recv, all_gather, all_to_all };
const char* exchange_name(Exchange exchange);  // "none", "send_recv", "all_gather", "all_to_all"

struct ScheduleStep {
  Exchange exchange = Exchange::none;
  std::vector<RankStep> ranks;  // one per rank, in rank order
};

// The tensors the schedule's bytes are counted for: q [ℓ, heads, head_dim], k and v
// [ℓ, kv_heads, head_dim], all in `dtype`.
struct AttentionShape {
  std::int64_t heads = 32;
  std::int64_t kv_heads = 32;
  std::int64_t head_dim = 128;
  DType dtype = DType::bf16;
};

struct AttentionSchedule {
  std::string layout;
  AttentionAlgo algo = AttentionAlgo::ring;
  std::int64_t cp = 1;
  std::int64_t padded_len = 0;      // L
  std::int64_t ring_degree = 1;     // R: ranks in one ring (ring: C; usp: the layout's R)
  std::int64_t ulysses_degree = 1;  // U: ranks in one head all-to-all (ulysses: C; usp: C/R)
  AttentionShape shape;
  // The row's mask and the global facts every mask reads: index[r][k] the global slot of rank r's
  // local token k, and per global slot its document (0 = row padding), whether it is real, and
  // all that the mask predicate reads (facts[g], core/attention_mask.hpp).
  AttentionMask mask;
  std::vector<std::vector<std::int64_t>> index;
  std::vector<std::int32_t> doc_ids;
  std::vector<std::uint8_t> real;
  std::vector<TokenFacts> facts;
  std::vector<ScheduleStep> steps;
  std::int64_t total_work = 0;     // Σ over steps and ranks of work
  std::int64_t critical_path = 0;  // Σ_s max_r work(s, r)
  double ideal = 0.0;              // total_work / C

  std::int64_t local_len() const { return cp > 0 ? padded_len / cp : 0; }
  // Global slot of position p of a buffer made of `pieces`.
  std::int64_t slot_at(const std::vector<BufferPiece>& pieces, std::int64_t p) const;
  // Global slot of every position of a buffer made of `pieces`, in buffer order.
  std::vector<std::int64_t> buffer_slots(const std::vector<BufferPiece>& pieces) const;
};

// Bounds on one schedule's size (SPEC §13.2), so that a row cplab accepts elsewhere builds in
// bounded time and memory here or is refused at once: the buffer slots the builder walks (Σ over
// rank steps of the query and key buffers' lengths, about 2·C·L) and the blocks it stores.
inline constexpr std::int64_t kMaxScheduleSlotWalk = std::int64_t{1} << 27;
inline constexpr std::int64_t kMaxScheduleBlocks = std::int64_t{1} << 22;

// A schedule past those bounds, or whose work or bytes overflow int64: bad input (one line), told
// apart so that `cplab schedule --algo all` can list the algorithm as refused and go on.
class ScheduleTooLarge : public Error {
 public:
  using Error::Error;
};

// The R of the layout's rings of Ulysses groups (its descriptor's ring_degree; only such a layout
// runs the usp algorithm), else 1.
std::int64_t layout_ring_degree(const LayoutDescriptor& layout, const LayoutSpec& spec);

// Why `layout` never runs `algo`, whatever the row and shape (one line), or "".
std::string layout_refusal(const LayoutDescriptor& layout, AttentionAlgo algo);

// Why `layout` cannot run `algo` at `spec` (one line), or "" when it can.
std::string schedule_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec,
                             AttentionAlgo algo, const AttentionShape& shape);

// The schedule of `algo` for one planned row of `layout` (its maps, documents and real slots)
// under `mask`. Throws the refusal's line when the pair does not make sense, ScheduleTooLarge
// past the bounds.
AttentionSchedule build_schedule(const LayoutDescriptor& layout, const LayoutSpec& spec,
                                 const RowPlan& row, AttentionAlgo algo,
                                 const AttentionShape& shape = {}, const AttentionMask& mask = {});

}  // namespace cplab::sim
