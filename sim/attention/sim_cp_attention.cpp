// CP attention run by a schedule (SPEC §13) on one rank, as production runs it. One row at a time:
//   all-gather  K/V all-gathered, one step (again in the backward); dK/dV reduce-scattered to
//               their owners;
//   ring        K/V handed to the next rank each step (send_recv, the held buffer replaced by the
//               received one); the backward walks the ring again with dK/dV travelling with K/V
//               and delivered to their owner after the last step; dQ stays local;
//   ulysses     Q, K, V (and dO) head all-to-all into the group's rank-order buffer, attention over
//               the whole sequence on H/U heads, the output, LSE and gradients all-to-all back
//               (the gradients in the input dtype, as their autograd moves them);
//   usp         the all-to-all within each Ulysses group of U consecutive ranks, then a ring of R
//               groups (ring rank q's lane u talks to lane u of ring ranks q ± 1).
// What a rank holds is checked against the schedule's pieces at every step, forward and backward,
// so a misrouted exchange is an error naming the step and the rank.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "sim/attention/block_attention.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kForwardTag = 0x7c00, kBackwardTag = 0x7d00, kDeliverTag = 0x7e00;

}  // namespace

// One row of one rank: the buffers it holds and the steps it runs.
class CpAttentionRun {
 public:
  CpAttentionRun(const SimImplementation& impl, Comm& comm, const AttentionSchedule& s, DType dtype,
                 std::int64_t heads, std::int64_t kv_heads, std::int64_t head_dim)
      : impl_(impl),
        comm_(comm),
        s_(s),
        dtype_(dtype),
        heads_(heads),
        kv_heads_(kv_heads),
        scale_(impl.softmax_scale(head_dim)) {
    rank_ = comm.rank();
    check_facts(s, comm.size());
    gathered_ = s.algo == AttentionAlgo::all_gather;
    ring_ = gathered_ ? 1 : s.ring_degree;
    ulysses_ = gathered_ ? 1 : s.ulysses_degree;
    CPLAB_CHECK(ring_ * ulysses_ == comm.size() || gathered_,
                "cp_attention: {} schedule of ring degree {} × Ulysses degree {} on {} ranks",
                algo_name(s.algo), ring_, ulysses_, comm.size());
    const std::size_t want =
        gathered_ || s.algo == AttentionAlgo::ulysses ? 1 : static_cast<std::size_t>(ring_);
    CPLAB_CHECK(s.steps.size() == want, "cp_attention: a {} schedule of {} steps, expected {}",
                algo_name(s.algo), s.steps.size(), want);
    lane_ = rank_ % ulysses_;
    ring_pos_ = rank_ / ulysses_;
    for (std::int64_t u = 0; u < ulysses_; ++u) {
      group_.push_back(static_cast<int>(ring_pos_ * ulysses_ + u));
      const UlyssesHeads uh{.query = heads, .kv = kv_heads};
      heads_q_.push_back(impl.ulysses_heads_of(uh, HeadKind::query, ulysses_, u));
      heads_kv_.push_back(impl.ulysses_heads_of(uh, HeadKind::kv, ulysses_, u));
    }
    if (ulysses_ > 1) check_ulysses_heads({.query = heads, .kv = kv_heads}, ulysses_);
  }

  // Forward: q, k, v are this rank's own buffers of the row (every head).
  void forward(const HeldBuffer& q, const HeldBuffer& k, const HeldBuffer& v) {
    q_ = spread(q, heads_q_, dtype_);
    own_ = {k, v};
    first_ = gathered_ ? gathered_kv()
                       : HeldKv{spread(k, heads_kv_, dtype_), spread(v, heads_kv_, dtype_)};
    q_facts_ = impl_.buffer_facts(s_, rank_, 0, q_.pieces, false);
    out_ = q_.zeros_like();
    lse_ = HeldBuffer{
        .pieces = q_.pieces,
        .heads = q_.heads,
        .tokens = q_.tokens,
        .d = 1,
        .data = std::vector<float>(static_cast<std::size_t>(q_.tokens * q_.width()), kNegInf)};
    HeldKv held = first_;
    for (std::size_t step = 0; step < s_.steps.size(); ++step) {
      if (step > 0) pass({&held.k, &held.v}, {dtype_, dtype_}, 1, kForwardTag + step);
      const RankStep& rs = rank_step(step);
      check_held("forward", step, held.k.pieces, rs.keys, &rs.queries);
      forward_step(step, rs, held);
    }
    for (float& x : out_.data) x = round_to(dtype_, x);
  }

  // Backward against the forward's output and LSE; dout is this rank's own buffer.
  void backward(const HeldBuffer& dout) {
    dout_ = spread(dout, heads_q_, dtype_);
    delta_ = lse_.zeros_like();
    for (std::int64_t t = 0; t < q_.tokens; ++t) {
      for (std::int64_t j = 0; j < q_.width(); ++j) {
        float sum = 0.0f;
        for (std::int64_t e = 0; e < q_.d; ++e) sum += dout_.at(t, j)[e] * out_.at(t, j)[e];
        delta_.at(t, j)[0] = sum;
      }
    }
    dq_ = q_.zeros_like();
    // All-gather keeps only its own K/V between the passes and gathers them again (SPEC §13.2).
    if (gathered_) first_ = gathered_kv();
    HeldKv held = first_;
    HeldKv grads{held.k.zeros_like(), held.v.zeros_like()};
    const std::size_t steps = s_.steps.size();
    const int shift = impl_.backward_ring_shift();
    const std::int64_t delivery = impl_.dkv_delivery_step(static_cast<std::int64_t>(steps));
    bool delivered = false;
    for (std::size_t step = 0; step < steps; ++step) {
      if (step > 0) {
        pass({&held.k, &held.v, &grads.k, &grads.v}, {dtype_, dtype_, DType::f32, DType::f32},
             shift, kBackwardTag + step);
      }
      const RankStep& rs = rank_step(step);
      check_held("backward", step, held.k.pieces, rs.keys, nullptr);
      backward_step(step, rs, impl_.backward_step_kv(held, first_, static_cast<std::int64_t>(step)),
                    held.k.pieces, grads);
      if (!gathered_ && static_cast<std::int64_t>(step) == delivery) {
        dkv_ = deliver(grads);
        delivered = true;
      }
    }
    if (gathered_) {
      // In the input dtype, as ring-flash-attention's llama3 backward reduce-scatters its
      // dK/dV buffer (SPEC §13.2).
      dkv_ = {reduce_to_owners(comm_, grads.k, rank_, dtype_),
              reduce_to_owners(comm_, grads.v, rank_, dtype_)};
    } else if (!delivered) {
      // A delivery set for a step the row does not run lands after its results are taken.
      dkv_ = {first_.k.zeros_like(), first_.v.zeros_like()};
    }
  }

  // The results, as this rank's own buffers (every head).
  HeldBuffer out() { return gather_back(out_, heads_q_, heads_, dtype_); }
  HeldBuffer lse() { return gather_back(lse_, heads_q_, heads_, DType::f32); }
  // The gradients leave the kernel in the input dtype, and Ulysses' all-to-all back is their
  // autograd in that dtype: a KV head repeated over members sums their rounded gradients.
  HeldBuffer grad_q() { return gather_back(dq_, heads_q_, heads_, dtype_); }
  HeldBuffer grad_k() { return gather_back(dkv_.k, heads_kv_, kv_heads_, dtype_); }
  HeldBuffer grad_v() { return gather_back(dkv_.v, heads_kv_, kv_heads_, dtype_); }

 private:
  // Whether every rank holds at `step` the keys (and queries) the schedule says. The ranks agree
  // first, and only the lowest rank that holds the wrong buffer throws, so that the failure names
  // the same rank whichever thread runs first.
  void check_held(const char* pass, std::size_t step, const std::vector<BufferPiece>& keys,
                  const std::vector<BufferPiece>& want_keys,
                  const std::vector<BufferPiece>* want_queries) {
    std::string bad;
    if (want_queries != nullptr && q_.pieces != *want_queries) {
      bad = fmt::format("queries {}; the schedule says {}", pieces_str(q_.pieces),
                        pieces_str(*want_queries));
    } else if (keys != want_keys) {
      bad = fmt::format("keys {}; the schedule says {}", pieces_str(keys), pieces_str(want_keys));
    }
    std::vector<std::int64_t> mine{bad.empty() ? 0 : 1},
        all(static_cast<std::size_t>(comm_.size()));
    comm_.all_gather(bytes_of(mine), bytes_of(all), 1, DType::i64);
    const auto lowest = std::find(all.begin(), all.end(), 1) - all.begin();
    CPLAB_CHECK(lowest != rank_, "cp_attention {}: at step {} rank {} holds {}", pass, step, rank_,
                bad);
  }

  // The masks read the schedule's maps and per-slot facts at every position a rank holds: a
  // schedule handed in with them cut short is refused before anything reads past them.
  static void check_facts(const AttentionSchedule& s, std::int64_t ranks) {
    const auto slots = static_cast<std::size_t>(s.padded_len);
    CPLAB_CHECK(s.doc_ids.size() == slots && s.real.size() == slots && s.facts.size() == slots,
                "cp_attention: the schedule's facts are for {} documents' slots, {} real flags and "
                "{} tokens; its rows are {} slots",
                s.doc_ids.size(), s.real.size(), s.facts.size(), s.padded_len);
    CPLAB_CHECK(static_cast<std::int64_t>(s.index.size()) == ranks,
                "cp_attention: the schedule maps the tokens of {} ranks, not {}", s.index.size(),
                ranks);
    for (std::size_t r = 0; r < s.index.size(); ++r) {
      CPLAB_CHECK(static_cast<std::int64_t>(s.index[r].size()) == s.local_len(),
                  "cp_attention: the schedule maps {} local tokens of rank {}; the ranks hold {}",
                  s.index[r].size(), r, s.local_len());
    }
  }

  const RankStep& rank_step(std::size_t step) const {
    const auto& ranks = s_.steps[step].ranks;
    CPLAB_CHECK(static_cast<std::int64_t>(ranks.size()) == comm_.size() &&
                    ranks[static_cast<std::size_t>(rank_)].rank == rank_,
                "cp_attention: step {} of the schedule lists {} ranks, not rank {} of {}", step,
                ranks.size(), rank_, comm_.size());
    return ranks[static_cast<std::size_t>(rank_)];
  }

  HeldKv gathered_kv() {
    return {gather_buffers(comm_, own_.k, dtype_), gather_buffers(comm_, own_.v, dtype_)};
  }

  // A rank's own buffer → what it attends with: the group's tokens and its head group.
  HeldBuffer spread(const HeldBuffer& own, const std::vector<std::vector<std::int64_t>>& heads_of,
                    DType wire) {
    if (ulysses_ == 1) return own;
    return group_all_to_all(comm_, group_, own, heads_of, wire);
  }
  HeldBuffer gather_back(const HeldBuffer& held,
                         const std::vector<std::vector<std::int64_t>>& heads_of, std::int64_t heads,
                         DType wire) {
    if (ulysses_ == 1) return held;
    return group_all_to_all_back(comm_, group_, held, heads_of, heads, s_.local_len(), wire);
  }

  int ring_rank(std::int64_t pos) const {
    return static_cast<int>(((pos % ring_ + ring_) % ring_) * ulysses_ + lane_);
  }
  // K/V (and the travelling gradients) to ring rank +shift, theirs from ring rank -shift.
  void pass(const std::vector<HeldBuffer*>& bufs, const std::vector<DType>& wire, int shift,
            std::size_t tag) {
    pass_buffers(comm_, bufs, wire, ring_rank(ring_pos_ + shift), ring_rank(ring_pos_ - shift),
                 static_cast<int>(tag));
  }

  // The travelling dK/dV to the ring rank whose group owns them; this rank's own from whoever
  // holds them now.
  HeldKv deliver(HeldKv grads) {
    const std::int64_t owner = grads.k.pieces.front().rank / ulysses_;
    const std::int64_t offset = ((ring_pos_ - owner) % ring_ + ring_) % ring_;
    if (offset != 0) {
      pass_buffers(comm_, {&grads.k, &grads.v}, {DType::f32, DType::f32},
                   ring_rank(ring_pos_ - offset), ring_rank(ring_pos_ + offset), kDeliverTag);
    }
    CPLAB_CHECK(grads.k.pieces == first_.k.pieces,
                "cp_attention backward: rank {} was delivered the dK/dV of {}, not its own {}",
                rank_, pieces_str(grads.k.pieces), pieces_str(first_.k.pieces));
    return grads;
  }

  BlockOperands operands(const ScheduleBlock& blk, const LocalRange& keys, const HeldKv& kv,
                         const std::vector<TokenFacts>& k_facts, const MaskRule& rule,
                         std::int64_t j, std::int64_t jk) const {
    return {.q = q_.at(blk.q.begin, j),
            .k = kv.k.at(keys.begin, jk),
            .v = kv.v.at(keys.begin, jk),
            .q_stride = q_.stride(),
            .kv_stride = kv.k.stride(),
            .queries = blk.q.size(),
            .keys = keys.size(),
            .d = q_.d,
            .mask = static_cast<int>(blk.mask),
            .diagonal = blk.diagonal,
            .q_facts = q_facts_.data() + blk.q.begin,
            .k_facts = k_facts.data() + keys.begin,
            .rule = rule,
            .scale = scale_};
  }

  // The KV head query head j of the buffer reads, as a position of the held K/V.
  std::int64_t kv_index(const HeldBuffer& k, std::int64_t j) const {
    const std::int64_t h = q_.heads[static_cast<std::size_t>(j)];
    const std::int64_t jk = k.head_index(h * kv_heads_ / heads_);
    CPLAB_CHECK(jk >= 0, "cp_attention: rank {} holds query head {} but not KV head {}", rank_, h,
                h * kv_heads_ / heads_);
    return jk;
  }

  template <typename Fn>
  void for_each_block(std::size_t step, const RankStep& rs, const HeldKv& kv,
                      const std::vector<BufferPiece>& keys, Fn&& fn) const {
    const std::vector<TokenFacts> k_facts = impl_.buffer_facts(s_, rank_, step, keys, true);
    const MaskRule rule = impl_.applied_mask(s_, step);
    std::vector<std::int64_t> kv_of;  // the held KV head of each query head, found once
    for (std::size_t i = 0; i < rs.blocks.size(); ++i) {
      if (!impl_.block_computed(s_, rs, i)) continue;
      const ScheduleBlock blk = impl_.applied_block(rs.blocks[i]);
      const LocalRange k_range = impl_.block_key_range(rs, blk, kv.k.tokens);
      CPLAB_CHECK(blk.q.begin >= 0 && blk.q.end <= q_.tokens && k_range.begin >= 0 &&
                      k_range.end <= kv.k.tokens,
                  "cp_attention: rank {}'s block {} reads queries [{}, {}) of {} and keys [{}, {}) "
                  "of {}",
                  rank_, i, blk.q.begin, blk.q.end, q_.tokens, k_range.begin, k_range.end,
                  kv.k.tokens);
      if (kv_of.empty()) {
        for (std::int64_t j = 0; j < q_.width(); ++j) kv_of.push_back(kv_index(kv.k, j));
      }
      for (std::int64_t j = 0; j < q_.width(); ++j) {
        const std::int64_t jk = kv_of[static_cast<std::size_t>(j)];
        fn(blk, operands(blk, k_range, kv, k_facts, rule, j, jk), j, jk, k_range);
      }
    }
  }

  void forward_step(std::size_t step, const RankStep& rs, const HeldKv& kv) {
    const DType acc = impl_.attention_accumulation_dtype(dtype_);
    std::vector<float> block_out, block_lse;
    for_each_block(step, rs, kv, kv.k.pieces,
                   [&](const ScheduleBlock& blk, const BlockOperands& b, std::int64_t j,
                       std::int64_t, const LocalRange&) {
                     block_out.assign(static_cast<std::size_t>(b.queries * b.d), 0.0f);
                     block_lse.assign(static_cast<std::size_t>(b.queries), kNegInf);
                     block_forward(b, dtype_, block_out.data(), b.d, block_lse.data(), 1);
                     for (std::int64_t i = 0; i < b.queries; ++i) {
                       float* row = out_.at(blk.q.begin + i, j);
                       impl_.merge_block_row(row, lse_.at(blk.q.begin + i, j)[0],
                                             block_out.data() + i * b.d,
                                             block_lse[static_cast<std::size_t>(i)], b.d);
                       if (acc != DType::f32) {
                         for (std::int64_t e = 0; e < b.d; ++e) row[e] = round_to(acc, row[e]);
                       }
                     }
                   });
  }

  // `kv` is what the step recomputes against; `keys` the pieces it holds (the masks' facts).
  void backward_step(std::size_t step, const RankStep& rs, const HeldKv& kv,
                     const std::vector<BufferPiece>& keys, HeldKv& grads) {
    for_each_block(step, rs, kv, keys,
                   [&](const ScheduleBlock& blk, const BlockOperands& b, std::int64_t j,
                       std::int64_t jk, const LocalRange& k_range) {
                     block_backward(b, {.dout = dout_.at(blk.q.begin, j),
                                        .lse = lse_.at(blk.q.begin, j),
                                        .delta = delta_.at(blk.q.begin, j),
                                        .lse_stride = lse_.stride(),
                                        .dq = dq_.at(blk.q.begin, j),
                                        .dk = grads.k.at(k_range.begin, jk),
                                        .dv = grads.v.at(k_range.begin, jk)});
                   });
  }

  const SimImplementation& impl_;
  Comm& comm_;
  const AttentionSchedule& s_;
  DType dtype_;
  std::int64_t heads_, kv_heads_;
  float scale_;
  std::int64_t rank_ = 0, ring_ = 1, ulysses_ = 1, lane_ = 0, ring_pos_ = 0;
  bool gathered_ = false;
  std::vector<int> group_;
  std::vector<std::vector<std::int64_t>> heads_q_, heads_kv_;
  HeldBuffer q_, dout_, out_, lse_, delta_, dq_;
  HeldKv own_, first_, dkv_;
  std::vector<TokenFacts> q_facts_;
};

CpAttentionOutput SimImplementation::do_cp_attention(Comm& comm, const ShardLayout& layout,
                                                     const std::vector<AttentionSchedule>& rows,
                                                     const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& grad_out) {
  const std::int64_t b_rows = layout.rows, len = layout.local_len();
  const std::int64_t heads = q.size(2), kv_heads = k.size(2), d = q.size(3);
  const DType dtype = q.dtype();
  unit_roundoff(dtype);  // refuses a dtype attention does not run in
  CpAttentionOutput out{.out = Tensor(dtype, q.shape()),
                        .lse = Tensor(DType::f32, {b_rows, len, heads}),
                        .grad_q = Tensor(dtype, q.shape()),
                        .grad_k = Tensor(dtype, k.shape()),
                        .grad_v = Tensor(dtype, k.shape())};
  for (std::int64_t b = 0; b < b_rows; ++b) {
    const AttentionSchedule& s = rows[static_cast<std::size_t>(b)];
    CpAttentionRun run(*this, comm, s, dtype, heads, kv_heads, d);
    run.forward(own_buffer(q, b, comm.rank()), own_buffer(k, b, comm.rank()),
                own_buffer(v, b, comm.rank()));
    run.backward(own_buffer(grad_out, b, comm.rank()));
    store_row(out.out, b, run.out());
    store_row(out.lse, b, run.lse());
    store_row(out.grad_q, b, run.grad_q());
    store_row(out.grad_k, b, run.grad_k());
    store_row(out.grad_v, b, run.grad_v());
  }
  return out;
}

}  // namespace cplab::sim
