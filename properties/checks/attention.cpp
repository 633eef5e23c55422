// Property 7: attention equivalence (SPEC §7). With local queries and keys/values gathered from all
// ranks, the document-causal mask built from global positions and document ids gives every local
// query the unsharded computation's output, and Q/K/V gradients after the backward transport.
#include "reference/attention.hpp"

#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// fp32 softmax and matmuls against the reference's double: differences of a few ulps per term.
constexpr Tolerance kAttentionTolerance{.abs = 1e-5, .rel = 1e-4};

std::string check_microbatch(const Case& c, Implementation& impl, const ShardPlan& plan,
                             std::int64_t m) {
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len;
  const Shape shape{rows, len, c.dim};
  const auto stream = [&](std::uint64_t which) {
    return float_tensor(c.seed, 500 + 8 * static_cast<std::uint64_t>(m) + which, shape, 1.0f);
  };
  const Tensor q = stream(0), k = stream(1), v = stream(2), grad_out = stream(3);
  const reference::AttentionReference ref = reference::attention(plan, q, k, v, grad_out);
  const auto outputs = on_ranks(c.spec.cp, [&](Comm& comm, std::int64_t r) {
    const auto local = [&](const Tensor& t) { return reference::select_rank(plan, t, 1, r); };
    return impl.attention(comm, reference_layout(plan, r), local(q), local(k), local(v),
                          local(grad_out));
  });
  for (std::int64_t r = 0; r < c.spec.cp; ++r) {
    const AttentionOutput& out = outputs[static_cast<std::size_t>(r)];
    const std::pair<const char*, std::pair<const Tensor*, const Tensor*>> parts[] = {
        {"output", {&ref.out, &out.out}},
        {"dQ", {&ref.grad_q, &out.grad_q}},
        {"dK", {&ref.grad_k, &out.grad_k}},
        {"dV", {&ref.grad_v, &out.grad_v}},
    };
    for (const auto& [name, tensors] : parts) {
      TokenFrame frame{.what = fmt::format("attention {} on rank {}, microbatch {}", name, r, m),
                       .seq_dim = 1,
                       .plan = &plan};
      for (const RowPlan& row : plan.rows)
        frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
      const std::string bad =
          tensor_mismatch(c, frame, reference::select_rank(plan, *tensors.first, 1, r),
                          *tensors.second, kAttentionTolerance);
      if (!bad.empty()) return bad;
    }
  }
  return {};
}

std::string check_attention(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  notes.tags.push_back(
      fmt::format("{} {} {}", c.spec.layout, cp_class(c.spec.cp), c.packed() ? "packed" : "bshd"));
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const std::string bad =
        check_microbatch(c, impl, subject.microbatches[static_cast<std::size_t>(m)], m);
    if (!bad.empty()) return failure_prefix(c) + bad;
  }
  return {};
}

}  // namespace

extern const PropertyInfo attention_property;
const PropertyInfo attention_property{
    .name = "attention_matches_unsharded",
    .invariant =
        "local queries against gathered keys/values under the document-causal mask give the "
        "unsharded "
        "output rows and Q/K/V gradients (after the backward transport)",
    .check = check_attention,
    .coverage = {{kAnyCase, {}, Cross::cp}},
};

}  // namespace cplab::properties
