// `--layout auto` (layout_search.hpp): every candidate plan, each distinct one checked in full.
#include "check/layout_search.hpp"

#include <algorithm>
#include <map>

#include "reference/plan.hpp"
#include "reference/types/error.hpp"

namespace cplab::check {
namespace {

// A plan's identity: two option sets giving the same maps, positions and tables are one candidate.
std::vector<std::int64_t> plan_signature(const ShardPlan& plan) {
  std::vector<std::int64_t> sig;
  for (const RowPlan& row : plan.rows) {
    sig.push_back(row.padded_len);
    for (const auto& index : row.index) sig.insert(sig.end(), index.begin(), index.end());
    sig.insert(sig.end(), row.positions.begin(), row.positions.end());
    sig.insert(sig.end(), row.caller_pos.begin(), row.caller_pos.end());
    for (const auto& cu : row.local_cu_seqlens) {
      sig.push_back(-1);
      sig.insert(sig.end(), cu.begin(), cu.end());
    }
  }
  return sig;
}

std::vector<std::int64_t> option_values(bool fixed, std::int64_t value,
                                        std::vector<std::int64_t> tried) {
  if (fixed) return {value};
  return tried;
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

// Every registered layout with the option values that could have made shards of ℓ tokens, each
// distinct plan tried once; the best score wins (the first registered on ties).
Verdict find_layout(const LayoutSpec& given, const FixedOptions& fixed, const Batch& batch,
                    const std::vector<io::TensorFile>& shards, const Conventions& conventions) {
  const std::int64_t local = shard_local_len(batch, shards);
  std::vector<std::int64_t> chunk_sizes = {LayoutSpec{}.chunk_size};
  for (std::int64_t k = 1; k <= local; ++k) {
    if (local % k == 0 && k != chunk_sizes[0]) chunk_sizes.push_back(k);
  }
  const auto multiples = option_values(fixed.pad_multiple, given.pad_multiple, {2, 1, 3, 4, 8});
  if (fixed.chunk_size) chunk_sizes = {given.chunk_size};
  // Ring degrees R dividing C, block sizes B dividing ℓ (a rank holds whole blocks). These are
  // tried one axis at a time from the defaults: no layout reads both, and a cross product with the
  // pad multiples and chunk sizes would plan every layout thousands of times.
  std::vector<std::int64_t> ring_degrees, block_sizes;
  for (std::int64_t r = 1; r <= given.cp; ++r) {
    if (given.cp % r == 0 && r != LayoutSpec{}.ring_degree) ring_degrees.push_back(r);
  }
  for (std::int64_t b = 1; b <= local; ++b) {
    if (local % b == 0 && b != LayoutSpec{}.block_size) block_sizes.push_back(b);
  }
  if (fixed.ring_degree) ring_degrees.clear();
  if (fixed.block_size) block_sizes.clear();
  std::vector<LayoutSpec> option_sets;
  for (std::int64_t m : multiples) {
    for (std::int64_t k : chunk_sizes) {
      LayoutSpec spec = given;
      spec.pad_multiple = m;
      spec.chunk_size = k;
      option_sets.push_back(spec);
    }
  }
  const LayoutSpec defaults = option_sets.front();
  for (std::int64_t r : ring_degrees) {
    option_sets.push_back(defaults);
    option_sets.back().ring_degree = r;
  }
  for (std::int64_t b : block_sizes) {
    option_sets.push_back(defaults);
    option_sets.back().block_size = b;
  }
  std::map<std::vector<std::int64_t>, std::size_t> seen;  // signature → index in tried
  std::vector<Verdict> tried;
  std::vector<const reference::LayoutInfo*> tried_layout;
  std::vector<bool> defines_cu;  // the candidate's plan gives ranks local cu_seqlens
  for (const reference::LayoutInfo& info : reference::layouts()) {
    for (const LayoutSpec& options : option_sets) {
      LayoutSpec spec = options;
      spec.layout = info.name;
      LayoutSpec planned = spec;
      planned.microbatches = batch.packed() ? batch.rows() : 1;
      std::vector<std::int64_t> sig;
      bool has_cu = false;
      try {
        const ShardPlan plan = reference::plan(planned, batch);
        if (local > 0 && plan.rows[0].local_len() != local) continue;
        sig = plan_signature(plan);
        has_cu = !plan.rows[0].local_cu_seqlens.empty();
      } catch (const Error&) {
        continue;  // this layout cannot plan the batch (thd of a BSHD row, ...)
      }
      const auto known = seen.find(sig);
      if (known != seen.end()) {
        // Same plan under another name: an alias, reported with the winner.
        const std::string name = layout_brief(spec);
        auto& also = tried[known->second].also;
        if (tried_layout[known->second] != &info &&
            std::find(also.begin(), also.end(), name) == also.end()) {
          also.push_back(name);
        }
        continue;
      }
      seen[sig] = tried.size();
      Verdict v;
      v.automatic = true;
      v.outcome = check_shards(spec, batch, shards, conventions);
      tried.push_back(std::move(v));
      tried_layout.push_back(&info);
      defines_cu.push_back(has_cu);
    }
  }
  CPLAB_CHECK(!tried.empty(),
              "--layout auto: no registered layout at cp={} plans this batch into shards of {} "
              "tokens per rank",
              given.cp, local);
  // Equal scores: shards that carry THD metadata (cu_seqlens, max_seqlen) are better explained by
  // a layout that defines local cu_seqlens than by one with the same token maps and none.
  const bool thd_keys = !shards.empty() && (shards[0].tensors.count("cu_seqlens") != 0 ||
                                            shards[0].tensors.count("cu_seqlens_padded") != 0 ||
                                            shards[0].tensors.count("max_seqlen") != 0);
  std::size_t best = 0;
  for (std::size_t i = 1; i < tried.size(); ++i) {
    const std::int64_t score = tried[i].outcome.score, best_score = tried[best].outcome.score;
    if (score < best_score ||
        (score == best_score && thd_keys && defines_cu[i] && !defines_cu[best])) {
      best = i;
    }
  }
  Verdict verdict = std::move(tried[best]);
  verdict.candidates = static_cast<std::int64_t>(tried.size());
  return verdict;
}

}  // namespace cplab::check
