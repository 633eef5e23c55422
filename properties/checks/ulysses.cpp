// The Ulysses head all-to-all (SPEC §10.5), for every layout: [B, ℓ, H, d] on each rank ↔
// [B, L, H/U, d] in global order with the rank's head group. Two properties: the all-to-all gives
// the reference's head split of the global tensor and its inverse gives the local shard back; and
// attention over the heads after the all-to-all (full sequence, document-causal mask) equals the
// unsharded attention of those heads, and of the rank's own rows after the inverse.
#include "reference/ulysses.hpp"

#include <fmt/format.h>

#include <functional>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// Exact for the sizes the generators draw: the same reference attention on the same inputs.
constexpr Tolerance kUlyssesAttentionTolerance{.abs = 1e-6, .rel = 1e-5};

// The case's heads, a pure function of its seed and C: 1 or 2 query heads per rank; KV heads
// below U (a divisor of U, repeated up to U) on half the cases with U > 1, else U or H.
UlyssesHeads heads_for(const Case& c) {
  const std::int64_t group = c.spec.cp;
  const std::uint64_t pick = mix(c.seed, 0x0715e5, static_cast<std::uint64_t>(group), 0);
  const std::int64_t per_rank = 1 + static_cast<std::int64_t>(pick & 1);
  UlyssesHeads heads{.query = per_rank * group, .kv = group};
  if (group > 1 && ((pick >> 1) & 1) != 0) {
    std::vector<std::int64_t> divisors;
    for (std::int64_t d = 1; d < group; ++d) {
      if (group % d == 0) divisors.push_back(d);
    }
    heads.kv = divisors[static_cast<std::size_t>((pick >> 2) % divisors.size())];
  } else if (((pick >> 2) & 1) != 0) {
    heads.kv = heads.query;
  }
  return heads;
}

void note_heads(const Case& c, const UlyssesHeads& heads, CheckNotes& notes) {
  notes.tags.push_back(
      fmt::format("{} {} H={} H_kv={}", c.spec.layout, cp_class(c.spec.cp), heads.query, heads.kv));
  if (heads.kv < c.spec.cp) notes.options.emplace_back("KV heads repeated");
  notes.notes.push_back(fmt::format("H = {}, H_kv = {}, U = {}", heads.query, heads.kv, c.spec.cp));
}

// Self-locating [B, L, H, d] f32: 1 + e + d·(h + H·(g + L·b)) names row, slot, head and element.
Tensor located_heads(const Shape& shape) {
  Tensor t(DType::f32, shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i + 1));
  return t;
}

std::string locate(const Shape& global, double value) {
  const auto code = static_cast<std::int64_t>(value) - 1;
  if (value != static_cast<double>(code + 1) || code < 0 || code >= shape_numel(global))
    return fmt::format("{}", value);
  const std::int64_t e = code % global[3], h = code / global[3] % global[2],
                     g = code / (global[3] * global[2]) % global[1],
                     b = code / (global[3] * global[2] * global[1]);
  return fmt::format("{} (row {}, slot {}, head {}, element {})", value, b, g, h, e);
}

// "" when equal; else the first wrong element, by row, token, head and element, and whose value
// landed there. `slot_of(b, s)` names token s of row b as a global slot.
std::string heads_mismatch(const std::string& what, const Tensor& expected, const Tensor& actual,
                           const Shape& global,
                           const std::function<std::int64_t(std::int64_t, std::int64_t)>& slot_of) {
  if (expected.shape() != actual.shape())
    return fmt::format("{}: shape {}, expected {}", what, shape_str(actual.shape()),
                       shape_str(expected.shape()));
  const Shape& s = expected.shape();
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    if (expected.get(i) == actual.get(i)) continue;
    const std::int64_t e = i % s[3], j = i / s[3] % s[2], k = i / (s[3] * s[2]) % s[1],
                       b = i / (s[3] * s[2] * s[1]);
    return fmt::format(
        "{}: row {}, token {} (global slot {}), head {}, element {}: expected {}, "
        "got {}",
        what, b, k, slot_of(b, k), j, e, locate(global, expected.get(i)),
        locate(global, actual.get(i)));
  }
  return {};
}

const char* kind_name(HeadKind kind) { return kind == HeadKind::query ? "query" : "KV"; }

// What a rank attends with after the all-to-all.
struct GatheredHeads {
  Tensor q, k, v;
  const Tensor& operator[](std::size_t i) const { return i == 0 ? q : i == 1 ? k : v; }
};
// A rank's result as bytes, when ranks are processes (rank_results.hpp).
void encode(wire::Writer& w, const GatheredHeads& g) {
  wire::encode(w, g.q);
  wire::encode(w, g.k);
  wire::encode(w, g.v);
}
void decode(wire::Reader& r, GatheredHeads& out) {
  wire::decode(r, out.q);
  wire::decode(r, out.k);
  wire::decode(r, out.v);
}

std::string check_split(const Case& c, Implementation& impl, const ShardPlan& plan, std::int64_t m,
                        const UlyssesHeads& heads, HeadKind kind) {
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len, group = c.spec.cp;
  const Shape global{rows, len, heads.of(kind), c.dim};
  const Tensor x = located_heads(global);
  const std::vector<Tensor> gathered = on_ranks(group, [&](Comm& comm, std::int64_t r) {
    return impl.ulysses_all_to_all(comm, reference_layout(plan, r),
                                   reference::select_rank(plan, x, 1, r), heads, kind);
  });
  for (std::int64_t r = 0; r < group; ++r) {
    const std::string bad =
        heads_mismatch(fmt::format("ulysses_all_to_all of {} heads on rank {}, microbatch {}",
                                   kind_name(kind), r, m),
                       reference::ulysses_head_split(x, heads, kind, group, r),
                       gathered[static_cast<std::size_t>(r)], global,
                       [](std::int64_t, std::int64_t s) { return s; });
    if (!bad.empty()) return bad;
  }
  const std::vector<Tensor> back = on_ranks(group, [&](Comm& comm, std::int64_t r) {
    return impl.ulysses_all_to_all_inverse(comm, reference_layout(plan, r),
                                           gathered[static_cast<std::size_t>(r)], heads, kind);
  });
  for (std::int64_t r = 0; r < group; ++r) {
    const std::string bad = heads_mismatch(
        fmt::format("ulysses_all_to_all then its inverse, {} heads on rank {}, microbatch {}",
                    kind_name(kind), r, m),
        reference::select_rank(plan, x, 1, r), back[static_cast<std::size_t>(r)], global,
        [&](std::int64_t b, std::int64_t k) {
          return plan.rows[static_cast<std::size_t>(b)]
              .index[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
        });
    if (!bad.empty()) return bad;
  }
  return {};
}

std::string check_all_to_all(const Case& c, Implementation& impl, CheckNotes& notes) {
  const UlyssesHeads heads = heads_for(c);
  note_heads(c, heads, notes);
  const Subject subject(c);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    for (HeadKind kind : {HeadKind::query, HeadKind::kv}) {
      const std::string bad =
          check_split(c, impl, subject.microbatches[static_cast<std::size_t>(m)], m, heads, kind);
      if (!bad.empty()) return failure_prefix(c) + bad;
    }
  }
  return {};
}

// Whether every query head of rank u reads, by multi_head_attention's rule on its own heads
// (local KV head ⌊j·n_kv/n⌋ for local query head j), the KV head the unsharded attention gives
// its global head (⌊h·H_kv/H⌋): else attention over the rank's heads is not that of the heads.
std::string check_local_kv_heads(const UlyssesHeads& heads, std::int64_t group, std::int64_t u) {
  const auto queries = reference::ulysses_head_group(heads, HeadKind::query, group, u);
  const auto kvs = reference::ulysses_head_group(heads, HeadKind::kv, group, u);
  const auto n = static_cast<std::int64_t>(queries.size()),
             n_kv = static_cast<std::int64_t>(kvs.size());
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t h = queries[static_cast<std::size_t>(j)];
    const std::int64_t local = n_kv > 0 ? kvs[static_cast<std::size_t>(j * n_kv / n)] : -1;
    if (local != h * heads.kv / heads.query)
      return fmt::format(
          "rank {}'s query head {} (global {}) reads KV head {} after the all-to-all; the "
          "unsharded attention reads {}",
          u, j, h, local, h * heads.kv / heads.query);
  }
  return {};
}

// The rank's attention runs the reference on what its all-to-all gathered, and the unsharded
// attention's heads are that same function of the global heads. So the gathered Q, K and V are
// checked equal to the global heads' split, bit for bit (and each local query head to read its
// KV head), and the rank's output then is the split of the unsharded attention: running the
// reference again on every rank would repeat the unsharded one, half of the property's time.
// That output's inverse all-to-all must give the rank's own rows of the unsharded attention.
std::string check_attention_microbatch(const Case& c, Implementation& impl, const ShardPlan& plan,
                                       std::int64_t m, const UlyssesHeads& heads) {
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len, group = c.spec.cp;
  const auto stream = [&](std::uint64_t which, std::int64_t h) {
    return float_tensor(c.seed, 700 + 4 * static_cast<std::uint64_t>(m) + which,
                        {rows, len, h, c.dim}, 1.0f);
  };
  const Tensor q = stream(0, heads.query), k = stream(1, heads.kv), v = stream(2, heads.kv);
  const auto gathered = on_ranks(group, [&](Comm& comm, std::int64_t r) {
    const ShardLayout layout = reference_layout(plan, r);
    const auto a2a = [&](const Tensor& t, HeadKind kind) {
      return impl.ulysses_all_to_all(comm, layout, reference::select_rank(plan, t, 1, r), heads,
                                     kind);
    };
    return GatheredHeads{
        .q = a2a(q, HeadKind::query), .k = a2a(k, HeadKind::kv), .v = a2a(v, HeadKind::kv)};
  });
  const char* names[] = {"Q", "K", "V"};
  const Tensor* globals[] = {&q, &k, &v};
  for (std::int64_t r = 0; r < group; ++r) {
    for (std::size_t i = 0; i < 3; ++i) {
      const HeadKind kind = i == 0 ? HeadKind::query : HeadKind::kv;
      const std::string bad = heads_mismatch(
          fmt::format("the {} heads rank {} attends with after ulysses_all_to_all, microbatch {}",
                      names[i], r, m),
          reference::ulysses_head_split(*globals[i], heads, kind, group, r),
          gathered[static_cast<std::size_t>(r)][i], globals[i]->shape(),
          [](std::int64_t, std::int64_t s) { return s; });
      if (!bad.empty()) return bad;
    }
    const std::string bad = check_local_kv_heads(heads, group, r);
    if (!bad.empty()) return bad;
  }
  const Tensor unsharded = reference::multi_head_attention(plan, q, k, v);
  const std::vector<Tensor> back = on_ranks(group, [&](Comm& comm, std::int64_t r) {
    return impl.ulysses_all_to_all_inverse(
        comm, reference_layout(plan, r),
        reference::ulysses_head_split(unsharded, heads, HeadKind::query, group, r), heads,
        HeadKind::query);
  });
  for (std::int64_t r = 0; r < group; ++r) {
    TokenFrame rows_frame{
        .what = fmt::format("attention rows of rank {} after the inverse all-to-all, microbatch {}",
                            r, m),
        .seq_dim = 1,
        .plan = &plan};
    for (const RowPlan& row : plan.rows)
      rows_frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
    const std::string bad =
        tensor_mismatch(c, rows_frame, reference::select_rank(plan, unsharded, 1, r),
                        back[static_cast<std::size_t>(r)], kUlyssesAttentionTolerance);
    if (!bad.empty()) return bad;
  }
  return {};
}

std::string check_attention_heads(const Case& c, Implementation& impl, CheckNotes& notes) {
  const UlyssesHeads heads = heads_for(c);
  note_heads(c, heads, notes);
  const Subject subject(c);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const std::string bad = check_attention_microbatch(
        c, impl, subject.microbatches[static_cast<std::size_t>(m)], m, heads);
    if (!bad.empty()) return failure_prefix(c) + bad;
  }
  return {};
}

std::string ulysses_unsupported(const Implementation& impl) { return impl.ulysses_unsupported(); }

const std::vector<CoverageRule> kUlyssesCoverage = {
    {kAnyCase, {}, Cross::cp},
    {"KV heads repeated", {}, Cross::none, true},
};

}  // namespace

extern const PropertyInfo ulysses_all_to_all_property;
const PropertyInfo ulysses_all_to_all_property{
    .name = "ulysses_all_to_all_splits_heads",
    .invariant =
        "the Ulysses head all-to-all gives every rank the global sequence in order with "
        "its head group (KV heads fewer than U repeated), and its inverse gives the local "
        "shard back",
    .check = check_all_to_all,
    .coverage = kUlyssesCoverage,
    .unsupported = ulysses_unsupported,
};

extern const PropertyInfo ulysses_attention_property;
const PropertyInfo ulysses_attention_property{
    .name = "ulysses_attention_matches_unsharded",
    .invariant =
        "attention over each rank's heads after the Ulysses all-to-all equals the "
        "unsharded attention of those heads, and the rank's own rows after the inverse",
    .check = check_attention_heads,
    .coverage = kUlyssesCoverage,
    .unsupported = ulysses_unsupported,
};

}  // namespace cplab::properties
