#pragma once
// One generated test case: everything a property needs to rebuild its batch and tensors, and
// nothing else. Tensor values are never stored: they are a pure function of (seed, global token,
// feature) (case_data.hpp), so a case prints as one short line that `cplab replay '<case>'` parses
// back exactly:
//
//   thd cp=3 m=2 K=4 mb=2 rows=2 S=20 docs=5,3+1,8/12 vocab=37 pad_id=7 policy=spec
//   shard_primary=1 primary=ids dim=3 dtype=bf16 pos=none rowpos=arange left_pad=0 kdt=wide
//   keys=loss_mask ignore=100 invalid=50 pad_content=100 seed=1234          (one line in practice)
//
// `docs=` lists each packed row's documents ('/' between rows); `5+3` is a document of 5 real
// tokens followed by 3 slots of the caller's own padding (seq_lens_padded = 8). `docs=-` is BSHD.
// The layouts' options are keys of their own, as each layout declares them (layouts/ID.cpp, its
// key and its place): those of the first format (`m=`, `K=`) are in every case after cp=; later
// ones follow seed=, each only when it differs from its default (`R=2`, `chunk_pad_at_cp1=1`,
// `block=B`, ...). An option with an automatic value may be given as `auto` (`K=auto`: magi's cap
// for short rows, min(512, ceil(S / (8·C))) of the case's own S and C); resolve_case_options keeps
// its value equal to it as S and C shrink.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/layout_spec.hpp"

namespace cplab::layouts {
struct LayoutOption;
}  // namespace cplab::layouts

namespace cplab::properties {

enum class Primary : std::uint8_t { ids, embeds };

// How the caller supplies position_ids (SPEC §1): not at all (the sharder computes them), one row
// per batch row [B,S], one shared row [1,S] (BSHD only), or mRoPE planes [3,B,S].
enum class PositionKind : std::uint8_t { none, per_row, shared, mrope };

// What the caller's position ids of a BSHD row hold (real batches differ row by row): arange from
// 0; arange from a per-row offset (a long document cut into rows); or restarting at document
// boundaries inside the row (documents flattened into rows without seq_lens). Packed rows always
// restart per document (SPEC §1).
enum class RowPositions : std::uint8_t { arange, offset, restart };

// The dtypes of the batch's own keys: wide (i64 ids, labels and positions, bool masks, f32
// embeddings and extra keys) or narrow (i32 ids, labels and positions, u8 valid, f32 loss_mask,
// bf16 embeddings and extra keys), as collators and mixed-precision models hand them over.
enum class KeyDTypes : std::uint8_t { wide, narrow };

struct Document {
  std::int64_t real = 0;   // seq_lens entry
  std::int64_t extra = 0;  // the caller's own padding after it: seq_lens_padded = real + extra
  bool operator==(const Document&) const = default;
};

struct Case {
  LayoutSpec spec;
  std::int64_t rows = 1;     // B (packed: one row per microbatch)
  std::int64_t seq_len = 1;  // S, the caller's row length (packed: >= every row's documents)
  std::vector<std::vector<Document>> docs;  // empty: BSHD rows
  std::int64_t vocab = 2;
  Primary primary = Primary::ids;
  std::int64_t dim = 1;      // feature dim of inputs_embeds and of the token tensor under test
  DType dtype = DType::f32;  // dtype of the token tensor under test
  PositionKind positions = PositionKind::none;
  RowPositions row_positions = RowPositions::arange;  // BSHD only
  std::int64_t left_pad = 0;  // BSHD only: row b has (b + seed) mod (left_pad + 1) pad slots first
  KeyDTypes key_dtypes = KeyDTypes::wide;
  bool loss_mask = false;        // a loss_mask key (same holes as valid)
  bool padding_mask = false;     // a padding_mask key (true on the caller's padding slots)
  bool extra_key = false;        // an extra token-aligned key with a declared pad value
  bool extra_planes = false;     // an extra key [2,B,S,dim] with its sequence on dim 2
  bool extra_features = false;   // an extra key [B,S,dim] with trailing feature dims
  int ignore_permille = 0;       // labels that are IGNORE (holes)
  int invalid_permille = 0;      // valid-mask holes
  int pad_content_permille = 0;  // content ids equal to the pad id
  std::uint64_t seed = 0;
  // The attention mask a sweep's `--masks` chose for the case (mask_choice.hpp: "window:128", or
  // "window" with its size drawn from the seed); empty: the attention properties draw every
  // family. Printed last, as `mask=...`, only when set.
  std::string mask;
  // Options given as auto (`K=auto`, by option name, sorted): their values follow S and C
  // (resolve_case_options).
  std::vector<std::string> automatic;

  bool packed() const { return !docs.empty(); }
  std::int64_t rows_per_microbatch() const { return rows / spec.microbatches; }
  bool is_automatic(const layouts::LayoutOption& option) const;
  bool operator==(const Case& other) const;
};

// Throws cplab::Error naming the first field out of its domain (what parse_case accepts and what
// make_batch can build): cp >= 1, rows divisible by microbatches, packed rows == microbatches, the
// documents fit in S, pad_id < vocab, permilles in [0, 1000], ...
void validate_case(const Case& c);

// Brings the options derived from other fields up to date (K=auto after S or C changed): what
// every generator and shrink applies before it hands a case on.
void resolve_case_options(Case& c);

// The one-line form above. print_case(parse_case(s)) == s for every printed s, and
// parse_case(print_case(c)) == c for every valid c.
std::string print_case(const Case& c);
// Parses a printed case. Keys may come in any order and may be left out (their defaults; packed
// rows and S then follow from docs=); an unknown or repeated key is an error naming it.
Case parse_case(std::string_view text);

// "thd cp=3 dtype=bf16 docs=5,3+1,8/12": what a failure message leads with.
std::string case_headline(const Case& c);

std::string_view primary_name(Primary p);
std::string_view position_kind_name(PositionKind k);
std::string_view row_positions_name(RowPositions p);
std::string_view key_dtypes_name(KeyDTypes k);

}  // namespace cplab::properties
