// Building a CP attention schedule (SPEC §13): which buffers each rank holds at each step of an
// algorithm, the blocks of each rank step (schedule_blocks.cpp), the bytes each exchange moves,
// and the totals.
#include "attention/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "attention/schedule_blocks.hpp"
#include "core/error.hpp"
#include "layouts/layout_descriptor.hpp"

namespace cplab::sim {
namespace {

// a·b and a + b, or ScheduleTooLarge naming what overflowed: an absurd shape (H·d near 2^63) is
// bad input, never a wrapped count.
[[noreturn]] void overflows(const char* what) {
  throw ScheduleTooLarge(fmt::format(
      "schedule: the count of {} overflows 64 bits; lower --heads, --kv-heads, --head-dim or the "
      "row's length",
      what));
}
std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflows(what);
  return r;
}
std::int64_t add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflows(what);
  return r;
}

// A ring's dK and dV accumulate and travel in f32 (SPEC §13.2), whatever the input dtype, as
// ring-flash-attention's ring backward passes them; all-gather's reduce-scatter is in the input
// dtype (its llama3 backward's dK/dV buffer has K's dtype).
constexpr std::int64_t kGradBytes = 4;

// usp's rings are the layout's own (layout_ring_degree).
std::int64_t ring_degree_of(AttentionAlgo algo, const LayoutDescriptor& layout,
                            const LayoutSpec& spec) {
  switch (algo) {
    case AttentionAlgo::ring:
      return spec.cp;
    case AttentionAlgo::usp:
      return layout_ring_degree(layout, spec);
    default:
      return 1;
  }
}

std::int64_t ulysses_degree_of(AttentionAlgo algo, const LayoutDescriptor& layout,
                               const LayoutSpec& spec) {
  switch (algo) {
    case AttentionAlgo::ulysses:
      return spec.cp;
    case AttentionAlgo::usp:
      return spec.cp / std::max<std::int64_t>(1, layout_ring_degree(layout, spec));
    default:
      return 1;
  }
}

// Every shard of ranks [first, first + count) in rank order.
std::vector<BufferPiece> shards_of(std::int64_t first, std::int64_t count, std::int64_t local) {
  std::vector<BufferPiece> pieces;
  for (std::int64_t r = first; r < first + count; ++r)
    pieces.push_back({.rank = r, .local = {0, local}});
  return pieces;
}

// The buffers of every step and rank, before blocking: which shards each rank holds.
std::vector<ScheduleStep> buffers_of(const AttentionSchedule& s) {
  const std::int64_t cp = s.cp, local = s.local_len();
  const std::int64_t heads_per_rank = s.shape.heads / s.ulysses_degree;
  std::vector<ScheduleStep> steps;
  auto add_rank = [&](ScheduleStep& step, std::int64_t r, std::int64_t kv_from,
                      std::vector<BufferPiece> queries, std::vector<BufferPiece> keys) {
    RankStep& rank = step.ranks.emplace_back();
    rank.rank = r;
    rank.kv_from = kv_from;
    rank.queries = std::move(queries);
    rank.keys = std::move(keys);
    rank.heads = heads_per_rank;
  };
  switch (s.algo) {
    case AttentionAlgo::all_gather: {
      ScheduleStep& step =
          steps.emplace_back(ScheduleStep{.exchange = Exchange::all_gather, .ranks = {}});
      for (std::int64_t r = 0; r < cp; ++r)
        add_rank(step, r, -1, shards_of(r, 1, local), shards_of(0, cp, local));
      break;
    }
    case AttentionAlgo::ring:
      for (std::int64_t t = 0; t < cp; ++t) {
        ScheduleStep& step = steps.emplace_back(
            ScheduleStep{.exchange = t == 0 ? Exchange::none : Exchange::send_recv, .ranks = {}});
        for (std::int64_t r = 0; r < cp; ++r) {
          const std::int64_t from = ((r - t) % cp + cp) % cp;
          add_rank(step, r, from, shards_of(r, 1, local), shards_of(from, 1, local));
        }
      }
      break;
    case AttentionAlgo::ulysses: {
      ScheduleStep& step =
          steps.emplace_back(ScheduleStep{.exchange = Exchange::all_to_all, .ranks = {}});
      for (std::int64_t r = 0; r < cp; ++r)
        add_rank(step, r, -1, shards_of(0, cp, local), shards_of(0, cp, local));
      break;
    }
    case AttentionAlgo::usp: {
      // Ring step t, the first one carrying the all-to-all inside every Ulysses group: ring rank
      // q holds its own group's U shards as queries and group (q - t) mod R's as keys.
      const std::int64_t ring = s.ring_degree, group = s.ulysses_degree;
      for (std::int64_t t = 0; t < ring; ++t) {
        ScheduleStep& step = steps.emplace_back(ScheduleStep{
            .exchange = t == 0 ? Exchange::all_to_all : Exchange::send_recv, .ranks = {}});
        for (std::int64_t r = 0; r < cp; ++r) {
          const std::int64_t q = r / group, from = ((q - t) % ring + ring) % ring;
          add_rank(step, r, -1, shards_of(q * group, group, local),
                   shards_of(from * group, group, local));
        }
      }
      break;
    }
  }
  return steps;
}

// Bytes per rank of every exchange (sent = received: each is symmetric over the ranks). Per token,
// K and V are kv_heads·head_dim elements each; the Ulysses all-to-all moves Q, K, V in and the
// output back (K and V with their heads repeated up to U), its backward dO in and dQ, dK, dV
// back, all in the input dtype (it is the all-to-all's autograd). All-gather's backward gathers K
// and V again and reduce-scatters dK, dV, all in the input dtype. A ring step moves K and V, its
// backward K and V again with the dK, dV accumulated so far for them (f32); the last step also
// delivers the last dK, dV to their owners.
void count_bytes(AttentionSchedule& s) {
  const AttentionShape& sh = s.shape;
  const std::int64_t local = s.local_len(), elem = static_cast<std::int64_t>(dtype_size(sh.dtype));
  constexpr const char* kBytes = "bytes";
  const std::int64_t kv_token = mul(sh.kv_heads, sh.head_dim, kBytes);
  const std::int64_t q_token = mul(sh.heads, sh.head_dim, kBytes);
  const std::int64_t cp = s.cp, group = s.ulysses_degree;
  // Elements of `per_token` each on `tokens` tokens, in bytes of `size`: n · 2 · size.
  auto twice = [&](std::int64_t tokens, std::int64_t per_token, std::int64_t size) {
    return mul(mul(mul(tokens, per_token, kBytes), 2, kBytes), size, kBytes);
  };
  // One all-to-all over U ranks keeps 1/U of what a rank holds and sends the rest.
  auto all_to_all = [&](std::int64_t per_token) {
    return mul(mul(local, per_token, kBytes), group - 1, kBytes) / group;
  };
  const std::int64_t kv_repeated = mul(std::max(sh.kv_heads, group), sh.head_dim, kBytes);
  // Forward Q, K, V in and the output back; backward dO in and dQ, dK, dV back: the same sizes.
  const std::int64_t a2a =
      mul(add(mul(2, all_to_all(q_token), kBytes), mul(2, all_to_all(kv_repeated), kBytes), kBytes),
          elem, kBytes);
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    ScheduleStep& step = s.steps[t];
    const bool last = t + 1 == s.steps.size();
    std::int64_t forward = 0, backward = 0;
    if (step.exchange == Exchange::all_gather) {
      const std::int64_t gathered = mul(cp - 1, local, kBytes);
      forward = twice(gathered, kv_token, elem);
      // K and V gathered again, then dK, dV reduce-scattered: in the input dtype
      backward = add(forward, twice(gathered, kv_token, elem), kBytes);
    } else {
      // The ring's K/V buffer: one shard (ring), or a group's U shards on U/U of the heads (usp).
      const std::int64_t ring_token = s.algo == AttentionAlgo::usp ? kv_repeated : kv_token;
      if (step.exchange == Exchange::all_to_all) {
        forward = add(forward, a2a, kBytes);
        backward = add(backward, a2a, kBytes);
      }
      if (step.exchange == Exchange::send_recv) {
        forward = add(forward, twice(local, ring_token, elem), kBytes);
        backward =
            add(backward,
                add(twice(local, ring_token, elem), twice(local, ring_token, kGradBytes), kBytes),
                kBytes);
      }
      if (last && s.ring_degree > 1)
        backward = add(backward, twice(local, ring_token, kGradBytes), kBytes);
    }
    for (RankStep& rank : step.ranks) {
      rank.bytes_sent = rank.bytes_received = forward;
      rank.backward_bytes_sent = rank.backward_bytes_received = backward;
    }
  }
}

// Σ over rank steps of the query and key buffers' lengths: what building the schedule walks.
std::int64_t slot_walk(AttentionAlgo algo, const LayoutDescriptor& layout, const LayoutSpec& spec,
                       std::int64_t len) {
  const std::int64_t cp = spec.cp, local = len / cp;
  switch (algo) {
    case AttentionAlgo::all_gather:
      return cp * (local + len);
    case AttentionAlgo::ring:
      return cp * cp * 2 * local;
    case AttentionAlgo::ulysses:
      return cp * 2 * len;
    case AttentionAlgo::usp:
      return ring_degree_of(algo, layout, spec) * cp * 2 * ulysses_degree_of(algo, layout, spec) *
             local;
  }
  return 0;
}

}  // namespace

std::int64_t layout_ring_degree(const LayoutDescriptor& layout, const LayoutSpec& spec) {
  return has_rings(layout) ? layout.rank_structure->ring_degree(spec) : 1;
}

const char* exchange_name(Exchange exchange) {
  switch (exchange) {
    case Exchange::none:
      return "none";
    case Exchange::send_recv:
      return "send_recv";
    case Exchange::all_gather:
      return "all_gather";
    case Exchange::all_to_all:
      return "all_to_all";
  }
  return "?";
}

const char* mask_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::full:
      return "full";
    case MaskKind::causal:
      return "causal";
    case MaskKind::doc_causal:
      return "doc-causal";
    case MaskKind::skip:
      return "skip";
  }
  return "?";
}

std::int64_t AttentionSchedule::slot_at(const std::vector<BufferPiece>& pieces,
                                        std::int64_t p) const {
  for (const BufferPiece& piece : pieces) {
    if (p < piece.local.size())
      return index[static_cast<std::size_t>(piece.rank)]
                  [static_cast<std::size_t>(piece.local.begin + p)];
    p -= piece.local.size();
  }
  CPLAB_FAIL("schedule: buffer position past the end of its pieces");
}

std::vector<std::int64_t> AttentionSchedule::buffer_slots(
    const std::vector<BufferPiece>& pieces) const {
  std::vector<std::int64_t> slots;
  for (const BufferPiece& piece : pieces) {
    const auto& map = index[static_cast<std::size_t>(piece.rank)];
    slots.insert(slots.end(), map.begin() + piece.local.begin, map.begin() + piece.local.end);
  }
  return slots;
}

std::string layout_refusal(const LayoutDescriptor& layout, AttentionAlgo algo) {
  const char* name = algo_name(algo);
  if (layout.attention.refuses_algo != nullptr) {
    const char* why = layout.attention.refuses_algo(algo);
    if (why != nullptr && *why != '\0')
      return fmt::format("{} refuses {}: {}", layout.name, name, why);
  }
  if (algo == AttentionAlgo::usp && !has_rings(layout))
    return fmt::format("{} refuses {}: {}", layout.name, name, kUspAlgoNeedsUspLayout);
  return {};
}

std::string schedule_refusal(const LayoutDescriptor& layout, const LayoutSpec& spec,
                             AttentionAlgo algo, const AttentionShape& shape) {
  const char* name = algo_name(algo);
  if (std::string refused = layout_refusal(layout, algo); !refused.empty()) return refused;
  if (spec.cp < 1) return fmt::format("{}: the CP size C={} must be at least 1", name, spec.cp);
  if (shape.heads < 1 || shape.kv_heads < 1 || shape.head_dim < 1)
    return fmt::format("{}: heads H={}, KV heads H_kv={} and head dim d={} must be at least 1",
                       name, shape.heads, shape.kv_heads, shape.head_dim);
  if (shape.heads % shape.kv_heads != 0)
    return fmt::format("{}: H={} query heads do not share H_kv={} KV heads evenly", name,
                       shape.heads, shape.kv_heads);
  if (const std::int64_t ring = ring_degree_of(algo, layout, spec);
      algo == AttentionAlgo::usp && (ring < 1 || spec.cp % ring != 0))
    return fmt::format("usp: ring degree R={} does not divide C={}", ring, spec.cp);
  const std::int64_t group = ulysses_degree_of(algo, layout, spec);
  if (group > 1) {
    if (shape.heads % group != 0)
      return fmt::format("{}: H={} heads do not divide over the U={} ranks of a Ulysses group",
                         name, shape.heads, group);
    // SPEC §10.5: KV heads fewer than U are repeated up to U, each U/H_kv times.
    if (shape.kv_heads < group ? group % shape.kv_heads != 0 : shape.kv_heads % group != 0)
      return fmt::format("{}: H_kv={} KV heads neither divide over nor repeat evenly to U={}", name,
                         shape.kv_heads, group);
  }
  return {};
}

AttentionSchedule build_schedule(const LayoutDescriptor& layout, const LayoutSpec& spec,
                                 const RowPlan& row, AttentionAlgo algo,
                                 const AttentionShape& shape, const AttentionMask& mask) {
  const std::string refused = schedule_refusal(layout, spec, algo, shape);
  CPLAB_CHECK(refused.empty(), "{}", refused);
  CPLAB_CHECK(row.cp == spec.cp && static_cast<std::int64_t>(row.index.size()) == row.cp &&
                  row.padded_len % row.cp == 0,
              "schedule: the row is planned for C={} with {} maps and L={}, the spec asks C={}",
              row.cp, row.index.size(), row.padded_len, spec.cp);
  CPLAB_CHECK(static_cast<std::int64_t>(row.doc_ids.size()) == row.padded_len &&
                  static_cast<std::int64_t>(row.real.size()) == row.padded_len,
              "schedule: the row has {} document ids and {} real flags for L={}",
              row.doc_ids.size(), row.real.size(), row.padded_len);
  // Before any copy of the row. C <= 1024 and L <= 2^25 (limits.hpp) keep the walk itself far
  // from overflow.
  if (const std::int64_t walk = slot_walk(algo, layout, spec, row.padded_len);
      walk > kMaxScheduleSlotWalk) {
    throw ScheduleTooLarge(fmt::format(
        "schedule: {} at C={} on L={} walks {} buffer slots, above cplab's bound of {} per "
        "schedule (about 2·C·L; SPEC §13.2); lower C or the row's length",
        algo_name(algo), spec.cp, row.padded_len, walk, kMaxScheduleSlotWalk));
  }
  AttentionSchedule s{.layout = layout.name,
                      .algo = algo,
                      .cp = spec.cp,
                      .padded_len = row.padded_len,
                      .ring_degree = ring_degree_of(algo, layout, spec),
                      .ulysses_degree = ulysses_degree_of(algo, layout, spec),
                      .shape = shape,
                      .mask = mask,
                      .index = row.index,
                      .doc_ids = row.doc_ids,
                      .real = row.real,
                      .facts = row_token_facts(row.doc_ids, row.real, row.caller_pos, mask),
                      .steps = {},
                      .total_work = 0,
                      .critical_path = 0,
                      .ideal = 0.0};
  for (const auto& map : s.index) {
    CPLAB_CHECK(static_cast<std::int64_t>(map.size()) == s.local_len(),
                "schedule: a rank's map holds {} slots, ℓ = {}", map.size(), s.local_len());
    for (std::int64_t g : map)
      CPLAB_CHECK(g >= 0 && g < s.padded_len, "schedule: slot {} outside [0, L={})", g,
                  s.padded_len);
  }
  const SlotFacts facts = slot_facts(s.doc_ids, s.real, s.facts, mask.rule());
  s.steps = buffers_of(s);
  // Count the blocks first, so that a schedule past the bound is refused before it holds any.
  if (layout.attention.blocking == AttentionBlocking::runs) {
    std::int64_t count = 0;
    for (const ScheduleStep& step : s.steps) {
      for (const RankStep& rank : step.ranks) {
        count += count_step_blocks(layout.attention.blocking, s.buffer_slots(rank.queries),
                                   s.buffer_slots(rank.keys), facts);
        if (count > kMaxScheduleBlocks) too_many_blocks();
      }
    }
  }
  std::int64_t stored = 0;  // blocks so far, against kMaxScheduleBlocks
  constexpr const char* kWork = "work (pairs × heads)";
  for (ScheduleStep& step : s.steps) {
    std::int64_t longest = 0;
    for (RankStep& rank : step.ranks) {
      StepBlocks blocks = block_step(layout.attention.blocking, s.buffer_slots(rank.queries),
                                     s.buffer_slots(rank.keys), facts, kMaxScheduleBlocks - stored);
      rank.blocks = std::move(blocks.blocks);
      rank.skipped_blocks = blocks.skipped;
      stored += static_cast<std::int64_t>(rank.blocks.size());
      for (const ScheduleBlock& block : rank.blocks)
        rank.work = add(rank.work, mul(block.pairs, rank.heads, kWork), kWork);
      s.total_work = add(s.total_work, rank.work, kWork);
      longest = std::max(longest, rank.work);
    }
    s.critical_path = add(s.critical_path, longest, kWork);
  }
  s.ideal = static_cast<double>(s.total_work) / static_cast<double>(s.cp);
  count_bytes(s);
  return s;
}

}  // namespace cplab::sim
