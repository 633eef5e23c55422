// cplab.attention and cplab.mask_matrix: the reference's unsharded attention under a mask (SPEC
// §13.3, §13.5) and the mask itself, on one row's padded global stream, for users who check
// their own CP attention against it.
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attention_mask.hpp"
#include "core/error.hpp"
#include "python/bindings.hpp"
#include "python/layout_options.hpp"
#include "python/tensor_bridge.hpp"
#include "reference/cp_attention_reference.hpp"

namespace cplab::python {
namespace py = pybind11;
using namespace pybind11::literals;

namespace {

bool is_floating(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

// The reference is dense and runs on one thread: B·L²·H·d multiply-adds past this take minutes,
// and a Python call cannot be interrupted meanwhile.
constexpr double kMaxAttentionWork = 8589934592.0;  // 2^33

// A NaN would hide as a query that sees nothing (the reference's max skips it): refused.
void check_finite(const Tensor& t, const char* what) {
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    CPLAB_CHECK(std::isfinite(t.get(i)), "attention: {} holds a non-finite value at element {}",
                what, i);
  }
}

// A [B, L, H, d] torch tensor's worth of values handed back as f32 (the reference computes in
// double; every dtype a user's attention runs in is compared against f32 at least as wide).
py::object f32_tensor(const std::vector<double>& values, const Shape& shape) {
  std::vector<float> out(values.begin(), values.end());
  return tensor_to_torch(Tensor::from<float>(shape, out));
}

ShardPlan attention_plan(const LayoutSpec& spec, const RowShape& shape, std::int64_t rows) {
  CPLAB_CHECK(!shape.doc_lens || rows == 1,
              "a packed row (doc_lens=) is one row: q has B={}, expected 1", rows);
  return plan_rows(spec, shape, rows);
}

py::dict attention_fn(py::handle q_obj, py::handle k_obj, py::handle v_obj, py::handle grad_out_obj,
                      const std::string& layout, std::int64_t cp, const RowShape& shape,
                      const std::string& mask_text, const LayoutOptions& options) {
  const sim::AttentionMask mask = sim::parse_mask(mask_text);
  const Tensor q = tensor_from_torch(q_obj, "q");
  const Tensor k = tensor_from_torch(k_obj, "k");
  const Tensor v = tensor_from_torch(v_obj, "v");
  CPLAB_CHECK(q.dim() == 4 && k.dim() == 4 && v.shape() == k.shape() && q.size(0) == k.size(0) &&
                  q.size(1) == k.size(1) && q.size(3) == k.size(3) && k.size(2) >= 1 &&
                  q.size(2) % k.size(2) == 0 && is_floating(q.dtype()) && is_floating(k.dtype()) &&
                  is_floating(v.dtype()),
              "attention: q [B, L, H, d] and k, v [B, L, H_kv, d] of a floating dtype with H_kv "
              "dividing H; got q {}, k {}, v {}",
              tensor_brief(q), tensor_brief(k), tensor_brief(v));
  const bool backward = !grad_out_obj.is_none();
  const Tensor grad_out =
      backward ? tensor_from_torch(grad_out_obj, "grad_out") : Tensor(DType::f32, q.shape());
  CPLAB_CHECK(grad_out.shape() == q.shape() && is_floating(grad_out.dtype()),
              "attention: grad_out must be like q {}; got {}", tensor_brief(q),
              tensor_brief(grad_out));
  CPLAB_CHECK(q.size(2) >= 1 && q.size(3) >= 1, "attention: H and d must be at least 1; got q {}",
              tensor_brief(q));
  const double work = static_cast<double>(q.size(0)) * static_cast<double>(q.size(1)) *
                      static_cast<double>(q.size(1)) * static_cast<double>(q.size(2)) *
                      static_cast<double>(q.size(3));
  CPLAB_CHECK(work <= kMaxAttentionWork,
              "attention: B·L²·H·d = {:.3g} is past {:.3g} (the reference is dense and "
              "single-threaded: minutes); use a shorter row or fewer heads",
              work, kMaxAttentionWork);
  check_finite(q, "q");
  check_finite(k, "k");
  check_finite(v, "v");
  check_finite(grad_out, "grad_out");
  const ShardPlan plan = attention_plan(make_spec(layout, cp, options), shape, q.size(0));
  const std::int64_t L = plan.rows.at(0).padded_len;
  CPLAB_CHECK(q.size(1) == L,
              "attention: q holds {} slots on dim 1; the row's padded stream under {} has L={} "
              "(place the caller's tokens at plan()['caller_pos'])",
              q.size(1), spec_brief(plan.spec), L);
  const reference::CpAttentionReference r =
      reference::cp_attention_reference(plan, q, k, v, grad_out, mask);
  py::dict out("out"_a = f32_tensor(r.out, q.shape()),
               "lse"_a = f32_tensor(r.lse, {r.rows, r.len, r.heads}),
               "mask"_a = sim::mask_text(mask), "padded_seq_len"_a = L);
  if (backward) {
    out["grad_q"] = f32_tensor(r.grad_q, q.shape());
    out["grad_k"] = f32_tensor(r.grad_k, k.shape());
    out["grad_v"] = f32_tensor(r.grad_v, k.shape());
  }
  return out;
}

// L² booleans: bounded so that one call stays well under a gigabyte.
constexpr std::int64_t kMaxMatrixLen = 16384;

py::object mask_matrix_fn(const std::string& layout, std::int64_t cp, const RowShape& shape,
                          const std::string& mask_text, const LayoutOptions& options) {
  const sim::AttentionMask mask = sim::parse_mask(mask_text);
  const ShardPlan plan = plan_rows(make_spec(layout, cp, options), shape, 1);
  const RowPlan& row = plan.rows.at(0);
  const std::int64_t L = row.padded_len;
  CPLAB_CHECK(L <= kMaxMatrixLen,
              "mask_matrix: the row's padded stream has L={} slots; at most {} (L² booleans)", L,
              kMaxMatrixLen);
  const std::vector<sim::TokenFacts> facts =
      sim::row_token_facts(row.doc_ids, row.real, row.caller_pos, mask);
  const sim::MaskRule rule = mask.rule();
  std::vector<bool> visible(static_cast<std::size_t>(L * L));
  for (std::int64_t g = 0; g < L; ++g) {
    for (std::int64_t h = 0; h < L; ++h)
      visible[static_cast<std::size_t>(g * L + h)] = sim::mask_visible(
          rule, facts[static_cast<std::size_t>(g)], facts[static_cast<std::size_t>(h)]);
  }
  return tensor_to_torch(Tensor::from_bools({L, L}, visible));
}

}  // namespace

void bind_attention(py::module_& m) {
  m.def(
      "attention",
      [](py::object q, py::object k, py::object v, py::object grad_out, const std::string& layout,
         std::int64_t cp, std::optional<std::int64_t> seq_len,
         std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, const std::string& mask,
         CPLAB_LAYOUT_PARAMS) {
        return attention_fn(q, k, v, grad_out, layout, cp,
                            RowShape{seq_len, doc_lens, doc_lens_padded}, mask,
                            CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("grad_out") = py::none(), py::kw_only(),
      py::arg("layout"), py::arg("cp"), py::arg("seq_len") = py::none(),
      py::arg("doc_lens") = py::none(), py::arg("doc_lens_padded") = py::none(),
      py::arg("mask") = "causal", CPLAB_LAYOUT_ARGS,
      R"(The unsharded multi-head attention every CP attention must reproduce (SPEC §13.3), under
`mask` (SPEC §13.5: "causal", "window:W", "chunked:K", "bidirectional:B-E,..."), computed in
double on the row's padded global stream.

q [B, L, H, d], k and v [B, L, H_kv, d] (H_kv dividing H: query head h reads KV head
h·H_kv/H), grad_out like q, float32, bfloat16 or float16, finite, B·L²·H·d at most 2^33; L is the padded length plan() gives for the row
(seq_len= for BSHD rows, doc_lens= for one packed row), each caller token at its caller_pos.
Query g sees key j when both are real tokens of one document and the mask allows their
positions; softmax scale 1/sqrt(d); a query that sees nothing outputs 0 with LSE -inf.
Returns a dict: out [B, L, H, d], lse [B, L, H] (natural log), mask (its canonical text),
padded_seq_len, and with grad_out also grad_q, grad_k, grad_v: all float32. A rank's part is
its slots: out[:, plan(...)['index'][r]].)");
  m.def(
      "mask_matrix",
      [](const std::string& layout, std::int64_t cp, std::optional<std::int64_t> seq_len,
         std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, const std::string& mask,
         CPLAB_LAYOUT_PARAMS) {
        return mask_matrix_fn(layout, cp, RowShape{seq_len, doc_lens, doc_lens_padded}, mask,
                              CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("layout"), py::arg("cp"), py::kw_only(), py::arg("seq_len") = py::none(),
      py::arg("doc_lens") = py::none(), py::arg("doc_lens_padded") = py::none(),
      py::arg("mask") = "causal", CPLAB_LAYOUT_ARGS,
      R"(The mask itself: bool [L, L] over the row's padded global stream, [g, j] True when query
slot g sees key slot j (the predicate attention() and every cplab attention applies). L is at
most 16384. A rank's rows are matrix[plan(...)['index'][r]].)");
}

}  // namespace cplab::python
