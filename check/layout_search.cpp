// `--layout auto` (layout_search.hpp). Planning a candidate and comparing every slot costs O(L)
// each, and a long row has hundreds of candidates (every chunk or block size dividing ℓ), so the
// search goes in two stages:
//   1. Every candidate (a layout with values of the options it reads) is tried at a few sampled
//      local slots of every rank, through the layout's closed-form map (sim/): the global slot it
//      puts there and whether the shards hold that slot's token. Nothing is planned.
//   2. The candidates that agree best are grouped (same slots sampled, same kind of map) and the
//      groups are planned by the reference and checked in full in that order, until one explains
//      the shards or the best few were tried; the best score wins.
// The samples only choose what to plan: every verdict is the reference's full comparison.
#include "check/layout_search.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/token_moves.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/partition.hpp"
#include "reference/plan.hpp"

namespace cplab::check {
namespace {

// Groups planned in full, at most. A few more than one, so that shards with a fault at a sampled
// slot are still compared in full with the runner-up.
constexpr std::size_t kPlannedGroups = 3;
constexpr std::int64_t kSampledRanks = 64;
constexpr std::int64_t kSamplesPerRank = 24;

// Every layout with the values of the options it declares that could have made shards of ℓ
// tokens on C ranks (each declaration's candidates); an option the caller fixed keeps its value.
std::vector<LayoutSpec> candidates(const LayoutSpec& given, const FixedOptions& fixed,
                                   std::int64_t local) {
  std::vector<LayoutSpec> out;
  for (const reference::LayoutInfo& info : reference::layouts()) {
    LayoutSpec base = given;
    base.layout = info.name;
    std::vector<LayoutSpec> specs = {base};
    for (const layouts::LayoutOption* o : layouts::options_of(info.name)) {
      if (o->candidates == nullptr || std::find(fixed.begin(), fixed.end(), o) != fixed.end())
        continue;
      std::vector<LayoutSpec> next;
      for (const LayoutSpec& s : specs) {
        for (std::int64_t v : o->candidates(given.cp, local)) {
          next.push_back(s);
          o->set(next.back(), v);
        }
      }
      specs = std::move(next);
    }
    out.insert(out.end(), specs.begin(), specs.end());
  }
  return out;
}

// The token values one key holds, read at (row, slot): the shards' and the batch's copies of the
// primary (or labels), the key every sharder hands out.
struct Probe {
  std::string key;
  std::int64_t seq_dim = 1;
  std::int64_t local = 0;
  const Tensor* global = nullptr;
  TokenAxes global_axes;
  std::vector<const Tensor*> shards;
  std::vector<TokenAxes> shard_axes;
  std::vector<std::pair<std::int64_t, std::int64_t>> samples;  // (rank, local slot)
  std::int64_t rows = 1;                                       // the shards' rows

  bool same(std::int64_t rank, std::int64_t row, std::int64_t k, std::int64_t caller) const {
    const TokenAxes& sa = shard_axes[static_cast<std::size_t>(rank)];
    for (std::int64_t o = 0; o < sa.outer; ++o) {
      for (std::int64_t e = 0; e < sa.inner; ++e) {
        if (shards[rank]->get(sa.flat(o, row, k, e)) !=
            global->get(global_axes.flat(o, row, caller, e)))
          return false;
      }
    }
    return true;
  }
};

// A probe of the first key the batch and every shard hold with the shape a rank's shard has
// ([B, ℓ, ...], or [ℓ, ...] for one row); nullopt when there is none (the search then plans
// every candidate).
std::optional<Probe> make_probe(const Batch& batch, const std::vector<io::TensorFile>& shards,
                                std::int64_t local) {
  if (shards.empty() || local <= 0) return std::nullopt;
  for (const char* key : {keys::input_ids, keys::labels, keys::inputs_embeds}) {
    if (!batch.has(key)) continue;
    Probe p;
    p.key = key;
    p.local = local;
    const TokenField& field = batch.tokens.at(key);
    p.seq_dim = field.seq_dim;
    p.global = &field.value;
    p.global_axes = token_axes(field.value, field.seq_dim, "check");
    bool usable = true;
    for (const io::TensorFile& file : shards) {
      const auto it = file.tensors.find(key);
      if (it == file.tensors.end()) {
        usable = false;
        break;
      }
      const Tensor& t = it->second;
      const bool one_row = t.dim() + 1 == field.value.dim() && batch.rows() == 1;
      const std::int64_t seq_dim = one_row ? field.seq_dim - 1 : field.seq_dim;
      if (seq_dim < 0 || t.dim() <= seq_dim || t.size(seq_dim) != local ||
          t.dtype() != field.value.dtype()) {
        usable = false;
        break;
      }
      TokenAxes axes =
          one_row ? token_axes(t.reshaped(with_rows_and_seq(field.value, field.seq_dim, 1, local)),
                               field.seq_dim, "check")
                  : token_axes(t, field.seq_dim, "check");
      if (axes.rows != batch.rows() || axes.inner != p.global_axes.inner ||
          axes.outer != p.global_axes.outer) {
        usable = false;
        break;
      }
      p.shards.push_back(&t);
      p.shard_axes.push_back(axes);
    }
    if (!usable) continue;
    p.rows = batch.rows();
    // A deterministic spread: both ends of every rank's shard, its middle, and a stride through
    // the rest, on up to kSampledRanks ranks spread over the group.
    const auto cp = static_cast<std::int64_t>(shards.size());
    const std::int64_t rank_step = std::max<std::int64_t>(1, cp / kSampledRanks);
    for (std::int64_t r = 0; r < cp; r += rank_step) {
      std::vector<std::int64_t> ks = {0, 1, local / 2, local - 2, local - 1};
      for (std::int64_t i = 1; i < kSamplesPerRank - 4; ++i) {
        ks.push_back((i * 7919 + r * 104729) % local);
      }
      std::sort(ks.begin(), ks.end());
      ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
      for (std::int64_t k : ks) {
        if (k >= 0 && k < local) p.samples.emplace_back(r, k);
      }
    }
    return p;
  }
  return std::nullopt;
}

// What one candidate puts at the sampled slots: the caller position of each (-1: a slot the
// layout added), and how many of the caller's tokens the shards do not hold there.
struct Sampled {
  std::vector<std::int64_t> callers;
  std::int64_t mismatches = 0;
  bool relaid = false;
};

// The caller position stream slot g holds: the caller row as it is with padding appended, or
// (re-laid documents) the real tokens of each document at its caller offset.
std::int64_t caller_of(const sim::RowStream& stream, std::int64_t g) {
  if (!stream.relaid) return g < stream.caller_len ? g : -1;
  const auto& bounds = stream.doc_bounds;
  const auto it = std::upper_bound(bounds.begin(), bounds.end(), g);
  if (it == bounds.begin() || it == bounds.end()) return -1;
  const auto doc = static_cast<std::size_t>(it - bounds.begin() - 1);
  const std::int64_t offset = g - bounds[doc];
  return offset < stream.doc_real[doc] ? stream.caller_start[doc] + offset : -1;
}

// Tries a candidate at the probe's samples through the twin's closed-form maps; nullopt when the
// layout cannot lay out the batch, or not into shards of the probe's length.
std::optional<Sampled> sample(const LayoutSpec& candidate, const Batch& batch, const Probe& probe) {
  try {
    LayoutSpec spec = candidate;
    spec.microbatches = batch.packed() ? batch.rows() : 1;
    validate_spec(spec);
    const std::vector<sim::MicrobatchRows> micro = sim::microbatch_rows(spec, batch);
    Sampled out;
    std::int64_t row0 = 0;
    for (const sim::MicrobatchRows& rows : micro) {
      const sim::RowStream stream = sim::row_stream(spec, rows);
      if (stream.padded_len != probe.local * spec.cp) return std::nullopt;
      const sim::LayoutMap map = sim::stream_map(stream);
      out.relaid = out.relaid || stream.relaid;
      for (std::size_t i = 0; i < probe.samples.size(); ++i) {
        const auto [rank, k] = probe.samples[i];
        const std::int64_t row = row0 + static_cast<std::int64_t>(i) % rows.rows;
        const std::int64_t caller = caller_of(stream, map.global_index(rank, k));
        out.callers.push_back(caller);
        if (caller >= 0 && !probe.same(rank, row, k, caller)) ++out.mismatches;
      }
      row0 += rows.rows;
    }
    return out;
  } catch (const Error&) {
    return std::nullopt;  // this layout cannot lay out the batch (thd of a BSHD row, ...)
  }
}

// Candidates that the samples cannot tell apart: the same caller positions at every sampled slot
// and the same kind of map (documents re-laid, positions, whole local documents, varlen segments).
struct Group {
  std::vector<std::size_t> members;  // indices into the candidates, registry order
  std::int64_t mismatches = 0;
};

// Positions that are stream indices differ from offsets in each document only in packed rows
// (in a BSHD row both count from the row's start, pads continuing), so only there do they set a
// candidate apart.
std::vector<std::int64_t> group_key(const LayoutSpec& spec, const Sampled& s, bool packed) {
  const sim::LayoutDescriptor& d = sim::layout_descriptor(spec.layout);
  std::vector<std::int64_t> key = {packed && s.relaid, packed && d.stream_positions,
                                   d.local_documents, d.attention.varlen_segments};
  key.insert(key.end(), s.callers.begin(), s.callers.end());
  return key;
}

// Full plans of a few candidates, each checked against the shards; the best score wins.
struct Tried {
  Verdict verdict;
  bool defines_cu = false;
};

std::optional<Tried> plan_and_check(const LayoutSpec& spec, const Batch& batch,
                                    const std::vector<io::TensorFile>& shards,
                                    const Conventions& conventions, std::int64_t local) {
  LayoutSpec planned = spec;
  planned.microbatches = batch.packed() ? batch.rows() : 1;
  ShardPlan plan;
  try {
    plan = reference::plan(planned, batch);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (local > 0 && plan.rows[0].local_len() != local) return std::nullopt;
  Tried t;
  t.defines_cu = !plan.rows[0].local_cu_seqlens.empty();
  t.verdict.automatic = true;
  t.verdict.outcome = check_shards(spec, batch, shards, conventions);
  return t;
}

// The caller position every (rank, local slot) holds under a candidate, row by row, through the
// closed-form maps; empty when it cannot lay out the batch. Two candidates of one group (same
// kind of map) with the same positions everywhere have the same plan: aliases.
std::vector<std::int64_t> all_callers(const LayoutSpec& candidate, const Batch& batch) {
  std::vector<std::int64_t> out;
  try {
    LayoutSpec spec = candidate;
    spec.microbatches = batch.packed() ? batch.rows() : 1;
    for (const sim::MicrobatchRows& rows : sim::microbatch_rows(spec, batch)) {
      const sim::RowStream stream = sim::row_stream(spec, rows);
      const sim::LayoutMap map = sim::stream_map(stream);
      out.push_back(stream.padded_len);
      for (std::int64_t r = 0; r < spec.cp; ++r) {
        for (std::int64_t k = 0; k < map.local_len(); ++k)
          out.push_back(caller_of(stream, map.global_index(r, k)));
      }
    }
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

}  // namespace

// What the layout looks like to a reader: its name, C and the options that differ from defaults.
std::string layout_brief(LayoutSpec spec) {
  const LayoutSpec defaults;
  spec.pad_policy = defaults.pad_policy;
  spec.pad_token_id = defaults.pad_token_id;
  spec.microbatches = defaults.microbatches;
  return spec_brief(spec);
}

Verdict find_layout(const LayoutSpec& given, const FixedOptions& fixed, const Batch& batch,
                    const std::vector<io::TensorFile>& shards, const Conventions& conventions) {
  const std::int64_t local = shard_local_len(batch, shards);
  const std::vector<LayoutSpec> all = candidates(given, fixed, local);
  const std::optional<Probe> probe = make_probe(batch, shards, local);

  // Stage 1: the samples group the candidates; without a probe every candidate is its own group.
  std::vector<Group> groups;
  if (probe) {
    std::map<std::vector<std::int64_t>, std::size_t> index;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::optional<Sampled> s = sample(all[i], batch, *probe);
      if (!s) continue;
      const auto [it, inserted] =
          index.emplace(group_key(all[i], *s, batch.packed()), groups.size());
      if (inserted) groups.push_back({{}, s->mismatches});
      groups[it->second].members.push_back(i);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return a.mismatches < b.mismatches; });
    if (groups.size() > kPlannedGroups) groups.resize(kPlannedGroups);
  } else {
    for (std::size_t i = 0; i < all.size(); ++i) groups.push_back({{i}, 0});
  }

  // Stage 2: the first member of each group is planned and checked in full; the others are its
  // aliases when their plans are the same (checked only for a group that explains the shards).
  const bool thd_keys = !shards.empty() && (shards[0].tensors.count("cu_seqlens") != 0 ||
                                            shards[0].tensors.count("cu_seqlens_padded") != 0 ||
                                            shards[0].tensors.count("max_seqlen") != 0);
  std::optional<Tried> best;
  std::int64_t planned = 0;
  for (const Group& group : groups) {
    if (best && best->verdict.outcome.score == 0) break;  // explained: the rest can only tie
    const LayoutSpec& leader = all[group.members[0]];
    std::optional<Tried> tried = plan_and_check(leader, batch, shards, conventions, local);
    if (!tried) continue;
    ++planned;
    if (tried->verdict.outcome.score == 0 && group.members.size() > 1) {
      const std::vector<std::int64_t> mine = all_callers(leader, batch);
      for (std::size_t m = 1; m < group.members.size(); ++m) {
        const LayoutSpec& alias = all[group.members[m]];
        const std::string name = layout_brief(alias);
        auto& also = tried->verdict.also;
        if (alias.layout == leader.layout || mine.empty() || all_callers(alias, batch) != mine ||
            std::find(also.begin(), also.end(), name) != also.end())
          continue;
        also.push_back(name);
      }
    }
    const std::int64_t score = tried->verdict.outcome.score;
    // Equal scores: shards that carry THD metadata (cu_seqlens, max_seqlen) are better explained
    // by a layout that defines local cu_seqlens than by one with the same token maps and none.
    if (!best || score < best->verdict.outcome.score ||
        (score == best->verdict.outcome.score && thd_keys && tried->defines_cu &&
         !best->defines_cu)) {
      best = std::move(tried);
    }
  }
  CPLAB_CHECK(best.has_value(),
              "--layout auto: no registered layout at cp={} plans this batch into shards of {} "
              "tokens per rank",
              given.cp, local);
  Verdict verdict = std::move(best->verdict);
  verdict.candidates = static_cast<std::int64_t>(all.size());
  verdict.planned = planned;
  return verdict;
}

}  // namespace cplab::check
