// Mutants of the masks beyond causal (SPEC §13.5), each a bug that shipped where CP code wires a
// sliding-window, chunked or bidirectional mask through its ranks: one protected step of the
// twin's CP attention changed (the mask its kernels apply, or the facts they read), everything
// else standard. Each changes only blocks the schedule leaves to the per-token mask, which is
// where the production bugs lived too: the blocks a kernel receives with a mask argument.
#include <vector>

#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {
namespace {

// The mask dropped to plain causal on the ring's path (accelerate PR 4177: the CP hook dropped
// every attention mask; prime-rl PR 2828: the ring patch read no window), the other algorithms
// right.
class MaskDroppedOnRing final : public Mutant {
  using Mutant::Mutant;
  sim::MaskRule applied_mask(const sim::AttentionSchedule& s, std::size_t step) const override {
    if (s.algo == sim::AttentionAlgo::ring) return {};
    return SimImplementation::applied_mask(s, step);
  }
};

// The window one key too wide: W handed where flash-attn's window_size wants W - 1.
class WindowOffByOne final : public Mutant {
  using Mutant::Mutant;
  sim::MaskRule applied_mask(const sim::AttentionSchedule& s, std::size_t step) const override {
    sim::MaskRule rule = SimImplementation::applied_mask(s, step);
    if (rule.family == sim::MaskFamily::window) rule.size += 1;
    return rule;
  }
};

// A mutant that changes what the mask reads (the bugs where a rank builds its mask from the wrong
// positions): the standard facts of a buffer's positions, then `spoil`.
class FactsMutant : public Mutant {
 public:
  using Mutant::Mutant;

 protected:
  // A buffer made of `pieces` that `rank` holds at `step` (its keys, or its queries).
  struct Buffer {
    const sim::AttentionSchedule& s;
    std::int64_t rank;
    std::size_t step;
    const std::vector<sim::BufferPiece>& pieces;
    bool keys;
  };
  virtual void spoil(const Buffer& buffer, std::vector<sim::TokenFacts>& facts) const = 0;

 private:
  std::vector<sim::TokenFacts> buffer_facts(const sim::AttentionSchedule& s, std::int64_t rank,
                                            std::size_t step,
                                            const std::vector<sim::BufferPiece>& pieces,
                                            bool keys) const final {
    std::vector<sim::TokenFacts> facts =
        SimImplementation::buffer_facts(s, rank, step, pieces, keys);
    spoil({s, rank, step, pieces, keys}, facts);
    return facts;
  }
};

// Chunks counted from the row's first slot, not from each document's start: the Llama 4 chunk
// boundaries misplaced in packed rows.
class ChunksFromRowStart final : public FactsMutant {
  using FactsMutant::FactsMutant;
  void spoil(const Buffer& b, std::vector<sim::TokenFacts>& facts) const override {
    if (b.s.mask.family != sim::MaskFamily::chunked) return;
    for (sim::TokenFacts& f : facts) f.pos = f.slot;
  }
};

// The window not reset at a document boundary: it slides over the packed row and reaches into
// the previous document's last tokens (varlen boundaries dropped where the window is applied).
// Only a block that spans documents can show it: the whole-buffer blocks of the layouts that
// claim it (carries_mutants); runs never span a document.
class WindowAcrossDocuments final : public FactsMutant {
  using FactsMutant::FactsMutant;
  void spoil(const Buffer& b, std::vector<sim::TokenFacts>& facts) const override {
    if (b.s.mask.family != sim::MaskFamily::window) return;
    for (sim::TokenFacts& f : facts) {
      f.pos = f.slot;
      if (f.real != 0) f.doc = 1;
    }
  }
};

// The window measured in the slots of the buffers a rank holds, not in token positions: what a
// kernel's window_size does when it is handed a rank's local queries and keys as if they were
// one contiguous row (VeOmni PR 1021's alignment, and every head-tail or ring block whose keys
// are not the positions just before its queries). Within one document of one contiguous buffer
// slots and positions agree, so only blocks whose buffers jump do show it.
class WindowInBufferSlots final : public FactsMutant {
  using FactsMutant::FactsMutant;
  void spoil(const Buffer& b, std::vector<sim::TokenFacts>& facts) const override {
    if (b.s.mask.family != sim::MaskFamily::window) return;
    for (std::size_t i = 0; i < facts.size(); ++i) facts[i].pos = static_cast<std::int64_t>(i);
  }
};

// A bidirectional span cut where the ranks' shards meet: a span's tokens see only the span's
// tokens their own rank holds (each rank built its span mask from its local tokens).
class SpanCutAtRankBoundary final : public FactsMutant {
  using FactsMutant::FactsMutant;
  void spoil(const Buffer& b, std::vector<sim::TokenFacts>& facts) const override {
    std::size_t at = 0;
    for (const sim::BufferPiece& piece : b.pieces) {
      for (std::int64_t i = 0; i < piece.local.size(); ++i, ++at) {
        sim::TokenFacts& f = facts[at];
        if (f.span != 0) f.span = f.span * 4096 + static_cast<std::int32_t>(piece.rank);
      }
    }
  }
};

// The window applied with step 0's offsets on every ring step (lm-engine PR 447): the keys a rank
// holds at step t are masked as if they were its own shard's, position for position.
class WindowAtStepZeroOffsets final : public FactsMutant {
  using FactsMutant::FactsMutant;
  void spoil(const Buffer& b, std::vector<sim::TokenFacts>& facts) const override {
    if (!b.keys || b.step == 0 || b.s.algo != sim::AttentionAlgo::ring ||
        b.s.mask.family != sim::MaskFamily::window)
      return;
    std::vector<sim::BufferPiece> own = b.pieces;
    for (sim::BufferPiece& piece : own) piece.rank = b.rank;
    const std::vector<sim::TokenFacts> offsets =
        SimImplementation::buffer_facts(b.s, b.rank, b.step, own, b.keys);
    for (std::size_t i = 0; i < facts.size(); ++i) facts[i].pos = offsets[i].pos;
  }
};

}  // namespace

std::vector<ImplementationInfo> mask_mutants() {
  return checked_first_by(
      "cp_attention_matches_unsharded",
      {
          entry<MaskDroppedOnRing>(
              "mask_dropped_on_ring",
              "ring attention runs plain causal whatever the mask (accelerate PR 4177, prime-rl "
              "PR 2828)"),
          entry<WindowOffByOne>("mask_window_off_by_one",
                                "sliding window one key too wide: W passed where W - 1 is due"),
          entry<WindowInBufferSlots>(
              "mask_window_in_buffer_slots",
              "sliding window measured in a rank's buffer slots, not in token positions"),
          entry<ChunksFromRowStart>(
              "mask_chunks_from_row_start",
              "chunks counted from the row's first slot, not from each document's start"),
          on_claiming_layouts<WindowAcrossDocuments>(
              "mask_window_across_documents",
              "the sliding window not reset at a document boundary in a packed row"),
          entry<SpanCutAtRankBoundary>(
              "mask_span_cut_at_rank_boundary",
              "a bidirectional span's tokens see only the span tokens of their own rank"),
          entry<WindowAtStepZeroOffsets>(
              "mask_window_at_step_zero_offsets",
              "ring steps apply the window with step 0's key positions (lm-engine PR 447)"),
      });
}

}  // namespace cplab::properties::mutants
