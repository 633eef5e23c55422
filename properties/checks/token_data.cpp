// Property 3: labels, positions, document ids and masks travel with their tokens; positions are the
// ones computed before partitioning; pad slots carry the pad policy's values and never contribute.
#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// What SPEC §2 puts in a slot the layout added, per key (independent of the reference).
std::optional<double> pad_slot_value(const Case& c, const std::string& key) {
  const bool zero = c.spec.pad_policy == PadPolicy::zero;
  if (key == keys::labels) return static_cast<double>(kIgnoreIndex);
  if (key == keys::valid || key == keys::loss_mask) return 0.0;
  if (key == keys::padding_mask) return 1.0;
  if (key == keys::input_ids) return zero ? 0.0 : static_cast<double>(c.spec.pad_token_id);
  if (key == keys::inputs_embeds) return 0.0;
  if (key == kExtraKey) return kExtraPad;
  if (key == kPlanesKey) return kPlanesPad;
  if (key == kFeaturesKey) return kFeaturesPad;
  return std::nullopt;  // position_ids: continued (checked against the reference)
}

// What the caller's token t of row b holds for a key (self-locating data, not the reference).
std::optional<double> caller_value(const Case& c, const std::string& key, std::int64_t b,
                                   std::int64_t t) {
  if (key == keys::labels) return static_cast<double>(token_label(c, b, t));
  if (key == keys::valid) return token_valid(c, b, t) ? 1.0 : 0.0;
  if (key == keys::input_ids) return static_cast<double>(token_id(c, b, t));
  if (key == keys::padding_mask) return caller_padding(c, b, t) ? 1.0 : 0.0;
  return std::nullopt;
}

// Token by token: real tokens hold their caller's values, added slots the pad values.
std::string independent_mismatch(const Case& c, const std::string& key, const Tensor& local,
                                 const ShardLayout& layout, std::int64_t first_row,
                                 const std::string& what) {
  if (local.dim() != 2) return {};  // [B,ℓ] keys only; the rest is compared with the reference
  for (std::size_t b = 0; b < layout.index.size(); ++b) {
    for (std::size_t k = 0; k < layout.index[b].size(); ++k) {
      const std::int64_t t = layout.caller_pos[b][k];
      const std::optional<double> want =
          t >= 0 ? caller_value(c, key, first_row + static_cast<std::int64_t>(b), t)
                 : pad_slot_value(c, key);
      const double got = local.get(static_cast<std::int64_t>(b * layout.index[b].size() + k));
      if (want && *want != got) {
        return fmt::format("{}: row {} local token {} (global slot {}, {}) holds {}, expected {}",
                           what, b, k, layout.index[b][k],
                           t >= 0 ? fmt::format("caller token {}", t) : std::string("a pad slot"),
                           got, *want);
      }
    }
  }
  return {};
}

std::string layout_fields_mismatch(const ShardLayout& want, const ShardLayout& got,
                                   const std::string& at) {
  if (got.rank != want.rank || got.cp != want.cp || got.rows != want.rows ||
      got.packed != want.packed || got.original_len != want.original_len ||
      got.caller_len != want.caller_len) {
    return fmt::format(
        "{}: records rank {} cp {} rows {} packed {} S {} original {}; expected {} {} {} {} {} {}",
        at, got.rank, got.cp, got.rows, got.packed, got.caller_len, got.original_len, want.rank,
        want.cp, want.rows, want.packed, want.caller_len, want.original_len);
  }
  if (got.positions.size() != want.positions.size() || got.doc_ids.size() != want.doc_ids.size() ||
      got.real.size() != want.real.size() || got.caller_pos.size() != want.caller_pos.size()) {
    return fmt::format("{}: records per-row facts for the wrong number of rows", at);
  }
  for (std::size_t b = 0; b < want.positions.size(); ++b) {
    const std::vector<std::int64_t> doc_want(want.doc_ids[b].begin(), want.doc_ids[b].end());
    const std::vector<std::int64_t> doc_got(got.doc_ids[b].begin(), got.doc_ids[b].end());
    const std::vector<std::int64_t> real_want(want.real[b].begin(), want.real[b].end());
    const std::vector<std::int64_t> real_got(got.real[b].begin(), got.real[b].end());
    for (const std::string& bad :
         {vector_mismatch(fmt::format("{} row {}: positions (computed before partitioning)", at, b),
                          want.positions[b], got.positions[b]),
          vector_mismatch(fmt::format("{} row {}: document ids", at, b), doc_want, doc_got),
          vector_mismatch(fmt::format("{} row {}: real-token flags", at, b), real_want, real_got),
          vector_mismatch(fmt::format("{} row {}: caller positions", at, b), want.caller_pos[b],
                          got.caller_pos[b])}) {
      if (!bad.empty()) return bad;
    }
  }
  return {};
}

// What of a real batch the case holds, for the coverage rules below.
void note_options(const Case& c, std::vector<std::string>& options) {
  options.push_back(fmt::format("pos={}", position_kind_name(c.positions)));
  options.push_back(c.spec.pad_policy == PadPolicy::zero ? "policy=zero" : "policy=spec");
  const bool given = c.positions != PositionKind::none;
  if (given && c.row_positions != RowPositions::arange)
    options.push_back(fmt::format("rowpos={}", row_positions_name(c.row_positions)));
  if (c.left_pad > 0) options.push_back("left_pad");
  // Rows of one microbatch whose position ids differ: a row read for another shows.
  if ((c.positions == PositionKind::per_row || c.positions == PositionKind::mrope) &&
      c.rows_per_microbatch() > 1 && (c.row_positions != RowPositions::arange || c.left_pad > 0))
    options.push_back("positions differ by row");
  if (!c.spec.shard_primary) options.push_back("primary kept global");
  if (c.key_dtypes == KeyDTypes::narrow) options.push_back("kdt=narrow");
  if (c.extra_key) options.push_back("key extra");
  if (c.extra_planes) options.push_back("key planes (seq dim 2)");
  if (c.extra_features) options.push_back("key features");
}

std::string check_token_data(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  const auto shards = shard_on_ranks(impl, c.spec, subject.batch);
  const auto expected = reference::shard_batch(subject.plan, subject.batch);
  notes.tags.push_back(fmt::format("{} policy={} pos={}", c.spec.layout,
                                   c.spec.pad_policy == PadPolicy::zero ? "zero" : "spec",
                                   position_kind_name(c.positions)));
  note_options(c, notes.options);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    for (std::int64_t r = 0; r < c.spec.cp; ++r) {
      const RankShard& got = shard_of(shards, r, m);
      const Batch& want = expected[static_cast<std::size_t>(m)][static_cast<std::size_t>(r)];
      const std::string at = fmt::format("rank {}, microbatch {}", r, m);
      const std::string layout_bad =
          layout_fields_mismatch(reference_layout(plan, r), got.layout, at);
      if (!layout_bad.empty()) return failure_prefix(c) + layout_bad;
      for (const auto& [name, field] : want.tokens) {
        if (!got.local.has(name))
          return failure_prefix(c) + fmt::format("{}: key '{}' is missing", at, name);
        const TokenField& local = got.local.tokens.at(name);
        if (local.seq_dim != field.seq_dim) {
          return failure_prefix(c) + fmt::format("{}: key '{}' has seq dim {}, expected {}", at,
                                                 name, local.seq_dim, field.seq_dim);
        }
        const bool global_primary = name == subject.batch.primary() && !c.spec.shard_primary;
        TokenFrame frame{.what = fmt::format("key '{}' on {}", name, at),
                         .seq_dim = field.seq_dim,
                         .plan = &plan,
                         .caller = global_primary};
        if (!global_primary) {
          for (const RowPlan& row : plan.rows)
            frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
          const std::string bad = independent_mismatch(c, name, local.value, got.layout,
                                                       m * c.rows_per_microbatch(), frame.what);
          if (!bad.empty()) return failure_prefix(c) + bad;
        }
        const std::string bad = tensor_mismatch(c, frame, field.value, local.value);
        if (!bad.empty()) return failure_prefix(c) + bad;
      }
      for (const auto& [name, field] : got.local.tokens) {
        if (!want.has(name))
          return failure_prefix(c) + fmt::format("{}: unexpected key '{}'", at, name);
      }
      for (const auto& [name, tensor] : want.passthrough) {
        const auto it = got.local.passthrough.find(name);
        if (it == got.local.passthrough.end() || !(it->second == tensor)) {
          return failure_prefix(c) +
                 fmt::format("{}: pass-through '{}' is missing or changed", at, name);
        }
      }
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo token_data_property;
const PropertyInfo token_data_property{
    .name = "token_data_travels_with_its_token",
    .invariant =
        "every key of every local token holds that caller token's value (positions computed before "
        "partitioning); added slots hold the pad policy's values: IGNORE labels, masks off, pad "
        "ids",
    .check = check_token_data,
    .coverage =
        {
            {"pos=none"},
            {"pos=per_row"},
            {"pos=mrope"},
            {"pos=shared", {BatchKind::bshd, BatchKind::bshd_padded}},
            {"policy=spec", {}, Cross::cp},
            {"policy=zero"},
            {"rowpos=offset", {BatchKind::bshd, BatchKind::bshd_padded}},
            {"rowpos=restart", {BatchKind::bshd, BatchKind::bshd_padded}},
            {"left_pad", {BatchKind::bshd, BatchKind::bshd_padded}},
            {"positions differ by row", {BatchKind::bshd, BatchKind::bshd_padded}},
            {"primary kept global"},
            {"kdt=narrow"},
            {"key extra"},
            {"key planes (seq dim 2)"},
            {"key features"},
        },
};

}  // namespace cplab::properties
