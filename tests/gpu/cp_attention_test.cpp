// CP attention by schedule on the device against attention of the whole row computed here in
// double, for hand-written ring and all-gather schedules (tests/gpu/hand_schedules.hpp): every
// rank's output, LSE and Q/K/V gradients, C in {1, 2, 3, 4}, f32 and bf16, grouped KV heads,
// documents and row padding, two blocks per query (a merge within a step) and scores large
// enough that an unstable merge overflows. And the refusals: a schedule that names K/V the ring
// does not hold, ulysses.
#include <cmath>
#include <functional>
#include <mutex>

#include "gpu/comm/device_sim_comm.hpp"
#include "gpu/implementation.hpp"
#include "gpu_test.hpp"
#include "hand_schedules.hpp"
#include "sim/thread_comm.hpp"

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

constexpr std::int64_t kRows = 2, kLocal = 9, kHeads = 4, kKvHeads = 2, kDim = 8;

// Global [B, L, heads, d] values, a pure function of (tensor, row, slot, head, e).
std::vector<double> global_values(int tensor, std::int64_t len, std::int64_t heads, DType dtype,
                                  double scale) {
  std::vector<double> v(static_cast<std::size_t>(kRows * len * heads * kDim));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = scale * std::sin(0.37 * static_cast<double>(i) + 1.9 * tensor);
    Tensor one(dtype, {1});
    one.set(0, x);
    v[i] = one.get(0);  // the value the device sees, so the reference starts from it
  }
  return v;
}

// Rank r's local [B, ℓ, heads, d] slice of a global tensor (contiguous layout).
Tensor local_slice(const std::vector<double>& global, std::int64_t r, std::int64_t cp,
                   std::int64_t heads, DType dtype) {
  Tensor t(dtype, {kRows, kLocal, heads, kDim});
  const std::int64_t row = heads * kDim, len = cp * kLocal;
  for (std::int64_t b = 0; b < kRows; ++b)
    for (std::int64_t k = 0; k < kLocal; ++k)
      for (std::int64_t x = 0; x < row; ++x)
        t.set((b * kLocal + k) * row + x,
              global[static_cast<std::size_t>((b * len + r * kLocal + k) * row + x)]);
  return t;
}

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

// Attention of every row as a whole, doc-causal over the rows' facts, in double.
Reference reference(const std::vector<sim::AttentionSchedule>& rows, const std::vector<double>& q,
                    const std::vector<double>& k, const std::vector<double>& v,
                    const std::vector<double>& go) {
  const std::int64_t len = rows[0].padded_len;
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDim));
  Reference r;
  r.out.assign(q.size(), 0.0);
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(k.size(), 0.0);
  r.lse.assign(static_cast<std::size_t>(kRows * len * kHeads), -INFINITY);
  auto qa = [&](std::int64_t b, std::int64_t g, std::int64_t h) {
    return static_cast<std::size_t>(((b * len + g) * kHeads + h) * kDim);
  };
  auto ka = [&](std::int64_t b, std::int64_t g, std::int64_t h) {
    return static_cast<std::size_t>(((b * len + g) * kKvHeads + h) * kDim);
  };
  for (std::int64_t b = 0; b < kRows; ++b) {
    const auto& s = rows[static_cast<std::size_t>(b)];
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

// What rank `rank` records when it shards the rows of `rows` contiguously.
ShardLayout contiguous_layout(const std::vector<sim::AttentionSchedule>& rows, std::int64_t rank) {
  ShardLayout l;
  l.layout = "contiguous";
  l.cp = rows.front().cp;
  l.rank = rank;
  l.padded_len = rows.front().padded_len;
  l.caller_len = l.padded_len;
  l.rows = static_cast<std::int64_t>(rows.size());
  for (const auto& s : rows) {
    const auto index = contiguous_index(rank, s.local_len());
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

std::vector<sim::AttentionSchedule> schedules(const Case& c) {
  std::vector<sim::AttentionSchedule> rows;
  const std::int64_t len = c.cp * kLocal;
  for (std::int64_t b = 0; b < kRows; ++b)
    rows.push_back(hand_schedule(
        c.algo, c.cp, kLocal,
        c.masks == HandMasks::causal ? std::vector<std::int64_t>{len}
                                     : std::vector<std::int64_t>{5 + b, len / 2, 3},
        c.masks, {.heads = kHeads, .kv_heads = kKvHeads, .head_dim = kDim, .dtype = c.dtype}));
  return rows;
}

// Largest |got - want| / (1 + |want|) over rank r's local slice; -inf must meet -inf.
double worst(const Tensor& got, const std::vector<double>& want, std::int64_t r, std::int64_t cp,
             std::int64_t per_token) {
  double w = 0;
  const std::int64_t len = cp * kLocal;
  for (std::int64_t b = 0; b < kRows; ++b)
    for (std::int64_t k = 0; k < kLocal; ++k)
      for (std::int64_t x = 0; x < per_token; ++x) {
        const double g = got.get((b * kLocal + k) * per_token + x);
        const double e = want[static_cast<std::size_t>((b * len + r * kLocal + k) * per_token + x)];
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
std::vector<std::string> run_case(const Case& c, gpu::GpuCommKind kind) {
  const auto rows = schedules(c);
  const std::int64_t len = c.cp * kLocal;
  const auto q = global_values(0, len, kHeads, c.dtype, c.score_scale);
  const auto k = global_values(1, len, kKvHeads, c.dtype, 1.0);
  const auto v = global_values(2, len, kKvHeads, c.dtype, 1.0);
  const auto go = global_values(3, len, kHeads, c.dtype, 1.0);
  const Reference want = reference(rows, q, k, v, go);
  const double tol = (c.dtype == DType::f32 ? 2e-4 : 5e-2) * (c.score_scale > 1.0 ? 10.0 : 1.0);
  const auto gpu = gpu::make_gpu_implementation(kind);
  std::mutex mutex;
  std::vector<std::string> problems;
  on_ranks(kind, c.cp, [&](Comm& comm) {
    const std::int64_t r = comm.rank();
    const CpAttentionOutput got = gpu->cp_attention(
        comm, contiguous_layout(rows, r), rows, local_slice(q, r, c.cp, kHeads, c.dtype),
        local_slice(k, r, c.cp, kKvHeads, c.dtype), local_slice(v, r, c.cp, kKvHeads, c.dtype),
        local_slice(go, r, c.cp, kHeads, c.dtype));
    const std::pair<const char*, double> errors[] = {
        {"out", worst(got.out, want.out, r, c.cp, kHeads * kDim)},
        {"lse", worst(got.lse, want.lse, r, c.cp, kHeads)},
        {"grad_q", worst(got.grad_q, want.dq, r, c.cp, kHeads * kDim)},
        {"grad_k", worst(got.grad_k, want.dk, r, c.cp, kKvHeads * kDim)},
        {"grad_v", worst(got.grad_v, want.dv, r, c.cp, kKvHeads * kDim)}};
    std::lock_guard lock(mutex);
    if (got.out.dtype() != c.dtype || got.grad_q.dtype() != c.dtype ||
        got.grad_k.dtype() != c.dtype || got.lse.dtype() != DType::f32)
      problems.push_back("rank " + std::to_string(r) + ": wrong output dtypes");
    for (const auto& [what, e] : errors)
      if (!(e <= tol))
        problems.push_back("rank " + std::to_string(r) + " " + what + ": error " +
                           std::to_string(e));
  });
  return problems;
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

class CpAttentionRefusals : public GpuTest {};

TEST_F(CpAttentionRefusals, a_ring_schedule_naming_kv_the_rank_does_not_hold_is_an_error) {
  const Case c{AttentionAlgo::ring, 3, DType::f32, HandMasks::doc_causal, 1.0};
  auto rows = schedules(c);
  // Steps 1 and 2 swapped: every rank is told it holds the shard it gets a step later.
  for (auto& row : rows) std::swap(row.steps[1], row.steps[2]);
  const auto gpu = gpu::make_gpu_implementation();
  gpu::DeviceSimWorld world(3);
  try {
    world.run([&](gpu::DeviceSimComm& comm) {
      const std::int64_t r = comm.rank();
      const Tensor q(DType::f32, {kRows, kLocal, kHeads, kDim}),
          kv(DType::f32, {kRows, kLocal, kKvHeads, kDim});
      gpu->cp_attention(comm, contiguous_layout(rows, r), rows, q, kv, kv, q);
    });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("but the rank holds those of"), std::string::npos)
        << e.what();
  }
}

TEST(CpAttentionSupport, ring_and_all_gather_run_ulysses_and_usp_say_why_not) {
  const auto gpu = gpu::make_gpu_implementation();
  EXPECT_EQ(gpu->cp_attention_unsupported(AttentionAlgo::ring), "");
  EXPECT_EQ(gpu->cp_attention_unsupported(AttentionAlgo::all_gather), "");
  EXPECT_NE(gpu->cp_attention_unsupported(AttentionAlgo::ulysses).find("not ulysses"),
            std::string::npos);
  EXPECT_NE(gpu->cp_attention_unsupported(AttentionAlgo::usp).find("not usp"), std::string::npos);
}

}  // namespace
}  // namespace cplab::gputest
