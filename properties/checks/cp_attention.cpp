// CP attention by schedule (SPEC §13): for every algorithm the layout runs, the implementation's
// outputs, LSE and Q/K/V gradients equal the unsharded reference within a tolerance derived from
// the dtype's unit roundoff, the head dim, the row length and the blocks each query merges
// (SPEC §13.3); and at logits of magnitude up to 1e4 with fully masked query rows every value
// stays finite and right (the stable LSE merge).
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

#include "attention/schedule.hpp"
#include "layouts/layout_descriptor.hpp"
#include "properties/checks/attention_masks.hpp"
#include "properties/checks/checks.hpp"
#include "properties/checks/cp_attention_bounds.hpp"
#include "reference/cp_attention_reference.hpp"

namespace cplab::properties {

namespace {

// Past this C, the algorithms that split the heads over ranks (ulysses, usp) run H = C heads of a
// long row, each over the whole row: 20 to 60 times the work of the narrow all-gather and ring
// draws, and every one of the property's slowest cases. There they keep H = C and are drawn in one
// case of four; up to it they run as often as the others, with two heads per rank at times.
constexpr std::int64_t kWideHeadsUpTo = 16;

bool splits_heads(sim::AttentionAlgo algo) {
  return algo != sim::AttentionAlgo::all_gather && algo != sim::AttentionAlgo::ring;
}

// The attention heads of a case, a pure function of its seed and C: H = C query heads (2C in one
// case of four up to kWideHeadsUpTo: two heads per rank; the reference's cost grows with H), and
// KV heads H, C or a divisor of U = C/R (repeated up to U), so that every algorithm the layout
// runs can split them (SPEC §10.5).
sim::AttentionShape shape_for(const Case& c, DType dtype) {
  const std::int64_t cp = c.spec.cp;
  const std::int64_t ulysses =
      cp / std::max<std::int64_t>(
               1, sim::layout_ring_degree(sim::layout_descriptor(c.spec.layout), c.spec));
  const std::uint64_t pick = mix(c.seed, 0x0c9a77, static_cast<std::uint64_t>(cp), 0);
  const bool two_per_rank = cp <= kWideHeadsUpTo && ((pick >> 40) & 3) == 0;
  sim::AttentionShape shape{
      .heads = cp * (two_per_rank ? 2 : 1), .kv_heads = cp, .head_dim = c.dim, .dtype = dtype};
  switch ((pick >> 1) % 3) {
    case 0:
      shape.kv_heads = shape.heads;
      break;
    case 1: {
      std::vector<std::int64_t> divisors;
      for (std::int64_t d = 1; d <= ulysses; ++d) {
        if (ulysses % d == 0) divisors.push_back(d);
      }
      shape.kv_heads = divisors[static_cast<std::size_t>((pick >> 3) % divisors.size())];
      break;
    }
    default:
      break;
  }
  return shape;
}

// The heads `algo` runs on. Ulysses and usp split the heads over a group, so they keep
// shape_for's H = C or 2C. All-gather and ring run every head alike: 7 cases in 8 draw H = 1 or 2
// (H_kv = H or 1; two heads with one KV head catch a head-indexing or GQA bug as well as C do) and
// one in 8 keeps the wide draw. The reference's cost grows with H, so with H = C it grew as C³.
sim::AttentionShape shape_for_algo(const Case& c, const sim::AttentionShape& wide,
                                   sim::AttentionAlgo algo) {
  if (splits_heads(algo)) return wide;
  const std::uint64_t pick = mix(c.seed, 0x4eadd, 0, 0);
  if (pick % 8 == 0) return wide;
  sim::AttentionShape narrow = wide;
  narrow.heads = 1 + static_cast<std::int64_t>((pick >> 3) & 1);
  narrow.kv_heads = ((pick >> 4) & 1) != 0 ? 1 : narrow.heads;
  return narrow;
}

// The input dtype: the case's own when it is a floating one, else f32 or bf16 by the seed (so
// that both are drawn often in every cell, whatever class the case's own dtype is).
DType attention_dtype(const Case& c) {
  if (c.dtype == DType::f32 || c.dtype == DType::bf16 || c.dtype == DType::f16) return c.dtype;
  return (mix(c.seed, 0xbf16, 0, 0) & 1) != 0 ? DType::bf16 : DType::f32;
}

struct Inputs {
  Tensor q, k, v, grad_out;
};

// [B, L, H, d] inputs in the case's dtype; q and k scaled by `logit_scale` (logits grow with its
// square).
Inputs inputs_for(const Case& c, const ShardPlan& plan, std::int64_t m,
                  const sim::AttentionShape& shape, float logit_scale) {
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len;
  const auto stream = [&](std::uint64_t which, std::int64_t heads, float scale) {
    return float_tensor(c.seed, 900 + 8 * static_cast<std::uint64_t>(m) + which,
                        {rows, len, heads, shape.head_dim}, scale)
        .to(shape.dtype);
  };
  return {stream(0, shape.heads, logit_scale), stream(1, shape.kv_heads, logit_scale),
          stream(2, shape.kv_heads, 1.0f), stream(3, shape.heads, 1.0f)};
}

// Every microbatch's schedules of `algo`, one per row; throws sim::ScheduleTooLarge past cplab's
// bounds (SPEC §13.2). Built before any input or reference, so a case past them costs nothing.
std::vector<std::vector<sim::AttentionSchedule>> case_schedules(const Case& c,
                                                                const Subject& subject,
                                                                sim::AttentionAlgo algo,
                                                                const sim::AttentionShape& shape,
                                                                const sim::AttentionMask& mask) {
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(c.spec.layout);
  std::vector<std::vector<sim::AttentionSchedule>> schedules(subject.microbatches.size());
  for (std::size_t m = 0; m < subject.microbatches.size(); ++m)
    for (const RowPlan& row : subject.microbatches[m].rows)
      schedules[m].push_back(sim::build_schedule(layout, c.spec, row, algo, shape, mask));
  return schedules;
}

// The case's mask (SPEC §13.5), drawn around its shard length.
sim::AttentionMask case_mask(const Case& c, const Subject& subject) {
  const std::int64_t local =
      subject.plan.rows.empty() ? 1 : subject.plan.rows.front().padded_len / c.spec.cp;
  return draw_mask(c, local, 14);
}

// What a case in `dtype` runs: one algorithm drawn by the seed among those the layout and the
// implementation run (a job's cases cover each of them many times over, at a third of the cost of
// running all), and that algorithm's heads. None when nothing runs; refused algorithms are noted
// when `notes` is given.
struct Drawn {
  sim::AttentionAlgo algo;
  sim::AttentionShape shape;
};
std::optional<Drawn> draw(const Case& c, DType dtype, const Implementation& impl,
                          CheckNotes* notes) {
  const sim::AttentionShape wide = shape_for(c, dtype);
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(c.spec.layout);
  std::vector<sim::AttentionAlgo> runnable;
  for (sim::AttentionAlgo algo : sim::all_algos()) {
    const std::string refusal = sim::schedule_refusal(layout, c.spec, algo, wide);
    if (!refusal.empty()) {
      if (notes != nullptr)
        notes->notes.push_back(fmt::format("{}: refused ({})", sim::algo_name(algo), refusal));
    } else if (impl.cp_attention_unsupported(algo).empty()) {
      runnable.push_back(algo);
    }
  }
  if (runnable.empty()) return std::nullopt;
  if (c.spec.cp > kWideHeadsUpTo && (mix(c.seed, 0x5e1d, 0, 0) & 3) != 0) {
    std::vector<sim::AttentionAlgo> narrow;
    for (sim::AttentionAlgo algo : runnable) {
      if (!splits_heads(algo)) narrow.push_back(algo);
    }
    if (!narrow.empty()) runnable = std::move(narrow);
  }
  const sim::AttentionAlgo algo =
      runnable[mix(c.seed, 0xa160, 0, 0) % static_cast<std::uint64_t>(runnable.size())];
  return Drawn{.algo = algo, .shape = shape_for_algo(c, wide, algo)};
}

std::string check_algo(const Case& c, Implementation& impl, const ShardPlan& plan, std::int64_t m,
                       sim::AttentionAlgo algo,
                       const std::vector<sim::AttentionSchedule>& schedules,
                       const sim::AttentionShape& shape, const Inputs& in,
                       const reference::CpAttentionReference& ref, BoundsReport& report) {
  const auto outputs = on_ranks(c.spec.cp, [&](Comm& comm, std::int64_t r) {
    const auto local = [&](const Tensor& t) { return reference::select_rank(plan, t, 1, r); };
    return impl.cp_attention(comm, reference_layout(plan, r), schedules, local(in.q), local(in.k),
                             local(in.v), local(in.grad_out));
  });
  const AttentionBounds bounds =
      attention_bounds(ref, in.q, in.k, in.v, in.grad_out, schedules, shape.dtype);
  for (std::int64_t r = 0; r < c.spec.cp; ++r) {
    const std::string where =
        fmt::format("{} attention on rank {}, microbatch {}", sim::algo_name(algo), r, m);
    const std::string bad =
        compare_rank(plan, r, ref, bounds, outputs[static_cast<std::size_t>(r)], where, report);
    if (!bad.empty()) return bad;
  }
  return {};
}

// The drawn algorithm on every microbatch; `logit_scale` scales q and k.
std::string check_algos(const Case& c, Implementation& impl, CheckNotes& notes, float logit_scale) {
  const DType dtype = attention_dtype(c);
  notes.options.emplace_back(kAnyCase);
  notes.options.emplace_back(dtype_name(dtype));
  const std::optional<Drawn> drawn = draw(c, dtype, impl, &notes);
  if (!drawn) {
    notes.tags.push_back(fmt::format("{} {} {} no algorithm runs", c.spec.layout,
                                     cp_class(c.spec.cp), dtype_name(dtype)));
    return {};
  }
  const sim::AttentionAlgo algo = drawn->algo;
  const sim::AttentionShape& shape = drawn->shape;
  notes.tags.push_back(fmt::format("{} {} {} H={} H_kv={} {}", c.spec.layout, cp_class(c.spec.cp),
                                   dtype_name(dtype), shape.heads, shape.kv_heads,
                                   sim::algo_name(algo)));
  notes.options.emplace_back(sim::algo_name(algo));
  const Subject subject(c);
  const sim::AttentionMask mask = case_mask(c, subject);
  notes.options.push_back(mask_option(mask.family));
  notes.tags.back() += " " + std::string(sim::mask_family_name(mask.family));
  std::vector<std::vector<sim::AttentionSchedule>> schedules;
  try {
    schedules = case_schedules(c, subject, algo, shape, mask);
  } catch (const sim::ScheduleTooLarge& e) {
    // No case of this algorithm (as in the schedule properties): `replay` refuses it up front
    // (past_schedule_bounds), a sweep counts how often its generators draw one.
    notes.tags.back() += " past the schedule bounds";
    notes.notes.push_back(e.what());
    return {};
  }
  BoundsReport report;
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    const Inputs in = inputs_for(c, plan, m, shape, logit_scale);
    const auto ref = reference::cp_attention_reference(plan, in.q, in.k, in.v, in.grad_out, mask);
    const std::string bad = check_algo(
        c, impl, plan, m, algo, schedules[static_cast<std::size_t>(m)], shape, in, ref, report);
    if (!bad.empty()) return failure_prefix(c) + "mask " + sim::mask_text(mask) + ": " + bad;
  }
  notes.notes.push_back(report.summary());
  return {};
}

// Why `replay` must refuse the case before any work: its drawn algorithm's schedule is past
// cplab's bounds (a row of one-slot chunks at C = 64), which a sweep's check skips instead.
std::string past_schedule_bounds(const Case& c, Implementation& impl) {
  const std::optional<Drawn> drawn = draw(c, attention_dtype(c), impl, nullptr);
  if (!drawn) return {};
  try {
    const Subject subject(c);
    (void)case_schedules(c, subject, drawn->algo, drawn->shape, case_mask(c, subject));
  } catch (const sim::ScheduleTooLarge& e) {
    return fmt::format("the case's {} attention is past cplab's schedule bounds: {}",
                       sim::algo_name(drawn->algo), e.what());
  }
  return {};
}

std::string check_matches_unsharded(const Case& c, Implementation& impl, CheckNotes& notes) {
  return check_algos(c, impl, notes, 1.0f);
}

// q and k scaled so that |scale·q·k| reaches 1e4 where the two align: scale·d·κ² = 1e4.
std::string check_merge_is_stable(const Case& c, Implementation& impl, CheckNotes& notes) {
  const double d = static_cast<double>(c.dim);
  const auto kappa = static_cast<float>(std::sqrt(1e4 / std::sqrt(d)));
  notes.notes.push_back(fmt::format("logits up to {:.0f}", 1e4));
  return check_algos(c, impl, notes, kappa);
}

std::string cp_attention_unsupported(const Implementation& impl) {
  return impl.cp_attention_unsupported(sim::AttentionAlgo::ring);
}

const std::vector<CoverageRule> kCpAttentionCoverage = {
    {kAnyCase, {}, Cross::cp},
    // Every mask family in every job (SPEC §13.5).
    {"mask causal", {}, Cross::none, true},
    {"mask window", {}, Cross::none, true},
    {"mask chunked", {}, Cross::none, true},
    {"mask bidirectional", {}, Cross::none, true},
    {"bf16", {}, Cross::none, true},
    // bf16's dK bound can be the size of a dK that cancels over its queries (SPEC §13.3): a 2×
    // dK error is f32's to catch, so every job draws f32 cases at C > 1.
    {"f32", {}, Cross::none, true},
};

}  // namespace

extern const PropertyInfo cp_attention_property;
const PropertyInfo cp_attention_property{
    .name = "cp_attention_matches_unsharded",
    .invariant =
        "CP attention run by every algorithm's schedule gives the unsharded outputs, LSE and "
        "Q/K/V gradients within the tolerance the dtype and the merged blocks allow",
    .check = check_matches_unsharded,
    .coverage = kCpAttentionCoverage,
    .unsupported = cp_attention_unsupported,
    .refusal = past_schedule_bounds,
};

extern const PropertyInfo lse_merge_property;
const PropertyInfo lse_merge_property{
    .name = "lse_merge_is_stable",
    .invariant =
        "at logits of magnitude up to 1e4 and with fully masked query rows, CP attention's "
        "outputs, LSE and gradients stay finite and equal the unsharded ones",
    .check = check_merge_is_stable,
    .coverage = {{kAnyCase, {}, Cross::cp}},
    .unsupported = cp_attention_unsupported,
    .refusal = past_schedule_bounds,
};

}  // namespace cplab::properties
