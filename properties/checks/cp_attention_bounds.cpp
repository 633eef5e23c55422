// The tolerance of SPEC §13.3, term by term, and the comparison that uses it.
#include "properties/checks/cp_attention_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace cplab::properties {
namespace {

constexpr double kU32 = 0x1.0p-24;
// f32's smallest normal: a probability below it is lost (flushed or denormal) in the f32 exp.
constexpr double kTiny = 0x1.0p-126;
const char* const kPartNames[] = {"output", "LSE", "dQ", "dK", "dV"};

// Half the dtype's smallest subnormal: the absolute error of rounding a value below its normal
// range (the dtype's u is relative, and holds only inside it).
double subnormal_error_of(DType dtype) {
  switch (dtype) {
    case DType::bf16:
      return 0x1.0p-134;
    case DType::f16:
      return 0x1.0p-25;
    default:
      return 0x1.0p-150;
  }
}

double unit_roundoff_of(DType dtype) {
  switch (dtype) {
    case DType::bf16:
      return 0x1.0p-8;
    case DType::f16:
      return 0x1.0p-11;
    default:
      return kU32;
  }
}

// max |t| over row b of a [B, L, H, d] tensor.
double row_max(const Tensor& t, std::int64_t b) {
  const std::int64_t per = t.numel() / t.size(0);
  double m = 0.0;
  for (std::int64_t i = b * per; i < (b + 1) * per; ++i) m = std::max(m, std::abs(t.get(i)));
  return m;
}

// The most blocks any query of the row can merge: the most blocks any rank computes.
std::int64_t merged_blocks(const sim::AttentionSchedule& s) {
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(s.cp), 0);
  for (const sim::ScheduleStep& step : s.steps) {
    for (const sim::RankStep& rs : step.ranks)
      per_rank[static_cast<std::size_t>(rs.rank)] += static_cast<std::int64_t>(rs.blocks.size());
  }
  return std::max<std::int64_t>(1, *std::max_element(per_rank.begin(), per_rank.end()));
}

// How many Ulysses members hold a copy of each KV head (SPEC §10.5): U / H_kv where the heads are
// repeated up to U, else 1. Each copy's gradient is rounded to the input dtype before they are
// summed.
std::int64_t kv_head_copies(const sim::AttentionSchedule& s) {
  const bool ulysses = s.algo == sim::AttentionAlgo::ulysses || s.algo == sim::AttentionAlgo::usp;
  const std::int64_t u = s.ulysses_degree, kv = s.shape.kv_heads;
  return ulysses && kv > 0 && u > kv ? u / kv : 1;
}

}  // namespace

AttentionBounds attention_bounds(const reference::CpAttentionReference& ref, const Tensor& q,
                                 const Tensor& k, const Tensor& v, const Tensor& grad_out,
                                 const std::vector<sim::AttentionSchedule>& schedules,
                                 DType dtype) {
  AttentionBounds bounds;
  const double u = unit_roundoff_of(dtype), d = static_cast<double>(ref.d);
  const double len = static_cast<double>(ref.len), s = 1.0 / std::sqrt(d);
  const double group = static_cast<double>(ref.heads / ref.kv_heads);
  for (std::int64_t b = 0; b < ref.rows; ++b) {
    const double a = row_max(q, b), bk = row_max(k, b), vm = row_max(v, b),
                 g = row_max(grad_out, b);
    const auto nb = static_cast<double>(merged_blocks(schedules[static_cast<std::size_t>(b)]));
    const double sigma = s * d * a * bk;          // |logit| <= σ
    const double eps_s = (d + 2) * kU32 * sigma;  // one f32 logit
    const double eps_l =                          // the LSE: its logits, its sums, merges
        eps_s + (len + 3 * nb + 2) * kU32 * (sigma + std::log(len) + 1);
    const double eps_p = eps_s + eps_l;  // a recomputed probability, relatively
    RowBounds r;
    r.u = u;
    r.eta = subnormal_error_of(dtype);
    // Rounding of the block outputs and of the output (weights summing to 1), the logits and
    // weights, the f32 sums; doubled for the second-order terms.
    r.out = 2 * vm * (2 * u + 2 * eps_s + 4 * eps_l + (2 * len + 3 * nb) * kU32);
    r.lse = 2 * eps_l;
    const double spread = 2 * d * g * vm;  // |dP - D|
    const double delta_err = d * g * r.out + d * kU32 * g * vm;
    const double ds_err = eps_p * spread + delta_err + d * kU32 * g * vm;  // |ΔdS| / P
    const double sums = len * group * kU32 * spread;                       // f32 accumulation
    r.grad_q = 2 * s * bk * (ds_err + sums + len * kTiny * spread);
    r.grad_k_mass = 2 * s * a * (ds_err + sums);
    r.grad_v_mass = 2 * g * (eps_p + len * group * kU32);
    r.out += 2 * len * kTiny * vm + 2 * r.eta;
    r.grad_k_lost = 2 * len * group * kTiny * s * a * spread;
    r.grad_v_lost = 2 * len * group * kTiny * g;
    const sim::AttentionSchedule& schedule = schedules[static_cast<std::size_t>(b)];
    const std::int64_t copies = kv_head_copies(schedule);
    if (schedule.algo == sim::AttentionAlgo::all_gather && schedule.cp > 1) {
      // The reduce-scatter of dK, dV in the input dtype (SPEC §13.2): each rank's part rounded,
      // then each of the C - 1 partial sums; every one of them is at most the sum of the parts'
      // sizes, which the mass bounds as above.
      const auto c = static_cast<double>(schedule.cp);
      r.grad_k_mass += 2 * c * u * s * a * spread;
      r.grad_v_mass += 2 * c * u * g;
      r.eta_kv += c * r.eta;
    }
    if (copies > 1) {
      // Each copy's gradient rounded before the sum: u times the sum of their sizes, which the
      // mass bounds (|dS_ij| <= P_ij·spread, |dV| <= G per unit of mass), and its own subnormal.
      r.grad_k_mass += 2 * u * s * a * spread;
      r.grad_v_mass += 2 * u * g;
      r.eta_kv += static_cast<double>(copies) * r.eta;
    }
    bounds.rows.push_back(r);
  }
  return bounds;
}

void BoundsReport::record(int part, double error, double tolerance) {
  Worst& w = parts[part];
  const double ratio = tolerance > 0 ? error / tolerance : (error > 0 ? INFINITY : 0.0);
  if (ratio > w.ratio || (w.ratio == 0 && error > w.error)) w = {error, tolerance, ratio};
}

std::string BoundsReport::summary() const {
  std::string s = "worst |error| against its tolerance:";
  for (int i = 0; i < 5; ++i) {
    s += fmt::format(" {} {:.3g} ({:.3g}, {:.2f} of it)", kPartNames[i], parts[i].error,
                     parts[i].tolerance, parts[i].ratio);
  }
  return s;
}

std::string compare_rank(const ShardPlan& plan, std::int64_t rank,
                         const reference::CpAttentionReference& ref, const AttentionBounds& bounds,
                         const CpAttentionOutput& got, const std::string& where,
                         BoundsReport& report) {
  const std::int64_t rows = ref.rows, len = plan.rows.front().local_len();
  const Tensor* tensors[] = {&got.out, &got.lse, &got.grad_q, &got.grad_k, &got.grad_v};
  const std::vector<double>* expected[] = {&ref.out, &ref.lse, &ref.grad_q, &ref.grad_k,
                                           &ref.grad_v};
  for (int part = 0; part < 5; ++part) {
    const std::int64_t heads = part >= 3 ? ref.kv_heads : ref.heads;
    const std::int64_t d = part == 1 ? 1 : ref.d;
    const Tensor& t = *tensors[part];
    if (t.numel() != rows * len * heads * d) {
      return fmt::format("{}: {} is {}, expected {} values ([{}, {}, {}{}])", where,
                         kPartNames[part], tensor_brief(t), rows * len * heads * d, rows, len,
                         heads, part == 1 ? "" : fmt::format(", {}", d));
    }
    for (std::int64_t b = 0; b < rows; ++b) {
      const RowBounds& rb = bounds.rows[static_cast<std::size_t>(b)];
      const auto& index =
          plan.rows[static_cast<std::size_t>(b)].index[static_cast<std::size_t>(rank)];
      for (std::int64_t tok = 0; tok < len; ++tok) {
        const std::int64_t slot = index[static_cast<std::size_t>(tok)];
        for (std::int64_t h = 0; h < heads; ++h) {
          const double mass =
              part >= 3 ? ref.key_mass[static_cast<std::size_t>((b * ref.len + slot) * heads + h)]
                        : 0.0;
          for (std::int64_t e = 0; e < d; ++e) {
            const double want = (*expected[part])[static_cast<std::size_t>(
                ((b * ref.len + slot) * heads + h) * d + e)];
            const double have = t.get(((b * len + tok) * heads + h) * d + e);
            double tol = 0.0;
            switch (part) {
              case 0:
                tol = rb.out;
                break;
              case 1:
                tol = rb.lse;
                break;
              case 2:
                tol = rb.grad_q + 2 * rb.eta + 2 * rb.u * std::abs(want);
                break;
              case 3:
                tol = rb.grad_k_mass * mass + rb.grad_k_lost + 2 * (rb.eta + rb.eta_kv) +
                      2 * rb.u * std::abs(want);
                break;
              default:
                tol = rb.grad_v_mass * mass + rb.grad_v_lost + 2 * (rb.eta + rb.eta_kv) +
                      2 * rb.u * std::abs(want);
                break;
            }
            const bool both_masked = std::isinf(want) && want < 0 && have == want;
            const double err = both_masked ? 0.0 : std::abs(have - want);
            if (!(err <= tol)) {  // NaN fails too
              return fmt::format(
                  "{}: {} of row {}, local token {} (global slot {}), head {}, element {}: "
                  "expected {:.6g}, got {:.6g} (tolerance {:.3g})",
                  where, kPartNames[part], b, tok, slot, h, e, want, have, tol);
            }
            if (std::isfinite(want)) report.record(part, err, tol);
          }
        }
      }
    }
  }
  return {};
}

}  // namespace cplab::properties
