// Property 6: the backward of every gather sums each rank's contribution back to the owner.
//  - gather_token_tensor: a loss replicated on all ranks gives C × the gradient on owned slots and
//    0 on padding (trim) — every rank's copy of the gradient reaches the owner.
//  - gather_tokens: [ℓ,...] per rank → [C·ℓ,...] in rank order; the backward gives rank r the sum
//    over ranks p of p's gradient slice r (key/value transport for attention).
#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

constexpr Tolerance kSumTolerance{.abs = 1e-6, .rel = 1e-6};

// One gradient a caller may hand back: trimmed or not, and on seq dim 1 or (planes before the
// rows, as mRoPE's [3,B,S]) on seq dim 2.
struct BackwardForm {
  bool trim;
  std::int64_t seq_dim;
  Tensor grad;
};

std::string token_tensor_backward_mismatch(const Case& c, Implementation& impl,
                                           const ShardPlan& plan, std::int64_t m,
                                           CheckNotes& notes) {
  const RowPlan& first = plan.rows.front();
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  std::vector<BackwardForm> forms;
  for (const bool trim : {true, false}) {
    const std::int64_t len = trim ? first.caller_len : first.padded_len;
    forms.push_back(
        {trim, 1,
         float_tensor(c.seed, 200 + static_cast<std::uint64_t>(m) * 2 + (trim ? 1u : 0u),
                      {rows, len, c.dim}, 1.0f)});
  }
  forms.push_back({true, 2,
                   float_tensor(c.seed, 250 + static_cast<std::uint64_t>(m),
                                {2, rows, first.caller_len, c.dim}, 1.0f)});
  notes.options.push_back("backward seq dim 2");
  // Every form in one world: the ranks run them in the same order.
  const auto got = on_ranks(c.spec.cp, [&](Comm& comm, std::int64_t r) {
    std::vector<Tensor> out;
    for (const BackwardForm& form : forms) {
      out.push_back(impl.gather_token_tensor_backward(comm, reference_layout(plan, r), form.grad,
                                                      form.seq_dim, form.trim));
    }
    return out;
  });
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const BackwardForm& form = forms[i];
    for (std::int64_t r = 0; r < c.spec.cp; ++r) {
      const Tensor want =
          reference::gather_token_tensor_backward(plan, form.grad, form.seq_dim, form.trim, r);
      TokenFrame frame{
          .what = fmt::format("gather_token_tensor backward (trim={}, seq dim {}) on rank {}, "
                              "microbatch {}",
                              form.trim, form.seq_dim, r, m),
          .seq_dim = form.seq_dim,
          .plan = &plan};
      for (const RowPlan& row : plan.rows)
        frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
      const std::string bad =
          tensor_mismatch(c, frame, want, got[static_cast<std::size_t>(r)][i], kSumTolerance);
      if (!bad.empty())
        return bad + fmt::format(" (expected C={} × the gradient at owned slots, 0 at padding)",
                                 c.spec.cp);
    }
  }
  return {};
}

std::string gather_tokens_mismatch(const Case& c, Implementation& impl, std::int64_t local_len) {
  const std::int64_t cp = c.spec.cp;
  const auto local_of = [&](std::int64_t r) {
    return float_tensor(c.seed, 300 + static_cast<std::uint64_t>(r), {local_len, c.dim}, 1.0f);
  };
  // Each rank's gradient of the gathered tensor differs (attention's dK, dV do).
  const auto grad_of = [&](std::int64_t r) {
    return float_tensor(c.seed, 400 + static_cast<std::uint64_t>(r), {cp * local_len, c.dim}, 1.0f);
  };
  const auto forward = on_ranks(
      cp, [&](Comm& comm, std::int64_t r) { return impl.gather_tokens(comm, local_of(r)); });
  const auto backward = on_ranks(cp, [&](Comm& comm, std::int64_t r) {
    return impl.gather_tokens_backward(comm, grad_of(r));
  });
  Tensor gathered(DType::f32, {cp * local_len, c.dim});
  for (std::int64_t p = 0; p < cp; ++p) {
    const Tensor part = local_of(p);
    for (std::int64_t i = 0; i < part.numel(); ++i) gathered.set(p * part.numel() + i, part.get(i));
  }
  for (std::int64_t r = 0; r < cp; ++r) {
    TokenFrame frame{.what = fmt::format("gather_tokens on rank {} (rank-order concatenation)", r),
                     .seq_dim = 0};
    std::string bad = tensor_mismatch(c, frame, gathered, forward[static_cast<std::size_t>(r)]);
    if (!bad.empty()) return bad;
    Tensor want(DType::f32, {local_len, c.dim});
    for (std::int64_t p = 0; p < cp; ++p) {
      const Tensor grad = grad_of(p);
      for (std::int64_t i = 0; i < want.numel(); ++i)
        want.set(i, want.get(i) + grad.get(r * want.numel() + i));
    }
    frame.what = fmt::format("gather_tokens backward on rank {} (Σ over ranks of slice {})", r, r);
    bad = tensor_mismatch(c, frame, want, backward[static_cast<std::size_t>(r)], kSumTolerance);
    if (!bad.empty()) return bad;
  }
  return {};
}

std::string check_gather_backward(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  notes.tags.push_back(fmt::format("{} {}", c.spec.layout, cp_class(c.spec.cp)));
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    const std::string bad = token_tensor_backward_mismatch(c, impl, plan, m, notes);
    if (!bad.empty()) return failure_prefix(c) + bad;
  }
  const std::string bad = gather_tokens_mismatch(c, impl, subject.plan.rows.front().local_len());
  return bad.empty() ? bad : failure_prefix(c) + bad;
}

}  // namespace

extern const PropertyInfo gather_backward_property;
const PropertyInfo gather_backward_property{
    .name = "gather_backward_sums_to_owner",
    .invariant =
        "gather_token_tensor's backward gives C × the gradient on owned slots and 0 on padding; "
        "gather_tokens concatenates in rank order and its backward sums every rank's slice to its "
        "owner",
    .check = check_gather_backward,
    .coverage = {{kAnyCase, {}, Cross::cp}, {"backward seq dim 2", {}, Cross::cp}},
};

}  // namespace cplab::properties
