#include "properties/rank_results.hpp"

namespace cplab::properties::wire {

void encode(Writer& w, const std::string& s) {
  encode(w, static_cast<std::uint64_t>(s.size()));
  w.bytes(s.data(), s.size());
}
void decode(Reader& r, std::string& s) {
  std::uint64_t n = 0;
  decode(r, n);
  s.resize(static_cast<std::size_t>(n));
  r.bytes(s.data(), s.size());
}

void encode(Writer& w, const Tensor& t) {
  encode(w, t.defined());
  if (!t.defined()) return;
  encode(w, t.dtype());
  encode(w, t.shape());
  encode(w, static_cast<std::uint64_t>(t.nbytes()));
  w.bytes(t.raw(), t.nbytes());
}
void decode(Reader& r, Tensor& t) {
  bool defined = false;
  decode(r, defined);
  if (!defined) {
    t = Tensor();
    return;
  }
  DType dtype = DType::f32;
  Shape shape;
  std::uint64_t n = 0;
  decode(r, dtype);
  decode(r, shape);
  decode(r, n);
  t = Tensor(dtype, shape);
  CPLAB_CHECK(n == t.nbytes(), "a tensor {} arrives with {} bytes, not {}", tensor_brief(t), n,
              t.nbytes());
  r.bytes(t.raw(), t.nbytes());
}

void encode(Writer& w, const TokenField& f) {
  encode(w, f.value);
  encode(w, f.seq_dim);
  encode(w, f.rule);
  encode(w, f.pad_value);
}
void decode(Reader& r, TokenField& f) {
  decode(r, f.value);
  decode(r, f.seq_dim);
  decode(r, f.rule);
  decode(r, f.pad_value);
}

void encode(Writer& w, const Batch& b) {
  encode(w, b.tokens);
  encode(w, b.passthrough);
  encode(w, b.seq_lens);
  encode(w, b.seq_lens_padded);
}
void decode(Reader& r, Batch& b) {
  decode(r, b.tokens);
  decode(r, b.passthrough);
  decode(r, b.seq_lens);
  decode(r, b.seq_lens_padded);
}

// Every field, in declaration order: a field added to ShardLayout must be added here too (and to
// the round-trip test, tests/properties/rank_results_test.cpp).
template <typename Io, typename L>
void fields(Io&& io, L& l) {
  io(l.layout);
  io(l.cp);
  io(l.rank);
  io(l.padded_len);
  io(l.original_len);
  io(l.caller_len);
  io(l.rows);
  io(l.packed);
  io(l.index);
  io(l.caller_pos);
  io(l.positions);
  io(l.doc_ids);
  io(l.real);
  io(l.cu_seqlens);
  io(l.valid_tokens);
  io(l.cu_seqlens_padded);
  io(l.map);
  io(l.pad_policy);
  io(l.pad_token_id);
  io(l.varlen);
}

void encode(Writer& w, const MapParams& m) {
  encode(w, m.table);
  encode(w, m.unit);
}
void decode(Reader& r, MapParams& m) {
  decode(r, m.table);
  decode(r, m.unit);
}

void encode(Writer& w, const VarlenSegments& v) {
  encode(w, v.cu_seqlens_q);
  encode(w, v.cu_seqlens_k);
  encode(w, v.k_begin);
  encode(w, v.k_end);
}
void decode(Reader& r, VarlenSegments& v) {
  decode(r, v.cu_seqlens_q);
  decode(r, v.cu_seqlens_k);
  decode(r, v.k_begin);
  decode(r, v.k_end);
}

void encode(Writer& w, const ShardLayout& l) {
  fields([&](const auto& x) { encode(w, x); }, l);
}
void decode(Reader& r, ShardLayout& l) {
  fields([&](auto& x) { decode(r, x); }, l);
}

void encode(Writer& w, const RankShard& s) {
  encode(w, s.local);
  encode(w, s.layout);
}
void decode(Reader& r, RankShard& s) {
  decode(r, s.local);
  decode(r, s.layout);
}

void encode(Writer& w, const LossOutput& o) {
  encode(w, o.loss);
  encode(w, o.grad);
  encode(w, o.contributing_local);
  encode(w, o.contributing_total);
}
void decode(Reader& r, LossOutput& o) {
  decode(r, o.loss);
  decode(r, o.grad);
  decode(r, o.contributing_local);
  decode(r, o.contributing_total);
}

void encode(Writer& w, const AttentionOutput& o) {
  encode(w, o.out);
  encode(w, o.grad_q);
  encode(w, o.grad_k);
  encode(w, o.grad_v);
}
void decode(Reader& r, AttentionOutput& o) {
  decode(r, o.out);
  decode(r, o.grad_q);
  decode(r, o.grad_k);
  decode(r, o.grad_v);
}

void encode(Writer& w, const CpAttentionOutput& o) {
  for (const Tensor* t : {&o.out, &o.lse, &o.grad_q, &o.grad_k, &o.grad_v}) encode(w, *t);
}
void decode(Reader& r, CpAttentionOutput& o) {
  for (Tensor* t : {&o.out, &o.lse, &o.grad_q, &o.grad_k, &o.grad_v}) decode(r, *t);
}

void encode(Writer& w, const std::vector<bool>& v) {
  encode(w, static_cast<std::uint64_t>(v.size()));
  for (bool x : v) encode(w, x);
}
void decode(Reader& r, std::vector<bool>& v) {
  std::uint64_t n = 0;
  decode(r, n);
  v.assign(static_cast<std::size_t>(n), false);
  for (std::size_t i = 0; i < v.size(); ++i) {
    bool x = false;
    decode(r, x);
    v[i] = x;
  }
}

}  // namespace cplab::properties::wire
