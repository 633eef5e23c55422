#include "gpu/host/attention_plan.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace cplab::gpu {

HeldKeys HeldKeys::one(std::int64_t cp, std::int64_t rank, std::int64_t rows, std::int64_t local) {
  CPLAB_CHECK(cp >= 1 && rank >= 0 && rank < cp, "held keys: rank {} outside a group of {}", rank,
              cp);
  HeldKeys h{.rows = rows, .local = local, .shard_of_rank = std::vector<std::int64_t>(cp, -1)};
  h.shard_of_rank[static_cast<std::size_t>(rank)] = 0;
  return h;
}

HeldKeys HeldKeys::all(std::int64_t cp, std::int64_t rows, std::int64_t local) {
  CPLAB_CHECK(cp >= 1, "held keys: a group of {} ranks", cp);
  HeldKeys h{.rows = rows, .local = local, .shard_of_rank = std::vector<std::int64_t>(cp)};
  for (std::int64_t r = 0; r < cp; ++r) h.shard_of_rank[static_cast<std::size_t>(r)] = r;
  return h;
}

HeldKeys HeldKeys::sequence(std::int64_t cp, std::int64_t rows, std::int64_t local) {
  HeldKeys h = all(cp, rows, local);
  h.by_slot = true;
  return h;
}

bool HeldKeys::holds(std::int64_t rank) const {
  return rank >= 0 && rank < static_cast<std::int64_t>(shard_of_rank.size()) &&
         shard_of_rank[static_cast<std::size_t>(rank)] >= 0;
}

std::int64_t HeldKeys::shards() const {
  return static_cast<std::int64_t>(
      std::count_if(shard_of_rank.begin(), shard_of_rank.end(), [](auto s) { return s >= 0; }));
}

namespace {

struct Where {
  std::size_t row, step;
  std::int64_t rank;
};

// The positions of one buffer: each piece's local range resolved to tensor rows and facts. Held
// null: the rank's own shard, the only one a query buffer may name then.
void resolve_pieces(const sim::AttentionSchedule& s, const std::vector<sim::BufferPiece>& pieces,
                    const char* buffer, const Where& at, const HeldKeys* held,
                    std::vector<AttnPosition>& out) {
  const std::int64_t local = s.local_len(), b = static_cast<std::int64_t>(at.row);
  for (const sim::BufferPiece& p : pieces) {
    CPLAB_CHECK(p.rank >= 0 && p.rank < s.cp && p.local.begin >= 0 &&
                    p.local.begin <= p.local.end && p.local.end <= local,
                "gpu cp_attention: row {} step {} rank {}: a {} piece [{}, {}) of rank {} is "
                "outside the shards (C = {}, ℓ = {})",
                at.row, at.step, at.rank, buffer, p.local.begin, p.local.end, p.rank, s.cp, local);
    if (held == nullptr) {
      CPLAB_CHECK(p.rank == at.rank,
                  "gpu cp_attention: row {} step {} rank {}: the query buffer has a piece of rank "
                  "{}; queries come from the rank's own shard",
                  at.row, at.step, at.rank, p.rank);
    } else {
      CPLAB_CHECK(held->holds(p.rank),
                  "gpu cp_attention: row {} step {} rank {}: the schedule reads {}s of rank {}, "
                  "whose shard this rank does not hold at this step",
                  at.row, at.step, at.rank, buffer, p.rank);
    }
    const auto& index = s.index[static_cast<std::size_t>(p.rank)];
    for (std::int64_t k = p.local.begin; k < p.local.end; ++k) {
      const std::int64_t slot = index[static_cast<std::size_t>(k)];
      const std::int64_t token = held ? held->token(p.rank, b, k, slot) : b * local + k;
      out.push_back({.token = token, .fact = b * s.padded_len + slot});
    }
  }
}

void check_row_shape(const sim::AttentionSchedule& s, const sim::AttentionSchedule& first,
                     std::size_t row) {
  CPLAB_CHECK(
      s.cp == first.cp && s.padded_len == first.padded_len && s.steps.size() == first.steps.size(),
      "gpu cp_attention: row {} has C = {}, L = {} and {} steps; row 0 has C = {}, L = {} "
      "and {} steps",
      row, s.cp, s.padded_len, s.steps.size(), first.cp, first.padded_len, first.steps.size());
  CPLAB_CHECK(s.cp >= 1 && s.padded_len % s.cp == 0 &&
                  static_cast<std::int64_t>(s.index.size()) == s.cp &&
                  static_cast<std::int64_t>(s.doc_ids.size()) == s.padded_len &&
                  static_cast<std::int64_t>(s.real.size()) == s.padded_len,
              "gpu cp_attention: row {}: the schedule's facts do not fit C = {}, L = {} ({} index "
              "maps, {} document ids, {} real flags)",
              row, s.cp, s.padded_len, s.index.size(), s.doc_ids.size(), s.real.size());
  for (const auto& map : s.index) {
    CPLAB_CHECK(static_cast<std::int64_t>(map.size()) == s.local_len(),
                "gpu cp_attention: row {}: an index map of {} entries; ℓ = {}", row, map.size(),
                s.local_len());
    for (const std::int64_t g : map)
      CPLAB_CHECK(g >= 0 && g < s.padded_len,
                  "gpu cp_attention: row {}: index map slot {} outside [0, {})", row, g,
                  s.padded_len);
  }
}

}  // namespace

void check_step_source(const std::vector<sim::AttentionSchedule>& rows, std::size_t step,
                       std::int64_t rank, const std::vector<sim::Exchange>& exchanges,
                       std::int64_t kv_from, std::int64_t heads) {
  for (std::size_t b = 0; b < rows.size(); ++b) {
    CPLAB_CHECK(step < rows[b].steps.size(), "gpu cp_attention: row {} has no step {}", b, step);
    const sim::ScheduleStep& s = rows[b].steps[step];
    const bool known = std::find(exchanges.begin(), exchanges.end(), s.exchange) != exchanges.end();
    CPLAB_CHECK(known,
                "gpu cp_attention: row {} step {} is brought by {}; this step moves K/V by {}", b,
                step, sim::exchange_name(s.exchange),
                exchanges.empty() ? "nothing" : sim::exchange_name(exchanges.front()));
    CPLAB_CHECK(
        rank >= 0 && static_cast<std::int64_t>(s.ranks.size()) == rows[b].cp && rank < rows[b].cp,
        "gpu cp_attention: row {} step {} lists {} ranks; C = {}, rank {}", b, step, s.ranks.size(),
        rows[b].cp, rank);
    const sim::RankStep& rs = s.ranks[static_cast<std::size_t>(rank)];
    CPLAB_CHECK(rs.kv_from == kv_from,
                "gpu cp_attention: row {} step {}: the schedule has rank {} hold the K/V of {}, "
                "but the rank holds those of {}",
                b, step, rank, rs.kv_from, kv_from);
    CPLAB_CHECK(rs.heads == heads,
                "gpu cp_attention: row {} step {}: the schedule has rank {} compute {} heads; the "
                "tensors have H = {}",
                b, step, rank, rs.heads, heads);
  }
}

std::vector<AttnTile> block_tiles(const std::vector<AttnBlock>& blocks, bool keys,
                                  std::int64_t tile) {
  CPLAB_CHECK(tile >= 1, "gpu cp_attention: tile of {} rows", tile);
  std::vector<AttnTile> tiles;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::int64_t n = keys ? blocks[i].k_len : blocks[i].q_len;
    for (std::int64_t begin = 0; begin < n; begin += tile)
      tiles.push_back({.block = static_cast<std::int64_t>(i),
                       .begin = begin,
                       .len = std::min(tile, n - begin)});
  }
  return tiles;
}

StepLaunch plan_step(const std::vector<sim::AttentionSchedule>& rows, std::size_t step,
                     std::int64_t rank, const HeldKeys& held, std::int64_t tile,
                     const HeldKeys* held_queries) {
  CPLAB_CHECK(!rows.empty(), "gpu cp_attention: no schedule rows");
  CPLAB_CHECK(
      held.rows == static_cast<std::int64_t>(rows.size()) && held.local == rows.front().local_len(),
      "gpu cp_attention: held keys of {} rows × {} tokens for {} rows of ℓ = {}", held.rows,
      held.local, rows.size(), rows.front().local_len());
  CPLAB_CHECK(held_queries == nullptr ||
                  (held_queries->rows == held.rows && held_queries->local == held.local),
              "gpu cp_attention: held queries of {} rows × {} tokens, keys of {} × {}",
              held_queries ? held_queries->rows : 0, held_queries ? held_queries->local : 0,
              held.rows, held.local);
  StepLaunch launch;
  const std::int64_t query_tokens =
      held_queries ? held_queries->tokens() : held.rows * rows.front().local_len();
  std::vector<std::vector<std::int64_t>> merge_of_token(static_cast<std::size_t>(query_tokens));
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const sim::AttentionSchedule& s = rows[b];
    check_row_shape(s, rows.front(), b);
    CPLAB_CHECK(step < s.steps.size() && rank >= 0 &&
                    rank < static_cast<std::int64_t>(s.steps[step].ranks.size()),
                "gpu cp_attention: row {}: no step {} for rank {} ({} steps)", b, step, rank,
                s.steps.size());
    const sim::RankStep& rs = s.steps[step].ranks[static_cast<std::size_t>(rank)];
    const Where at{b, step, rank};
    CPLAB_CHECK(rs.rank == rank, "gpu cp_attention: row {} step {}: entry {} is rank {}", b, step,
                rank, rs.rank);
    const auto q0 = static_cast<std::int64_t>(launch.queries.size());
    const auto k0 = static_cast<std::int64_t>(launch.keys.size());
    resolve_pieces(s, rs.queries, "query", at, held_queries, launch.queries);
    resolve_pieces(s, rs.keys, "key", at, &held, launch.keys);
    const std::int64_t q_size = static_cast<std::int64_t>(launch.queries.size()) - q0;
    const std::int64_t k_size = static_cast<std::int64_t>(launch.keys.size()) - k0;
    for (const sim::ScheduleBlock& blk : rs.blocks) {
      const auto mask = static_cast<int>(blk.mask);
      CPLAB_CHECK(mask == sim::kMaskFull || mask == sim::kMaskCausal || mask == sim::kMaskDocCausal,
                  "gpu cp_attention: row {} step {} rank {}: a block masked {} (a computed block "
                  "is full, causal or doc-causal)",
                  b, step, rank, mask);
      CPLAB_CHECK(blk.q.begin >= 0 && blk.q.begin < blk.q.end && blk.q.end <= q_size &&
                      blk.k.begin >= 0 && blk.k.begin < blk.k.end && blk.k.end <= k_size,
                  "gpu cp_attention: row {} step {} rank {}: block q [{}, {}) k [{}, {}) is empty "
                  "or leaves its buffers ({} queries, {} keys)",
                  b, step, rank, blk.q.begin, blk.q.end, blk.k.begin, blk.k.end, q_size, k_size);
      const AttnBlock out{.q_begin = q0 + blk.q.begin,
                          .q_len = blk.q.size(),
                          .k_begin = k0 + blk.k.begin,
                          .k_len = blk.k.size(),
                          .out_begin = launch.out_rows,
                          .diagonal = blk.diagonal,
                          .mask = mask,
                          .row = static_cast<std::int32_t>(b)};
      for (std::int64_t i = 0; i < out.q_len; ++i) {
        const std::int64_t token = launch.queries[static_cast<std::size_t>(out.q_begin + i)].token;
        merge_of_token[static_cast<std::size_t>(token)].push_back(out.out_begin + i);
      }
      launch.blocks.push_back(out);
      launch.out_rows += out.q_len;
      launch.pairs += blk.pairs;
    }
  }
  launch.query_tiles = block_tiles(launch.blocks, false, tile);
  launch.key_tiles = block_tiles(launch.blocks, true, tile);
  launch.merge_offsets.push_back(0);
  for (std::size_t t = 0; t < merge_of_token.size(); ++t) {
    if (merge_of_token[t].empty()) continue;
    launch.merge_tokens.push_back(static_cast<std::int64_t>(t));
    launch.merge_rows.insert(launch.merge_rows.end(), merge_of_token[t].begin(),
                             merge_of_token[t].end());
    launch.merge_offsets.push_back(static_cast<std::int64_t>(launch.merge_rows.size()));
  }
  return launch;
}

std::vector<sim::TokenFacts> token_facts(const std::vector<sim::AttentionSchedule>& rows) {
  std::vector<sim::TokenFacts> facts;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const sim::AttentionSchedule& s = rows[b];
    check_row_shape(s, rows.front(), b);
    CPLAB_CHECK(
        static_cast<std::int64_t>(s.facts.size()) == s.padded_len && s.mask == rows.front().mask,
        "gpu cp_attention: row {} holds {} token facts for L = {}, under mask {} (row 0: {})", b,
        s.facts.size(), s.padded_len, sim::mask_text(s.mask), sim::mask_text(rows.front().mask));
    facts.insert(facts.end(), s.facts.begin(), s.facts.end());
  }
  return facts;
}

std::int64_t launch_pairs(const StepLaunch& launch, const std::vector<sim::TokenFacts>& facts,
                          const sim::MaskRule& rule) {
  std::int64_t pairs = 0;
  for (const AttnBlock& b : launch.blocks)
    for (std::int64_t i = 0; i < b.q_len; ++i) {
      const auto& qf = facts.at(static_cast<std::size_t>(
          launch.queries.at(static_cast<std::size_t>(b.q_begin + i)).fact));
      for (std::int64_t j = 0; j < b.k_len; ++j) {
        const auto& kf = facts.at(
            static_cast<std::size_t>(launch.keys.at(static_cast<std::size_t>(b.k_begin + j)).fact));
        pairs += sim::block_pair_visible(b.mask, b.diagonal, i, j, qf, kf, rule);
      }
    }
  return pairs;
}

RingStepBytes ring_step_bytes(std::int64_t tokens, std::int64_t kv_heads, std::int64_t head_dim,
                              DType dtype) {
  const std::int64_t elems = tokens * kv_heads * head_dim;
  const auto es = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t f32 = static_cast<std::int64_t>(sizeof(float));
  return {.forward = 2 * elems * es,
          .backward = 2 * elems * es + 2 * elems * f32,
          .delivery = 2 * elems * f32};
}

}  // namespace cplab::gpu
