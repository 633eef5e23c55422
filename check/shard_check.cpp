// The shards of a production sharder against the reference (shard_check.hpp): token keys slot by
// slot, the keys a rank holds, and the conventions that explain them.
#include "check/shard_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "check/seqlens_rules.hpp"
#include "check/shard_conventions.hpp"
#include "check/shard_keys.hpp"
#include "check/slot_runs.hpp"
#include "check/token_values.hpp"
#include "core/error.hpp"
#include "core/token_moves.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::check {

const char* diff_kind_name(DiffKind kind) {
  switch (kind) {
    case DiffKind::slot:
      return "slot";
    case DiffKind::pad:
      return "pad";
    case DiffKind::missing_key:
      return "missing_key";
    case DiffKind::extra_key:
      return "extra_key";
    case DiffKind::shape:
      return "shape";
    case DiffKind::dtype:
      return "dtype";
    case DiffKind::cu_seqlens:
      return "cu_seqlens";
    case DiffKind::max_seqlen:
      return "max_seqlen";
  }
  return "?";
}

const std::vector<PolicyInfo>& pad_policies() {
  static const std::vector<PolicyInfo> all = {
      {PadPolicy::spec, "spec",
       "added slots hold the pad id, positions that continue, IGNORE labels, masks off (SPEC §2)"},
      {PadPolicy::zero, "zero",
       "added slots hold id 0 and position 0, IGNORE labels, masks off (Automodel's BSHD CP "
       "sharder)"},
  };
  return all;
}

PadPolicy parse_pad_policy(const std::string& name) {
  std::vector<std::string> names;
  for (const PolicyInfo& p : pad_policies()) {
    if (name == p.name) return p.policy;
    names.emplace_back(p.name);
  }
  CPLAB_FAIL("unknown pad policy '{}'; known: {}", name, fmt::join(names, ", "));
}

namespace {

std::string pad_rule_text(const TokenField& field, const LayoutSpec& spec) {
  const bool zero = spec.pad_policy == PadPolicy::zero;
  switch (field.rule) {
    case PadRule::pad_token:
      return zero ? "id 0" : fmt::format("pad id {}", spec.pad_token_id);
    case PadRule::continue_positions:
      return zero ? "position 0" : "positions continuing the last";
    case PadRule::constant:
      return fmt::format("{}", values_text({field.pad_value}));
  }
  return "?";
}

// The comparison of one plan (conventions fixed in plan.spec) with the shards.
class Comparison {
 public:
  Comparison(const ShardPlan& plan, const Batch& batch, const std::vector<io::TensorFile>& shards,
             Outcome& out)
      : plan_(plan),
        batch_(batch),
        shards_(shards),
        out_(out),
        sharded_(reference::shard_batch(plan, batch)),
        per_(plan.rows_per_microbatch()),
        tables_(plan, batch, out) {}

  void run() {
    for (std::int64_t r = 0; r < plan_.spec.cp; ++r) rank(r);
    tables_.tables_on_every_rank(shards_);
  }

 private:
  void rank(std::int64_t r) {
    tables_.start_rank();
    token_keys(r);
    other_keys(r);
  }

  // Every token key the layout gives rank r: held and compared slot by slot, or missing (which
  // position_ids the model makes itself, and an attention_mask a causal kernel knows, may be).
  void token_keys(std::int64_t r) {
    const io::TensorFile& file = shards_[r];
    for (const auto& [name, field] : sharded_[0][r].tokens) {
      const auto it = file.tensors.find(name);
      if (it != file.tensors.end()) {
        token_key(r, name, it->second);
      } else if (name == keys::position_ids && !batch_.has(name)) {
        out_.notes.push_back(
            fmt::format("rank {} holds no position_ids (the model makes its own; not checked)", r));
      } else if (name == kAttentionMask && attention_mask_hole() < 0) {
        out_.notes.push_back(fmt::format(
            "rank {} holds no attention_mask: allowed, the batch's is 1 on every token up to each "
            "row's last real one and 0 only after (padding at the end), which a causal kernel "
            "(is_causal) already knows; torch's context_parallel drops it so",
            r));
      } else if (name == kAttentionMask) {
        add(key_difference(
                r, name, DiffKind::missing_key,
                fmt::format("{}: missing, and the batch's carries what a causal kernel does not "
                            "know: slot {} is masked inside the real tokens",
                            lead(r, name), attention_mask_hole())),
            1);
      } else {
        add(key_difference(r, name, DiffKind::missing_key,
                           fmt::format("{}: missing (the batch has it; every rank needs its shard)",
                                       lead(r, name))),
            1);
      }
    }
  }

  // The keys rank r holds that are not token keys: its tables, the batch's pass-through tensors,
  // and keys the layout does not give it.
  void other_keys(std::int64_t r) {
    const io::TensorFile& file = shards_[r];
    const Batch& first = sharded_[0][r];
    const Tensor* max_seqlen = nullptr;
    for (const auto& [name, value] : file.tensors) {
      if (first.tokens.count(name) != 0) continue;
      if (is_cu_seqlens_key(name)) {
        tables_.cu_seqlens(r, name, value);
      } else if (name == kMaxSeqlen) {
        max_seqlen = &value;  // checked against the tables once they are all read
      } else if (batch_.passthrough.count(name) != 0) {
        if (!(batch_.passthrough.at(name) == value)) {
          add(key_difference(r, name, DiffKind::slot,
                             fmt::format("{}: differs from the batch's pass-through tensor {}",
                                         lead(r, name), tensor_brief(value))),
              1);
        }
      } else {
        add(key_difference(r, name, DiffKind::extra_key,
                           fmt::format("{}: {} is not a key this layout gives a rank",
                                       lead(r, name), tensor_brief(value))),
            1);
      }
    }
    if (max_seqlen != nullptr) tables_.max_seqlen(r, *max_seqlen);
  }

  void token_key(std::int64_t r, const std::string& name, Tensor actual) {
    if (!held_shape(r, name, actual)) return;
    const TokenField& f0 = sharded_[0][r].tokens.at(name);
    if (actual.dtype() != f0.value.dtype()) {
      add(key_difference(r, name, DiffKind::dtype,
                         fmt::format("{}: dtype {}, the batch's is {}", lead(r, name),
                                     dtype_name(actual.dtype()), dtype_name(f0.value.dtype()))),
          1);
    }
    const TokenAxes held_axes = token_axes(actual, f0.seq_dim, "check");
    for (std::int64_t m = 0; m < plan_.spec.microbatches; ++m) {
      for (std::int64_t j = 0; j < per_; ++j) row_slots(r, name, actual, held_axes, m, j);
    }
  }

  // Whether rank r's tensor of a token key has the shape its shard has (every row one local
  // length; a one-row [ℓ] is read as [1, ℓ]); a wrong shape is the key's one difference.
  bool held_shape(std::int64_t r, const std::string& name, Tensor& actual) {
    const TokenField& f0 = sharded_[0][r].tokens.at(name);
    const TokenAxes e0 = token_axes(f0.value, f0.seq_dim, "check");
    const std::int64_t rows = e0.rows * plan_.spec.microbatches;
    for (std::int64_t m = 1; m < plan_.spec.microbatches; ++m) {
      const TokenAxes em = token_axes(sharded_[m][r].tokens.at(name).value, f0.seq_dim, "check");
      if (em.seq != e0.seq) {
        add(key_difference(r, name, DiffKind::shape,
                           fmt::format("{}: rows of this batch have different local lengths ({} "
                                       "and {}), which no [B, ℓ] shard can hold",
                                       lead(r, name), e0.seq, em.seq)),
            rows * e0.seq);
        return false;
      }
    }
    const Shape want = with_rows_and_seq(f0.value, f0.seq_dim, rows, e0.seq);
    if (actual.shape() == want) return true;
    if (rows == 1 && actual.numel() == shape_numel(want) &&
        actual.dim() + 1 == static_cast<std::int64_t>(want.size())) {
      out_.notes.push_back(fmt::format("rank {} {}: {} read as {}", r, name,
                                       shape_str(actual.shape()), shape_str(want)));
      actual = actual.reshaped(want);
      return true;
    }
    add(key_difference(r, name, DiffKind::shape,
                       fmt::format("{}: shape {}, the layout gives rank {} {}", lead(r, name),
                                   shape_str(actual.shape()), r, shape_str(want))),
        rows * e0.seq);
    return false;
  }

  // Row j of microbatch m of rank r's token key, slot by slot: each wrong slot told by the global
  // slot whose value it holds, and runs of them grouped into one difference.
  void row_slots(std::int64_t r, const std::string& name, const Tensor& actual,
                 const TokenAxes& held_axes, std::int64_t m, std::int64_t j) {
    const TokenField& f0 = sharded_[0][r].tokens.at(name);
    const TokenAxes e0 = token_axes(f0.value, f0.seq_dim, "check");
    const std::int64_t rows = e0.rows * plan_.spec.microbatches;
    const bool same_dtype = actual.dtype() == f0.value.dtype();
    const Tensor& expected = sharded_[m][r].tokens.at(name).value;
    const RowPlan& row = plan_.rows[static_cast<std::size_t>(m * per_ + j)];
    const std::int64_t held_row = m * per_ + j;
    std::vector<SlotDiff> slots;
    for (std::int64_t k = 0; k < e0.seq; ++k) {
      // Equal bytes are equal tokens (the common case, without a copy); otherwise compare
      // values (another dtype, or NaNs of other bits).
      if (same_dtype && same_bytes(expected, e0, j, k, actual, held_axes, held_row)) continue;
      SlotDiff s;
      s.expected = token_at(expected, e0, j, k);
      s.actual = token_at(actual, held_axes, held_row, k);
      if (same_token(s.expected, s.actual)) continue;
      s.k = k;
      s.g = row.index[r][k];
      s.pad = row.caller_pos[s.g] < 0;
      const bool after = !slots.empty() && slots.back().k == k - 1;
      s.held = value_index(name, m, j).locate(s.actual, after ? slots.back().held : -1);
      slots.push_back(std::move(s));
    }
    const RunContext where{.rank = r,
                           .key = name,
                           .row = held_row,
                           .show_row = rows > 1,
                           .pad_rule = pad_rule_text(f0, plan_.spec)};
    for (Difference& d : group_runs(where, slots)) add(std::move(d), 0);
    out_.score += static_cast<std::int64_t>(slots.size());
  }

  static bool same_bytes(const Tensor& a, const TokenAxes& aa, std::int64_t arow, std::int64_t k,
                         const Tensor& b, const TokenAxes& ba, std::int64_t brow) {
    const std::size_t bytes = aa.token_bytes();
    for (std::int64_t o = 0; o < aa.outer; ++o) {
      if (std::memcmp(a.raw() + aa.flat(o, arow, k) * static_cast<std::int64_t>(aa.elem),
                      b.raw() + ba.flat(o, brow, k) * static_cast<std::int64_t>(ba.elem),
                      bytes) != 0)
        return false;
    }
    return true;
  }

  // Where each value sits in row j of microbatch m's global stream of `name`: built on the first
  // wrong slot of any rank and kept for the others (one O(L log L) index per key and row, not one
  // per rank).
  const ValueIndex& value_index(const std::string& name, std::int64_t m, std::int64_t j) {
    const auto key = std::make_tuple(name, m, j);
    auto it = indexes_.find(key);
    if (it != indexes_.end()) return it->second;
    const auto global_key = std::make_pair(name, m);
    auto g = globals_.find(global_key);
    if (g == globals_.end()) {
      const ShardPlan part = reference::microbatch_plan(plan_, m);
      std::vector<Tensor> locals;
      for (const Batch& rank_batch : sharded_[m])
        locals.push_back(rank_batch.tokens.at(name).value);
      const std::int64_t seq_dim = sharded_[m][0].tokens.at(name).seq_dim;
      g = globals_.emplace(global_key, reference::place_ranks(part, locals, seq_dim)).first;
    }
    const TokenAxes axes = token_axes(g->second, sharded_[m][0].tokens.at(name).seq_dim, "check");
    return indexes_.emplace(key, ValueIndex(g->second, axes, j)).first->second;
  }

  // The first global slot (b·S + t) where the batch's attention_mask is 0 before a 1 of the same
  // row, or holds a value other than 0 and 1: what a causal kernel cannot know without the mask.
  // -1 when there is none, and the mask may be dropped.
  std::int64_t attention_mask_hole() {
    if (!mask_hole_) mask_hole_ = find_attention_mask_hole();
    return *mask_hole_;
  }
  std::int64_t find_attention_mask_hole() const {
    const Tensor& mask = batch_.at(kAttentionMask);
    const std::int64_t rows = batch_.rows(), seq = batch_.seq_len();
    if (mask.numel() != rows * seq) return 0;
    for (std::int64_t b = 0; b < rows; ++b) {
      std::int64_t first_zero = -1;
      for (std::int64_t t = 0; t < seq; ++t) {
        const double v = mask.get(b * seq + t);
        if (v != 0.0 && v != 1.0) return b * seq + t;
        if (v == 0.0 && first_zero < 0) first_zero = t;
        if (v == 1.0 && first_zero >= 0) return b * seq + first_zero;
      }
    }
    return -1;
  }

  void add(Difference d, std::int64_t score) { add_difference(out_, std::move(d), score); }

  const ShardPlan& plan_;
  const Batch& batch_;
  const std::vector<io::TensorFile>& shards_;
  Outcome& out_;
  const std::vector<std::vector<Batch>> sharded_;
  const std::int64_t per_;
  std::map<std::pair<std::string, std::int64_t>, Tensor> globals_;  // (key, microbatch)
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, ValueIndex> indexes_;
  SeqlensRules tables_;
  std::optional<std::int64_t> mask_hole_;  // attention_mask_hole(), read once
};

}  // namespace

std::int64_t shard_local_len(const Batch& batch, const std::vector<io::TensorFile>& shards) {
  if (shards.empty()) return 0;
  std::vector<std::string> names = {keys::input_ids, keys::inputs_embeds, keys::labels};
  for (const auto& [name, field] : batch.tokens) names.push_back(name);
  for (const std::string& name : names) {
    const auto it = shards[0].tensors.find(name);
    if (it == shards[0].tensors.end() || !batch.has(name)) continue;
    const std::int64_t seq_dim = batch.tokens.at(name).seq_dim;
    const Tensor& t = it->second;
    if (t.dim() > seq_dim) return t.size(seq_dim);
    if (t.dim() == seq_dim && seq_dim >= 1) return t.size(seq_dim - 1);  // a [ℓ] row
  }
  return 0;
}

Outcome check_shards(const LayoutSpec& spec, const Batch& given_batch,
                     const std::vector<io::TensorFile>& shards, const Conventions& conventions) {
  CPLAB_CHECK(static_cast<std::int64_t>(shards.size()) == spec.cp,
              "{} shard files for cp={}: give one per rank, in rank order", shards.size(), spec.cp);
  std::vector<std::string> derived;
  bool padding_for_attention = false;
  const Batch batch = with_derived_masks(given_batch, shards, derived, padding_for_attention);
  LayoutSpec base = spec;
  base.microbatches = batch.packed() ? batch.rows() : 1;
  ShardPlan plan = reference::plan(base, batch);
  std::string pad_id_from = "--pad-id";
  if (conventions.pad_id) {
    plan.spec.pad_token_id = *conventions.pad_id;
  } else if (const auto read = read_pad_id(plan, shards)) {
    plan.spec.pad_token_id = *read;
    pad_id_from = "the shards' pad slots";
  } else {
    pad_id_from = "default (the shards hold no added slot)";
  }
  std::vector<PadPolicy> policies;
  if (conventions.policy) {
    policies.push_back(*conventions.policy);
  } else {
    for (const PolicyInfo& p : pad_policies()) policies.push_back(p.policy);
  }
  std::optional<Outcome> best;
  for (PadPolicy policy : policies) {
    plan.spec.pad_policy = policy;
    Outcome out;
    out.spec = plan.spec;
    out.pad_id_from = pad_id_from;
    out.policy_given = conventions.policy.has_value();
    out.notes = derived;
    out.padding_mask_for_attention_mask = padding_for_attention;
    Comparison(plan, batch, shards, out).run();
    if (!best || out.score < best->score) best = std::move(out);
  }
  std::sort(best->cu_conventions.begin(), best->cu_conventions.end());
  best->cu_conventions.erase(std::unique(best->cu_conventions.begin(), best->cu_conventions.end()),
                             best->cu_conventions.end());
  best->cu_seqlens = fmt::format("{}", fmt::join(best->cu_conventions, "+"));
  return std::move(*best);
}

}  // namespace cplab::check
