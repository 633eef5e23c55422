// Dense attention per row and head in plain double loops: L×L scores, softmax over the visible
// keys, and the textbook backward (dS = P∘(dP - rowsum(P∘dP))). Independent of the schedules:
// it knows nothing of ranks, blocks or merges.
#include "reference/cp_attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/quiet_exp.hpp"

namespace cplab::reference {
namespace {

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  t.read(0, out);
  return out;
}

// For every slot g, the first and one past the last slot holding g's document id: no key outside
// them shares g's document (whether or not the document's slots are contiguous).
void document_slot_ranges(const RowPlan& row, std::vector<std::int64_t>& from,
                          std::vector<std::int64_t>& to) {
  std::unordered_map<std::int32_t, std::pair<std::int64_t, std::int64_t>> range;
  for (std::size_t g = 0; g < row.doc_ids.size(); ++g) {
    const auto slot = static_cast<std::int64_t>(g);
    auto [at, fresh] = range.try_emplace(row.doc_ids[g], slot, slot + 1);
    if (!fresh) at->second.second = slot + 1;
  }
  from.resize(row.doc_ids.size());
  to.resize(row.doc_ids.size());
  for (std::size_t g = 0; g < row.doc_ids.size(); ++g) {
    const auto& [first, end] = range.at(row.doc_ids[g]);
    from[g] = first;
    to[g] = end;
  }
}

// The whole batch in double, and where a query's or a key's head vector starts in it.
struct DenseBatch {
  std::vector<double> q, k, v, grad_out;
  std::int64_t L, H, Hk, d;
  double scale;  // 1/sqrt(d)

  std::size_t qi(std::int64_t b, std::int64_t g, std::int64_t h) const {
    return static_cast<std::size_t>(((b * L + g) * H + h) * d);
  }
  std::size_t ki(std::int64_t b, std::int64_t j, std::int64_t h) const {
    return static_cast<std::size_t>(((b * L + j) * Hk + h) * d);
  }
};

// The keys each query of one row may see. They lie in [first slot of g's document, g] (past g
// too, to the document's end, in a bidirectional span): scanning only those gives the same sums
// (the others contribute exp(-inf) = 0) at half the cost or less.
struct RowKeys {
  RowKeys(const RowPlan& row, const sim::AttentionMask& mask)
      : facts(sim::row_token_facts(row.doc_ids, row.real, row.caller_pos, mask)),
        rule(mask.rule()),
        past_query(mask.family == sim::MaskFamily::bidirectional) {
    document_slot_ranges(row, from, to);
  }
  std::int64_t lo(std::int64_t g) const { return from[static_cast<std::size_t>(g)]; }
  std::int64_t hi(std::int64_t g) const {
    return past_query ? to[static_cast<std::size_t>(g)] : g + 1;
  }
  bool sees(std::int64_t g, std::int64_t j) const {
    return sim::mask_visible(rule, facts[static_cast<std::size_t>(g)],
                             facts[static_cast<std::size_t>(j)]);
  }

  std::vector<std::int64_t> from, to;
  std::vector<sim::TokenFacts> facts;
  sim::MaskRule rule;
  bool past_query;
};

// Query g of row b at head h: its output and LSE, its dQ, and its share of dK, dV and each key's
// mass. p and dp are scratch of L entries.
void attend_one_query(const DenseBatch& in, const RowKeys& visible, std::int64_t b, std::int64_t g,
                      std::int64_t h, std::vector<double>& p, std::vector<double>& dp,
                      CpAttentionReference& r) {
  const std::int64_t L = in.L, H = in.H, Hk = in.Hk, d = in.d;
  const std::int64_t hk = h * Hk / H;
  const std::int64_t lo = visible.lo(g), hi = visible.hi(g);
  double top = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = lo; j < hi; ++j) {
    double s = -std::numeric_limits<double>::infinity();
    if (visible.sees(g, j)) {
      s = 0.0;
      for (std::int64_t e = 0; e < d; ++e)
        s += in.q[in.qi(b, g, h) + e] * in.k[in.ki(b, j, hk) + e];
      s *= in.scale;
    }
    p[static_cast<std::size_t>(j)] = s;
    top = std::max(top, s);
  }
  if (top == -std::numeric_limits<double>::infinity()) return;  // sees nothing
  double sum = 0.0;
  for (std::int64_t j = lo; j < hi; ++j) {
    double& x = p[static_cast<std::size_t>(j)];
    x = quiet_exp(x - top);  // exp(-inf) = 0 for the hidden keys
    sum += x;
  }
  r.lse[static_cast<std::size_t>((b * L + g) * H + h)] = top + std::log(sum);
  double delta = 0.0;
  for (std::int64_t j = lo; j < hi; ++j) {
    double& pj = p[static_cast<std::size_t>(j)];
    pj /= sum;
    double dpj = 0.0;
    for (std::int64_t e = 0; e < d; ++e) {
      r.out[in.qi(b, g, h) + e] += pj * in.v[in.ki(b, j, hk) + e];
      dpj += in.grad_out[in.qi(b, g, h) + e] * in.v[in.ki(b, j, hk) + e];
    }
    dp[static_cast<std::size_t>(j)] = dpj;
    delta += pj * dpj;
  }
  for (std::int64_t j = lo; j < hi; ++j) {
    const double pj = p[static_cast<std::size_t>(j)];
    if (pj == 0.0) continue;
    const double ds = pj * (dp[static_cast<std::size_t>(j)] - delta);
    r.key_mass[static_cast<std::size_t>((b * L + j) * Hk + hk)] += pj;
    for (std::int64_t e = 0; e < d; ++e) {
      r.grad_q[in.qi(b, g, h) + e] += in.scale * ds * in.k[in.ki(b, j, hk) + e];
      r.grad_k[in.ki(b, j, hk) + e] += in.scale * ds * in.q[in.qi(b, g, h) + e];
      r.grad_v[in.ki(b, j, hk) + e] += pj * in.grad_out[in.qi(b, g, h) + e];
    }
  }
}

}  // namespace

CpAttentionReference cp_attention_reference(const ShardPlan& plan, const Tensor& q, const Tensor& k,
                                            const Tensor& v, const Tensor& grad_out,
                                            const sim::AttentionMask& mask) {
  CPLAB_CHECK(q.dim() == 4 && k.dim() == 4 && k.shape() == v.shape() &&
                  grad_out.shape() == q.shape() && q.size(0) == k.size(0) &&
                  q.size(1) == k.size(1) && q.size(3) == k.size(3) && k.size(2) > 0 &&
                  q.size(2) % k.size(2) == 0,
              "cp_attention_reference: q {}, k {}, v {}, grad_out {}", tensor_brief(q),
              tensor_brief(k), tensor_brief(v), tensor_brief(grad_out));
  CpAttentionReference r;
  r.rows = q.size(0);
  r.len = q.size(1);
  r.heads = q.size(2);
  r.kv_heads = k.size(2);
  r.d = q.size(3);
  CPLAB_CHECK(static_cast<std::int64_t>(plan.rows.size()) == r.rows,
              "cp_attention_reference: {} planned rows for {}", plan.rows.size(), r.rows);
  const DenseBatch in{.q = values_of(q),
                      .k = values_of(k),
                      .v = values_of(v),
                      .grad_out = values_of(grad_out),
                      .L = r.len,
                      .H = r.heads,
                      .Hk = r.kv_heads,
                      .d = r.d,
                      .scale = 1.0 / std::sqrt(static_cast<double>(r.d))};
  const std::int64_t B = r.rows, L = r.len, H = r.heads, Hk = r.kv_heads;
  r.out.assign(in.q.size(), 0.0);
  r.grad_q.assign(in.q.size(), 0.0);
  r.grad_k.assign(in.k.size(), 0.0);
  r.grad_v.assign(in.k.size(), 0.0);
  r.lse.assign(static_cast<std::size_t>(B * L * H), -std::numeric_limits<double>::infinity());
  r.key_mass.assign(static_cast<std::size_t>(B * L * Hk), 0.0);
  std::vector<double> p(static_cast<std::size_t>(L)), dp(static_cast<std::size_t>(L));
  for (std::int64_t b = 0; b < B; ++b) {
    const RowPlan& row = plan.rows[static_cast<std::size_t>(b)];
    CPLAB_CHECK(row.padded_len == L, "cp_attention_reference: row {} has L = {}, tensors {}", b,
                row.padded_len, L);
    const RowKeys visible(row, mask);
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t g = 0; g < L; ++g) attend_one_query(in, visible, b, g, h, p, dp, r);
    }
  }
  return r;
}

}  // namespace cplab::reference
