#pragma once
// A layout as data: everything the code below the registries (the twin, the GPU path, the
// properties, the reports, the CLI) needs to know of one layout, so that none of it asks "which
// layout is this?". One descriptor per layout file in layouts/ (beside its declaration), one
// registry line each (layouts/descriptor_registry.cpp). The reference keeps its own, independent
// construction of every layout (reference/layouts/); the two are tied by name only.
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_algo.hpp"
#include "core/layout_spec.hpp"
#include "core/map_params.hpp"

namespace cplab::sim {

struct RowStream;
class PartitionRules;

// What a layout's map is computed from, as far as code below the registries asks: nothing but the
// shape (no map.derive), an assignment balanced over the row's contents (`cplab layout` shows its
// costs), or parameters map.derive records from the row (its document bounds: thd) or from the
// layout's own options (usp's ring degree).
enum class MapSource : std::uint8_t {
  shape,       // C and L alone
  assignment,  // an assignment computed from the row's contents (costs balanced greedily)
  recorded,    // C, L and what map.derive records as the map's parameters
};

// A named integer fact of a layout or of one rank, as `cplab layout` shows it.
struct NamedValue {
  const char* name;
  std::int64_t value;
};

// How CP attention schedules (SPEC §13) cut a rank's buffers into blocks.
enum class AttentionBlocking : std::uint8_t {
  runs,   // maximal runs of consecutive global slots of one document (head-tail: its two chunks)
  whole,  // the whole buffer is one block, masked by global slot (stripe's shifted diagonal)
};

// What a layout asks of a row where it partitions (SPEC §3): one multiple, of one length. The
// acceptance contract (layouts/row_acceptance.hpp: accepts, refusal, nearest_accepted) reads it,
// and nothing else decides which rows a layout takes.
struct RowRule {
  enum class Of : std::uint8_t {
    anything,       // it pads any row
    length,         // S itself: the layout pads nothing, the row's padding is the caller's
    padded_length,  // L = ceil_to(S, padding.unit): the row as the layout pads it
    documents,      // every document's slots (a BSHD row is one document), the documents filling
                    // the row: the caller pads every document
  };
  Of of = Of::anything;
  std::int64_t (*multiple)(const LayoutSpec&) = nullptr;  // required unless of = anything
  const char* multiple_name = "";  // as the spec writes it ("C", "2C", "B·C")
  const char* why = "";            // what needs the multiple, for the refusal ("" : nothing said)
};

// The rank structure a layout has besides its tokens (SPEC §13, USP: R rings of C/R Ulysses
// groups): the facts `cplab layout` shows of the whole layout and of each rank, and the ring
// degree R the usp algorithm attends through. A layout without one has none of them and refuses
// that algorithm.
struct RankStructure {
  std::vector<NamedValue> (*layout_facts)(const LayoutSpec& spec) = nullptr;
  std::vector<NamedValue> (*rank_facts)(const LayoutSpec& spec, std::int64_t rank) = nullptr;
  std::int64_t (*ring_degree)(const LayoutSpec& spec) = nullptr;
};

// How attention runs on a layout's buffers.
struct LayoutAttention {
  // How CP attention schedules (SPEC §13) block the buffers.
  AttentionBlocking blocking = AttentionBlocking::runs;
  // Why it refuses an algorithm (one line; nullptr or "" : it runs every algorithm the algorithm
  // itself allows).
  const char* (*refuses_algo)(AttentionAlgo algo) = nullptr;
  // Ranks attend through varlen segments (cu_seqlens_q, cu_seqlens_k and a slice of the gathered
  // keys, PartitionRules::varlen_segments) instead of the document-causal mask over every key.
  bool varlen_segments = false;
};

// The map from a padded row's global slots to ranks (SPEC §3): its closed form, what it is computed
// from, and the two hooks that record and check the parameters it is computed with.
struct LayoutMapRecipe {
  int form = 0;  // its closed-form map type: index_math::form_of<Map>() (closed_forms.hpp)
  MapSource source = MapSource::shape;
  // Fills stream.map (and stream.map_costs) for a data-dependent map (C > 1); nullptr: shape only.
  void (*derive)(RowStream& stream, const LayoutSpec& spec, const PartitionRules& rules) = nullptr;
  // Validates recorded parameters (a wrong one is an error, never a wild index) and returns the
  // array derived from them that the map needs too (may be empty); nullptr: nothing to check.
  std::vector<std::int64_t> (*prepare)(std::int64_t cp, std::int64_t padded_len,
                                       const MapParams& params) = nullptr;
};

// How a layout pads a row where it partitions (SPEC §3). A row whose documents stay at their
// caller offsets is padded at its end to a multiple of unit(spec). document_unit (packed rows;
// nullptr: none) re-lays every document at ceil_to(its length, document_unit(spec)) slots, its
// padding at its end, and the row to at least ceil_to(S, unit(spec)) with what is left over on the
// last document.
struct LayoutPadding {
  std::int64_t (*unit)(const LayoutSpec&) = nullptr;  // required
  std::int64_t (*document_unit)(const LayoutSpec&) = nullptr;
  // Whether the layout's options ask it to pad and map at C = 1 too (the one rank then holds the
  // whole padded stream); nullptr: never, every layout at C = 1 is the caller row as it is.
  bool (*at_cp1)(const LayoutSpec&) = nullptr;
};

struct LayoutDescriptor {
  const char* name = nullptr;
  LayoutMapRecipe map = {};
  // Whether it exists only with CP off, and whether it takes BSHD rows (every layout takes
  // packed rows).
  bool cp_off = false;
  bool bshd_rows = true;
  LayoutPadding padding = {};
  // Positions are indices of the padded stream, pads included, not offsets in each document.
  bool stream_positions = false;
  // What ranks hold besides tokens: whole local documents with local cu_seqlens = bounds / C.
  bool local_documents = false;
  // The layout's own options (beyond C), checked before anything is built; nullptr: none.
  void (*check_spec)(const LayoutSpec&) = nullptr;
  // What it asks of a row where it partitions: one multiple of one length
  // (layouts/row_acceptance.hpp is the one place that reads it; default: it pads any row).
  RowRule row_rule = {};
  // Its rank structure besides tokens (nullptr: none), and how attention runs on its buffers.
  const RankStructure* rank_structure = nullptr;
  LayoutAttention attention = {};
};

// Whether the layout's ranks are rings of Ulysses groups (SPEC §13, USP;
// attention/schedule.hpp's layout_ring_degree says how many).
inline bool has_rings(const LayoutDescriptor& layout) {
  return layout.rank_structure != nullptr && layout.rank_structure->ring_degree != nullptr;
}

// Whether `layout` pads and maps rows of `spec` (C > 1, or C = 1 where padding.at_cp1 asks),
// rather than keeping the caller row as it is.
bool partitions(const LayoutDescriptor& layout, const LayoutSpec& spec);

// Every registered layout, in name order; each was checked as it registered.
const std::vector<LayoutDescriptor>& layout_descriptors();
const LayoutDescriptor& layout_descriptor(const std::string& name);  // throws listing the names
std::vector<std::string> layout_descriptor_names();

}  // namespace cplab::sim
