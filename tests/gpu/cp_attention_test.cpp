// CP attention by schedule on the device against attention of the whole row computed here in
// double, for hand-written ring and all-gather schedules (tests/gpu/hand_schedules.hpp): every
// rank's output, LSE and Q/K/V gradients, C in {1, 2, 3, 4}, f32 and bf16, grouped KV heads,
// documents and row padding, two blocks per query (a merge within a step) and scores large
// enough that an unstable merge overflows. And the refusals: a schedule that names K/V the ring
// does not hold, usp. And the builder's real schedules of every layout, Ulysses among them.
#include <cmath>
#include <functional>
#include <mutex>
#include <ostream>

#include "comm/thread_comm.hpp"
#include "core/layout_option.hpp"
#include "gpu/comm/device_sim_comm.hpp"
#include "gpu/implementation.hpp"
#include "gpu_test.hpp"
#include "hand_schedules.hpp"
#include "layouts/layout_descriptor.hpp"
#include "reference/plan.hpp"

namespace cplab::gputest {
namespace {

using sim::AttentionAlgo;

struct Case {
  AttentionAlgo algo;
  std::int64_t cp;
  DType dtype;
  HandMasks masks;
  double score_scale;  // multiplies q: large values test the merge's stability
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const char* masks = c.masks == HandMasks::causal       ? "causal"
                      : c.masks == HandMasks::split_keys ? "split"
                                                         : "doc";
  std::string name = std::string(c.algo == AttentionAlgo::ring ? "ring" : "allgather") + "_cp" +
                     std::to_string(c.cp) + "_" + std::string(dtype_name(c.dtype)) + "_" + masks;
  if (c.score_scale > 1.0) name += "_large";
  return name;
}

// PrintTo for the parameter, so a failing case names itself.
void PrintTo(const Case& c, std::ostream* os) {
  *os << sim::algo_name(c.algo) << " C=" << c.cp << " " << dtype_name(c.dtype) << " masks "
      << static_cast<int>(c.masks) << " score scale " << c.score_scale;
}

constexpr std::int64_t kRows = 2, kLocal = 9, kHeads = 4, kKvHeads = 2, kDim = 8;

// The rows' schedules and the inputs' dtype and scale: what one run needs.
struct Problem {
  std::vector<sim::AttentionSchedule> rows;
  DType dtype = DType::f32;
  double score_scale = 1.0;  // multiplies q
  std::int64_t b() const { return static_cast<std::int64_t>(rows.size()); }
  std::int64_t len() const { return rows.front().padded_len; }
  std::int64_t local() const { return rows.front().local_len(); }
};

// Global [B, L, heads, d] values, a pure function of (tensor, row, slot, head, e).
std::vector<double> global_values(const Problem& p, int tensor, std::int64_t heads, double scale) {
  std::vector<double> v(static_cast<std::size_t>(p.b() * p.len() * heads * kDim));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = scale * std::sin(0.37 * static_cast<double>(i) + 1.9 * tensor);
    Tensor one(p.dtype, {1});
    one.set(0, x);
    v[i] = one.get(0);  // the value the device sees, so the reference starts from it
  }
  return v;
}

// Global offset (in tokens) of rank r's local token k of row b, by the schedule's index map.
std::int64_t global_token(const Problem& p, std::int64_t b, std::int64_t r, std::int64_t k) {
  const auto& index = p.rows[static_cast<std::size_t>(b)].index[static_cast<std::size_t>(r)];
  return b * p.len() + index[static_cast<std::size_t>(k)];
}

// Rank r's local [B, ℓ, heads, d] slice of a global tensor.
Tensor local_slice(const Problem& p, const std::vector<double>& global, std::int64_t r,
                   std::int64_t heads) {
  Tensor t(p.dtype, {p.b(), p.local(), heads, kDim});
  const std::int64_t row = heads * kDim;
  for (std::int64_t b = 0; b < p.b(); ++b)
    for (std::int64_t k = 0; k < p.local(); ++k)
      for (std::int64_t x = 0; x < row; ++x)
        t.set((b * p.local() + k) * row + x,
              global[static_cast<std::size_t>(global_token(p, b, r, k) * row + x)]);
  return t;
}

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

// Attention of every row as a whole, doc-causal over the rows' facts, in double.
Reference reference(const Problem& problem, const std::vector<double>& q,
                    const std::vector<double>& k, const std::vector<double>& v,
                    const std::vector<double>& go) {
  const std::int64_t len = problem.len();
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  Reference r;
  r.out.assign(q.size(), 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(k.size(), 0.0);
  r.lse.assign(static_cast<std::size_t>(problem.b() * len * kHeads), -INFINITY);
  auto qa = [&](std::int64_t b, std::int64_t g, std::int64_t h) {
    return static_cast<std::size_t>(((b * len + g) * kHeads + h) * kDim);
  };
  auto ka = [&](std::int64_t b, std::int64_t g, std::int64_t h) {
    return static_cast<std::size_t>(((b * len + g) * kKvHeads + h) * kDim);
  };
  for (std::int64_t b = 0; b < problem.b(); ++b) {
    const auto& s = problem.rows[static_cast<std::size_t>(b)];
    auto sees = [&](std::int64_t g, std::int64_t j) {
      const auto gi = static_cast<std::size_t>(g), ji = static_cast<std::size_t>(j);
      return s.real[gi] && s.real[ji] && s.doc_ids[gi] == s.doc_ids[ji] && j <= g;
    };
    for (std::int64_t g = 0; g < len; ++g)
      for (std::int64_t h = 0; h < kHeads; ++h) {
        const std::int64_t hk = h * kKvHeads / kHeads;
        std::vector<double> score(static_cast<std::size_t>(len), -INFINITY);
        double m = -INFINITY;
        for (std::int64_t j = 0; j < len; ++j) {
          if (!sees(g, j)) continue;
          double x = 0;
          for (std::int64_t e = 0; e < kDim; ++e) x += q[qa(b, g, h) + e] * k[ka(b, j, hk) + e];
          score[static_cast<std::size_t>(j)] = x * scale;
          m = std::max(m, x * scale);
        }
        if (m == -INFINITY) continue;
        double z = 0;
        for (double x : score) z += x == -INFINITY ? 0.0 : std::exp(x - m);
        const double lse = m + std::log(z);
        r.lse[static_cast<std::size_t>((b * len + g) * kHeads + h)] = lse;
        std::vector<double> p(score.size());
        for (std::size_t j = 0; j < p.size(); ++j)
          p[j] = score[j] == -INFINITY ? 0.0 : std::exp(score[j] - lse);
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t e = 0; e < kDim; ++e)
            r.out[qa(b, g, h) + e] += p[static_cast<std::size_t>(j)] * v[ka(b, j, hk) + e];
        double delta = 0;
        for (std::int64_t e = 0; e < kDim; ++e)
          delta += go[qa(b, g, h) + e] * r.out[qa(b, g, h) + e];
        for (std::int64_t j = 0; j < len; ++j) {
          const double pj = p[static_cast<std::size_t>(j)];
          if (pj == 0.0) continue;
          double dp = 0;
          for (std::int64_t e = 0; e < kDim; ++e) dp += go[qa(b, g, h) + e] * v[ka(b, j, hk) + e];
          const double ds = pj * (dp - delta);
          for (std::int64_t e = 0; e < kDim; ++e) {
            r.dq[qa(b, g, h) + e] += ds * k[ka(b, j, hk) + e] * scale;
            r.dk[ka(b, j, hk) + e] += ds * q[qa(b, g, h) + e] * scale;
            r.dv[ka(b, j, hk) + e] += pj * go[qa(b, g, h) + e];
          }
        }
      }
  }
  return r;
}

// What rank `rank` records when it shards the rows as their schedules' index maps say.
ShardLayout layout_of(const Problem& p, std::int64_t rank) {
  ShardLayout l;
  l.layout = p.rows.front().layout;
  l.cp = p.rows.front().cp;
  l.rank = rank;
  l.padded_len = p.len();
  l.caller_len = l.padded_len;
  l.rows = p.b();
  for (const auto& s : p.rows) {
    const auto& index = s.index[static_cast<std::size_t>(rank)];
    l.index.push_back(index);
    l.caller_pos.push_back(index);
    l.positions.push_back(index);
    auto& docs = l.doc_ids.emplace_back();
    auto& real = l.real.emplace_back();
    std::int64_t valid = 0;
    for (const std::int64_t g : index) {
      docs.push_back(s.doc_ids[static_cast<std::size_t>(g)]);
      real.push_back(s.real[static_cast<std::size_t>(g)]);
      valid += real.back();
    }
    l.valid_tokens.push_back(valid);
  }
  return l;
}

Problem hand_problem(const Case& c) {
  Problem p{.rows = {}, .dtype = c.dtype, .score_scale = c.score_scale};
  const std::int64_t len = c.cp * kLocal;
  for (std::int64_t b = 0; b < kRows; ++b)
    p.rows.push_back(hand_schedule(
        c.algo, c.cp, kLocal,
        c.masks == HandMasks::causal ? std::vector<std::int64_t>{len}
                                     : std::vector<std::int64_t>{5 + b, len / 2, 3},
        c.masks, {.heads = kHeads, .kv_heads = kKvHeads, .head_dim = kDim, .dtype = c.dtype}));
  return p;
}

// Largest |got - want| / (1 + |want|) over rank r's local slice; -inf must meet -inf.
double worst(const Problem& p, const Tensor& got, const std::vector<double>& want, std::int64_t r,
             std::int64_t per_token) {
  double w = 0;
  for (std::int64_t b = 0; b < p.b(); ++b)
    for (std::int64_t k = 0; k < p.local(); ++k)
      for (std::int64_t x = 0; x < per_token; ++x) {
        const double g = got.get((b * p.local() + k) * per_token + x);
        const double e = want[static_cast<std::size_t>(global_token(p, b, r, k) * per_token + x)];
        if (e == -INFINITY || g == -INFINITY) {
          if (e != g) return INFINITY;
          continue;
        }
        w = std::max(w, std::abs(g - e) / (1.0 + std::abs(e)));
      }
  return w;
}

// Runs `rank_body(comm)` on every rank of a group of `cp` ranks of `kind`'s comm.
void on_ranks(gpu::GpuCommKind kind, std::int64_t cp, const std::function<void(Comm&)>& rank_body) {
  if (kind == gpu::GpuCommKind::device_sim) {
    gpu::DeviceSimWorld world(static_cast<int>(cp));
    world.run([&](gpu::DeviceSimComm& comm) { rank_body(comm); });
  } else {
    // The host comm's ranks: the implementation stages through it (host) or sets NCCL up over it.
    sim::World world(static_cast<int>(cp));
    world.run([&](sim::RankContext& ctx) { rank_body(ctx.comm); });
  }
}

// The problems found on the ranks; empty when every rank matched the reference.
std::vector<std::string> run_problem(const Problem& p, gpu::GpuCommKind kind) {
  const std::int64_t cp = p.rows.front().cp;
  const auto q = global_values(p, 0, kHeads, p.score_scale);
  const auto k = global_values(p, 1, kKvHeads, 1.0);
  const auto v = global_values(p, 2, kKvHeads, 1.0);
  const auto go = global_values(p, 3, kHeads, 1.0);
  const Reference want = reference(p, q, k, v, go);
  const double tol = (p.dtype == DType::f32 ? 2e-4 : 5e-2) * (p.score_scale > 1.0 ? 10.0 : 1.0);
  const auto gpu = gpu::make_gpu_implementation(kind);
  std::mutex mutex;
  std::vector<std::string> problems;
  on_ranks(kind, cp, [&](Comm& comm) {
    const std::int64_t r = comm.rank();
    const CpAttentionOutput got = gpu->cp_attention(
        comm, layout_of(p, r), p.rows, local_slice(p, q, r, kHeads), local_slice(p, k, r, kKvHeads),
        local_slice(p, v, r, kKvHeads), local_slice(p, go, r, kHeads));
    const std::pair<const char*, double> errors[] = {
        {"out", worst(p, got.out, want.out, r, kHeads * kDim)},
        {"lse", worst(p, got.lse, want.lse, r, kHeads)},
        {"grad_q", worst(p, got.grad_q, want.dq, r, kHeads * kDim)},
        {"grad_k", worst(p, got.grad_k, want.dk, r, kKvHeads * kDim)},
        {"grad_v", worst(p, got.grad_v, want.dv, r, kKvHeads * kDim)}};
    std::lock_guard lock(mutex);
    if (got.out.dtype() != p.dtype || got.grad_q.dtype() != p.dtype ||
        got.grad_k.dtype() != p.dtype || got.lse.dtype() != DType::f32)
      problems.push_back("rank " + std::to_string(r) + ": wrong output dtypes");
    for (const auto& [what, e] : errors)
      if (!(e <= tol))
        problems.push_back("rank " + std::to_string(r) + " " + what + ": error " +
                           std::to_string(e));
  });
  return problems;
}

std::vector<std::string> run_case(const Case& c, gpu::GpuCommKind kind) {
  return run_problem(hand_problem(c), kind);
}

class CpAttentionTest : public GpuParamTest<Case> {};

TEST_P(CpAttentionTest, every_rank_matches_attention_of_the_whole_row) {
  const auto problems = run_case(GetParam(), gpu::GpuCommKind::device_sim);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (AttentionAlgo algo : {AttentionAlgo::ring, AttentionAlgo::all_gather})
    for (std::int64_t cp : {1, 2, 3, 4}) {
      for (HandMasks masks : {HandMasks::doc_causal, HandMasks::causal, HandMasks::split_keys})
        out.push_back({algo, cp, DType::f32, masks, 1.0});
      out.push_back({algo, cp, DType::bf16, HandMasks::doc_causal, 1.0});
    }
  // Scores up to about 170: exp of an unshifted score, or of a positive difference, is inf in f32.
  out.push_back({AttentionAlgo::ring, 3, DType::f32, HandMasks::split_keys, 60.0});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Schedules, CpAttentionTest, ::testing::ValuesIn(cases()), case_name);

class CpAttentionComms : public GpuTest {};

TEST_F(CpAttentionComms, host_staged_and_nccl_rings_match_the_whole_row) {
  for (AttentionAlgo algo : {AttentionAlgo::ring, AttentionAlgo::all_gather}) {
    const Case staged{algo, 3, DType::bf16, HandMasks::split_keys, 1.0};
    const auto problems = run_case(staged, gpu::GpuCommKind::host);
    EXPECT_TRUE(problems.empty()) << "gpu-host: " << ::testing::PrintToString(problems);
    // NCCL puts one rank on each visible device.
    const Case nccl{algo, gpu::device_count(), DType::f32, HandMasks::doc_causal, 1.0};
    const auto nccl_problems = run_case(nccl, gpu::GpuCommKind::nccl);
    EXPECT_TRUE(nccl_problems.empty()) << "gpu-nccl: " << ::testing::PrintToString(nccl_problems);
  }
}

class CpAttentionLayouts : public GpuTest {};

// The builder's schedules (zigzag rings, shifted diagonals, document-bounded blocks, Ulysses with
// KV heads shared and repeated) of every layout, as the properties draw them, on device-sim ranks.
TEST_F(CpAttentionLayouts, every_layouts_schedules_match_the_whole_row) {
  const sim::AttentionShape shape{
      .heads = kHeads, .kv_heads = kKvHeads, .head_dim = kDim, .dtype = DType::f32};
  int ran = 0;
  for (const sim::LayoutDescriptor& layout : sim::layout_descriptors()) {
    for (std::int64_t cp : {2, 3, 4}) {
      if (layout.cp_off) continue;
      LayoutSpec spec;
      spec.layout = layout.name;
      spec.cp = cp;
      // The ring degree R where the layout declares one (rings of R ranks, U = C/R): two levels
      // at even C.
      const layouts::LayoutOption* ring = layouts::option_named("ring_degree");
      for (const layouts::LayoutOption* option : layouts::options_of(layout.name)) {
        if (option == ring) ring->set(spec, cp % 2 == 0 ? 2 : 1);
      }
      std::vector<std::int64_t> docs{5, 3, 8 * cp};
      RowPlan row;
      try {
        row = layout.bshd_rows ? reference::plan_row(spec, 8 * cp + 3)
                               : reference::plan_row(spec, 8 + 8 * cp, &docs);
      } catch (const Error&) {  // a row the layout refuses at this C
        continue;
      }
      for (AttentionAlgo algo :
           {AttentionAlgo::ring, AttentionAlgo::all_gather, AttentionAlgo::ulysses}) {
        if (!sim::schedule_refusal(layout, spec, algo, shape).empty()) continue;
        const Problem p{.rows = {sim::build_schedule(layout, spec, row, algo, shape)}};
        const auto problems = run_problem(p, gpu::GpuCommKind::device_sim);
        EXPECT_TRUE(problems.empty()) << layout.name << " C=" << cp << " " << sim::algo_name(algo)
                                      << ": " << ::testing::PrintToString(problems);
        ++ran;
      }
    }
  }
  EXPECT_GT(ran, 20);
}

class CpAttentionRefusals : public GpuTest {};

TEST_F(CpAttentionRefusals, a_ring_schedule_naming_kv_the_rank_does_not_hold_is_an_error) {
  const Case c{AttentionAlgo::ring, 3, DType::f32, HandMasks::doc_causal, 1.0};
  Problem p = hand_problem(c);
  auto& rows = p.rows;
  // Steps 1 and 2 swapped: every rank is told it holds the shard it gets a step later.
  for (auto& row : rows) std::swap(row.steps[1], row.steps[2]);
  const auto gpu = gpu::make_gpu_implementation();
  gpu::DeviceSimWorld world(3);
  try {
    world.run([&](gpu::DeviceSimComm& comm) {
      const std::int64_t r = comm.rank();
      const Tensor q(DType::f32, {kRows, kLocal, kHeads, kDim}),
          kv(DType::f32, {kRows, kLocal, kKvHeads, kDim});
      gpu->cp_attention(comm, layout_of(p, r), rows, q, kv, kv, q);
    });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("but the rank holds those of"), std::string::npos)
        << e.what();
  }
}

TEST(CpAttentionSupport, ring_all_gather_and_ulysses_run_usp_says_why_not) {
  const auto gpu = gpu::make_gpu_implementation();
  EXPECT_EQ(gpu->cp_attention_unsupported(AttentionAlgo::ring), "");
  EXPECT_EQ(gpu->cp_attention_unsupported(AttentionAlgo::all_gather), "");
  EXPECT_EQ(gpu->cp_attention_unsupported(AttentionAlgo::ulysses), "");
  EXPECT_NE(gpu->cp_attention_unsupported(AttentionAlgo::usp).find("not usp"), std::string::npos);
}

}  // namespace
}  // namespace cplab::gputest
