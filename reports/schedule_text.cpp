#include "reports/schedule_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace cplab::reports {
namespace {

// Positions [begin, end) of a buffer whose slots are `slots`, as global [begin, end) ranges in
// buffer order, adjacent slots merged.
void global_ranges(JsonSink& out, const std::vector<std::int64_t>& slots,
                   const sim::LocalRange& range) {
  out.put("[");
  std::int64_t begin = -1, end = -1;
  bool first = true;
  auto emit = [&] {
    out.format("{}[{},{}]", first ? "" : ",", begin, end);
    first = false;
  };
  for (std::int64_t p = range.begin; p < range.end; ++p) {
    const std::int64_t g = slots[static_cast<std::size_t>(p)];
    if (g == end) {
      ++end;
      continue;
    }
    if (begin >= 0) emit();
    begin = g;
    end = g + 1;
  }
  if (begin >= 0) emit();
  out.put("]");
}

// The slot ranges the JSON would list: a block's q and k each list one per run of adjacent slots.
std::int64_t range_count(const std::vector<std::int64_t>& slots, const sim::LocalRange& range) {
  std::int64_t count = 0;
  for (std::int64_t p = range.begin; p < range.end; ++p) {
    const auto at = static_cast<std::size_t>(p);
    if (p == range.begin || slots[at] != slots[at - 1] + 1) ++count;
  }
  return count;
}

// Adds the ranges `s` lists to `ranges`, refusing past the bound.
void count_json_ranges(const sim::AttentionSchedule& s, std::int64_t& ranges) {
  for (const sim::ScheduleStep& step : s.steps) {
    for (const sim::RankStep& rank : step.ranks) {
      const std::vector<std::int64_t> q_slots = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> k_slots = s.buffer_slots(rank.keys);
      for (const sim::ScheduleBlock& b : rank.blocks)
        ranges += range_count(q_slots, b.q) + range_count(k_slots, b.k);
      CPLAB_CHECK(ranges <= kMaxJsonRanges,
                  "--json: the output would list more than {} slot ranges (cplab's bound on the "
                  "JSON, passed at {}); use the table, --svg, one --algo or a shorter row",
                  kMaxJsonRanges, sim::algo_name(s.algo));
    }
  }
}

// `place`: its critical_path_place when algorithms are compared (0: one algorithm, no "rank").
void one_schedule_json(JsonSink& out, const sim::AttentionSchedule& s, std::int64_t place = 0) {
  nlohmann::ordered_json head;
  head["layout"] = s.layout;
  head["algo"] = sim::algo_name(s.algo);
  head["cp"] = s.cp;
  head["padded_seq_len"] = s.padded_len;
  head["ring_degree"] = s.ring_degree;
  head["ulysses_degree"] = s.ulysses_degree;
  head["heads"] = s.shape.heads;
  head["kv_heads"] = s.shape.kv_heads;
  head["head_dim"] = s.shape.head_dim;
  head["dtype"] = std::string(dtype_name(s.shape.dtype));
  head["mask"] = sim::mask_text(s.mask);
  head["total_work"] = s.total_work;
  head["critical_path"] = s.critical_path;
  head["ideal"] = s.ideal;
  head["ratio"] = sim::critical_path_ratio(s);
  if (place > 0) head["rank"] = place;
  out.open_object(head);
  out.put(",\"steps\":[");
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    const sim::ScheduleStep& step = s.steps[t];
    out.format("{}{{\"step\":{},\"exchange\":{},\"ranks\":[", t == 0 ? "" : ",", t,
               nlohmann::json(sim::exchange_name(step.exchange)).dump());
    for (std::size_t r = 0; r < step.ranks.size(); ++r) {
      const sim::RankStep& rank = step.ranks[r];
      const std::vector<std::int64_t> q_slots = s.buffer_slots(rank.queries);
      const std::vector<std::int64_t> k_slots = s.buffer_slots(rank.keys);
      out.format("{}{{\"rank\":{},\"kv_from\":{},\"heads\":{},\"blocks\":[", r == 0 ? "" : ",",
                 rank.rank, rank.kv_from, rank.heads);
      for (std::size_t i = 0; i < rank.blocks.size(); ++i) {
        const sim::ScheduleBlock& b = rank.blocks[i];
        out.put(i == 0 ? "{\"q\":" : ",{\"q\":");
        global_ranges(out, q_slots, b.q);
        out.put(",\"k\":");
        global_ranges(out, k_slots, b.k);
        out.format(",\"mask\":\"{}\"", sim::mask_name(b.mask));
        if (b.mask == sim::MaskKind::causal) out.format(",\"diagonal\":{}", b.diagonal);
        out.format(",\"pairs\":{}}}", b.pairs);
      }
      out.format(
          "],\"skipped_blocks\":{},\"work\":{},\"bytes_sent\":{},\"bytes_received\":{},"
          "\"backward_bytes_sent\":{},\"backward_bytes_received\":{}}}",
          rank.skipped_blocks, rank.work, rank.bytes_sent, rank.bytes_received,
          rank.backward_bytes_sent, rank.backward_bytes_received);
    }
    out.put("]}");
  }
  out.put("]}");
}

std::string blocks_cell(const sim::RankStep& rank) {
  std::int64_t counts[3] = {0, 0, 0};
  for (const sim::ScheduleBlock& b : rank.blocks) ++counts[static_cast<int>(b.mask)];
  return fmt::format("{}/{}/{} +{} skipped", counts[0], counts[1], counts[2], rank.skipped_blocks);
}

std::string headline(const LayoutSpec& spec, const sim::AttentionSchedule& s) {
  return fmt::format("{} · {}: L={}, ℓ={}, H={} (H_kv={}, d={}, {}), mask {}, {} step{}",
                     spec_brief(spec), sim::algo_name(s.algo), s.padded_len, s.local_len(),
                     s.shape.heads, s.shape.kv_heads, s.shape.head_dim, dtype_name(s.shape.dtype),
                     sim::mask_text(s.mask), s.steps.size(), s.steps.size() == 1 ? "" : "s");
}

}  // namespace

std::string schedule_table(const LayoutSpec& spec, const sim::AttentionSchedule& s) {
  std::string out = headline(spec, s) + "\n";
  out += fmt::format(
      "critical path {} (Σ over steps of the busiest rank's work), ideal {:.1f} (total/C), ratio "
      "{:.4f}\n",
      s.critical_path, s.ideal, sim::critical_path_ratio(s));
  out += fmt::format("{:>4}  {:<10} {:>4} {:>7} {:>5}  {:<28} {:>14} {:>12} {:>12}\n", "step",
                     "exchange", "rank", "kv_from", "heads", "blocks full/causal/doc-causal",
                     "work", "fwd bytes", "bwd bytes");
  for (std::size_t t = 0; t < s.steps.size(); ++t) {
    for (const sim::RankStep& rank : s.steps[t].ranks) {
      out += fmt::format("{:>4}  {:<10} {:>4} {:>7} {:>5}  {:<28} {:>14} {:>12} {:>12}\n", t,
                         sim::exchange_name(s.steps[t].exchange), rank.rank,
                         rank.kv_from < 0 ? std::string("-") : std::to_string(rank.kv_from),
                         rank.heads, blocks_cell(rank), rank.work, rank.bytes_received,
                         rank.backward_bytes_received);
    }
  }
  return out;
}

std::string comparison_table(const LayoutSpec& spec, const sim::AttentionMask& mask,
                             const std::vector<sim::ScheduleOutcome>& outcomes) {
  std::string out = fmt::format("{}: attention algorithms compared, mask {}\n", spec_brief(spec),
                                sim::mask_text(mask));
  out += fmt::format("{:<11} {:>5} {:>16} {:>16} {:>8} {:>14} {:>14} {:>5}\n", "algo", "steps",
                     "critical path", "ideal", "ratio", "fwd bytes/rank", "bwd bytes/rank", "rank");
  for (const sim::ScheduleOutcome& o : outcomes) {
    if (!o.refused.empty()) {
      out += fmt::format("{:<11} refused: {}\n", sim::algo_name(o.algo), o.refused);
      continue;
    }
    const sim::AttentionSchedule& s = o.schedule;
    std::int64_t forward = 0, backward = 0;  // the busiest rank's sum over the steps
    for (std::int64_t r = 0; r < s.cp; ++r) {
      std::int64_t f = 0, b = 0;
      for (const sim::ScheduleStep& step : s.steps) {
        f += step.ranks[static_cast<std::size_t>(r)].bytes_received;
        b += step.ranks[static_cast<std::size_t>(r)].backward_bytes_received;
      }
      forward = std::max(forward, f);
      backward = std::max(backward, b);
    }
    out += fmt::format("{:<11} {:>5} {:>16} {:>16.1f} {:>8.4f} {:>14} {:>14} {:>5}\n",
                       sim::algo_name(o.algo), s.steps.size(), s.critical_path, s.ideal,
                       sim::critical_path_ratio(s), forward, backward,
                       sim::critical_path_place(outcomes, s));
  }
  return out;
}

void check_json_size(const std::vector<sim::ScheduleOutcome>& outcomes) {
  std::int64_t ranges = 0;
  for (const sim::ScheduleOutcome& o : outcomes) {
    if (o.refused.empty()) count_json_ranges(o.schedule, ranges);
  }
}

void schedule_json(JsonSink& out, const LayoutSpec& spec, std::int64_t padded_len,
                   const sim::AttentionMask& mask,
                   const std::vector<sim::ScheduleOutcome>& outcomes, bool compared) {
  if (!compared) {
    one_schedule_json(out, outcomes.front().schedule);
  } else {
    nlohmann::ordered_json head;
    head["layout"] = spec.layout;
    head["cp"] = spec.cp;
    head["padded_seq_len"] = padded_len;
    head["mask"] = sim::mask_text(mask);
    out.open_object(head);
    out.put(",\"algos\":[");
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const sim::ScheduleOutcome& o = outcomes[i];
      if (i > 0) out.put(",");
      if (o.refused.empty()) {
        one_schedule_json(out, o.schedule, sim::critical_path_place(outcomes, o.schedule));
      } else {
        out.put(nlohmann::ordered_json{{"algo", sim::algo_name(o.algo)}, {"refused", o.refused}}
                    .dump());
      }
    }
    out.put("]}");
  }
  out.put("\n");
}

}  // namespace cplab::reports
