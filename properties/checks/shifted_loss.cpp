// Property 5: the shifted cross-boundary loss (SPEC §6). The mean of the rank losses is the global
// HF shifted CE mean, each rank's loss and gradient are its share (C × the global gradient on its
// tokens), and the contributing count N is the global one. Inputs are the reference's shards, and
// the layout the reference's, so that this checks the loss and nothing before it. The same check
// at depths 2-4 is the multi-token prediction property (SPEC §6.1, mtp_loss.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "properties/checks/checks.hpp"
#include "reference/loss.hpp"

namespace cplab::properties {

namespace {

constexpr double kLossRel = 1e-5, kLossAbs = 1e-6;

// "slot 13 (caller token 13): target 7" / "target none" / "target IGNORE"
std::string describe_slot(const reference::LossReference& ref, const RowPlan& row, std::size_t b,
                          std::int64_t g) {
  const std::int64_t target = ref.target[b][static_cast<std::size_t>(g)];
  const std::string t = target == -1             ? "none"
                        : target == kIgnoreIndex ? "IGNORE"
                                                 : fmt::format("{}", target);
  return fmt::format(
      "slot {} (caller token {}, document {}): target {}, {}", g,
      row.caller_pos[static_cast<std::size_t>(g)], row.doc_ids[static_cast<std::size_t>(g)], t,
      ref.contributes[b][static_cast<std::size_t>(g)] ? "contributes" : "does not contribute");
}

// The first local token that the implementation's gradient says contributes (a non-zero row)
// while the reference says it does not, or the reverse: where a count or a loss went wrong.
// Nothing to say when the implementation's scale is 0 (N = 0) or not finite.
std::string first_contribution_difference(const reference::LossReference& ref,
                                          const ShardPlan& plan,
                                          const std::vector<LossOutput>& outputs,
                                          std::int64_t vocab) {
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    const Tensor& grad = outputs[r].grad;
    if (outputs[r].contributing_total == 0 || !std::isfinite(outputs[r].loss)) return {};
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      const auto& index = plan.rows[b].index[r];
      for (std::size_t k = 0; k < index.size(); ++k) {
        bool nonzero = false;
        for (std::int64_t v = 0; v < vocab; ++v) {
          nonzero = nonzero ||
                    grad.get(static_cast<std::int64_t>((b * index.size() + k)) * vocab + v) != 0.0;
        }
        if (nonzero != (ref.contributes[b][static_cast<std::size_t>(index[k])] != 0)) {
          return fmt::format(
              "; first token counted differently: rank {} row {} local token {}, {}, but the "
              "implementation {} it",
              r, b, k, describe_slot(ref, plan.rows[b], b, index[k]),
              nonzero ? "counts" : "does not count");
        }
      }
    }
  }
  return {};
}

// The coverage a microbatch's loss gives: N = 0 or not, narrow keys, far targets at depth k.
void note_microbatch(const Case& c, const ShardPlan& plan, const reference::LossReference& ref,
                     std::int64_t m, std::int64_t depth, CheckNotes& notes) {
  if (depth > 1) {
    notes.options.push_back(ref.contributing_total == 0 ? "N_k=0" : "N_k>0");
    far_target_tag(plan, depth, notes);
  } else {
    notes.options.push_back(ref.contributing_total == 0 ? "N=0" : "N>0");
    if (c.key_dtypes == KeyDTypes::narrow) notes.options.push_back("i32 labels, u8 valid");
  }
  if (m == 0 && depth == 1) {
    notes.tags.push_back(fmt::format("{} {} {}", c.spec.layout, cp_class(c.spec.cp),
                                     ref.contributing_total == 0 ? "N=0" : "N>0"));
  }
}

// Each rank's counts and loss against the reference's, then their mean against the global mean
// (written to `mean`); `at` names the microbatch, `where` the first token counted differently.
template <typename Where>
std::string loss_mismatch(const reference::LossReference& ref,
                          const std::vector<LossOutput>& outputs, const std::string& at,
                          const Where& where, double& mean) {
  const auto cp = static_cast<std::int64_t>(outputs.size());
  mean = 0.0;
  for (std::int64_t r = 0; r < cp; ++r) {
    const LossOutput& out = outputs[static_cast<std::size_t>(r)];
    if (out.contributing_total != ref.contributing_total) {
      return fmt::format("{}: rank {} counts N={} contributing tokens, the global count is {}{}",
                         at, r, out.contributing_total, ref.contributing_total, where());
    }
    if (out.contributing_local != ref.rank_contributing[static_cast<std::size_t>(r)]) {
      return fmt::format("{}: rank {} counts {} local contributing tokens, it holds {}{}", at, r,
                         out.contributing_local, ref.rank_contributing[static_cast<std::size_t>(r)],
                         where());
    }
    if (!close(ref.rank_loss[static_cast<std::size_t>(r)], out.loss, kLossAbs, kLossRel)) {
      return fmt::format("{}: rank {} loss_r = {:.7g}, expected Σ CE · C / N = {:.7g}{}", at, r,
                         out.loss, ref.rank_loss[static_cast<std::size_t>(r)], where());
    }
    mean += out.loss / static_cast<double>(cp);
  }
  if (!close(ref.global_mean, mean, kLossAbs, kLossRel)) {
    return fmt::format(
        "{}: mean of the rank losses {:.7g} is not the global shifted CE mean {:.7g}", at, mean,
        ref.global_mean);
  }
  return {};
}

// The first local token of rank r whose gradient row is off, described by its slot ("" if none
// is off by more than a rounding).
std::string first_wrong_gradient_token(const Case& c, const ShardPlan& plan,
                                       const reference::LossReference& ref, std::int64_t r,
                                       const Tensor& want, const Tensor& got) {
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t local_len = plan.rows.front().padded_len / c.spec.cp;
  for (std::int64_t b = 0; b < rows; ++b) {
    for (std::int64_t k = 0; k < local_len; ++k) {
      for (std::int64_t v = 0; v < c.vocab; ++v) {
        const std::int64_t flat = (b * local_len + k) * c.vocab + v;
        if (got.get(flat) != want.get(flat) && !close(want.get(flat), got.get(flat), 1e-7, 1e-3)) {
          const std::int64_t g =
              plan.rows[static_cast<std::size_t>(b)]
                  .index[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)];
          return describe_slot(ref, plan.rows[static_cast<std::size_t>(b)],
                               static_cast<std::size_t>(b), g);
        }
      }
    }
  }
  return {};
}

// Gradients: C × the global gradient, on each rank's tokens; names the first wrong token's target.
std::string gradient_mismatch(const Case& c, const ShardPlan& plan,
                              const reference::LossReference& ref,
                              const std::vector<LossOutput>& outputs, const std::string& at) {
  const std::int64_t cp = c.spec.cp;
  Tensor scaled = ref.grad_global;
  for (float& x : scaled.data<float>()) x *= static_cast<float>(cp);
  for (std::int64_t r = 0; r < cp; ++r) {
    const Tensor want = reference::select_rank(plan, scaled, 1, r);
    const Tensor& got = outputs[static_cast<std::size_t>(r)].grad;
    TokenFrame frame{.what = fmt::format("{}: rank {} gradient of loss_r (C × global)", at, r),
                     .seq_dim = 1,
                     .plan = &plan};
    for (const RowPlan& row : plan.rows)
      frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
    const std::string bad = tensor_mismatch(c, frame, want, got, {.abs = 1e-7, .rel = 1e-4});
    if (!bad.empty()) {
      const std::string token = first_wrong_gradient_token(c, plan, ref, r, want, got);
      return token.empty() ? bad : bad + "; that token is " + token;
    }
  }
  return {};
}

std::string check_microbatch(const Case& c, Implementation& impl, const Subject& subject,
                             std::int64_t m, std::int64_t depth, CheckNotes& notes) {
  const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
  const Batch caller = subject.microbatch_batch(m);
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  const std::int64_t len = plan.rows.front().padded_len, cp = c.spec.cp, local_len = len / cp;
  // Depth 1 draws the logits it always drew; each depth k its own (an MTP head of its own).
  const std::uint64_t stream =
      100 + static_cast<std::uint64_t>(m) + 1000 * static_cast<std::uint64_t>(depth - 1);
  const Tensor logits = float_tensor(c.seed, stream, {rows, len, c.vocab}, 4.0f);
  const Tensor labels = reference::pad_to_global(plan, caller.tokens.at(keys::labels));
  const Tensor valid = reference::pad_to_global(plan, caller.tokens.at(keys::valid));
  const reference::LossReference ref = reference::shifted_loss(plan, logits, labels, valid, depth);
  note_microbatch(c, plan, ref, m, depth, notes);

  const auto outputs = on_ranks(cp, [&](Comm& comm, std::int64_t r) {
    const Tensor local_valid = reference::select_rank(plan, valid, 1, r);
    return impl.shifted_cp_loss(comm, reference_layout(plan, r),
                                reference::select_rank(plan, logits, 1, r),
                                reference::select_rank(plan, labels, 1, r),
                                local_valid.reshaped({rows * local_len}), depth);
  });
  const std::string at =
      depth == 1 ? fmt::format("microbatch {} (N={}, global mean {:.7g})", m,
                               ref.contributing_total, ref.global_mean)
                 : fmt::format("microbatch {} depth {} (N_{}={}, global mean {:.7g})", m, depth,
                               depth, ref.contributing_total, ref.global_mean);
  const auto where = [&] { return first_contribution_difference(ref, plan, outputs, c.vocab); };
  double mean = 0.0;
  if (std::string bad = loss_mismatch(ref, outputs, at, where, mean); !bad.empty()) return bad;
  if (std::string bad = gradient_mismatch(c, plan, ref, outputs, at); !bad.empty()) return bad;
  notes.notes.push_back(
      depth == 1 ? fmt::format("microbatch {}: N={} global mean {:.7g}, rank losses mean {:.7g}", m,
                               ref.contributing_total, ref.global_mean, mean)
                 : fmt::format("microbatch {} depth {}: N_{}={} global mean {:.7g}, rank losses "
                               "mean {:.7g}",
                               m, depth, depth, ref.contributing_total, ref.global_mean, mean));
  return {};
}

std::string check_shifted_loss(const Case& c, Implementation& impl, CheckNotes& notes) {
  return check_loss_depths(c, impl, notes, 1, 1);
}

}  // namespace

// A tag for a microbatch where some depth-k target lives on a rank two or more past the token's
// (chunks shorter than k): where an exchange with the next rank only goes wrong.
void far_target_tag(const ShardPlan& plan, std::int64_t depth, CheckNotes& notes) {
  constexpr const char* kTag = "target 2+ ranks ahead";
  if (std::find(notes.options.begin(), notes.options.end(), kTag) != notes.options.end()) return;
  for (const RowPlan& row : plan.rows) {
    std::vector<std::int64_t> owner(static_cast<std::size_t>(row.padded_len));
    for (std::size_t r = 0; r < row.index.size(); ++r) {
      for (std::int64_t g : row.index[r])
        owner[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(r);
    }
    for (std::int64_t g = 0; g < row.padded_len; ++g) {
      const std::int64_t slot = reference::target_slot(row, g, depth);
      if (slot >= 0 &&
          owner[static_cast<std::size_t>(slot)] - owner[static_cast<std::size_t>(g)] >= 2) {
        notes.options.push_back(kTag);
        return;
      }
    }
  }
}

std::string check_loss_depths(const Case& c, Implementation& impl, CheckNotes& notes,
                              std::int64_t first, std::int64_t last) {
  const Subject subject(c);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    for (std::int64_t depth = first; depth <= last; ++depth) {
      const std::string bad = check_microbatch(c, impl, subject, m, depth, notes);
      if (!bad.empty()) return failure_prefix(c) + bad;
    }
  }
  return {};
}

extern const PropertyInfo shifted_loss_property;
const PropertyInfo shifted_loss_property{
    .name = "rank_losses_average_to_global_shifted_loss",
    .invariant =
        "mean_r loss_r is the global HF shifted CE mean, N is the global contributing count, each "
        "loss_r "
        "and its gradient are the rank's share (C × the global gradient on its tokens)",
    .check = check_shifted_loss,
    .coverage = {{"N>0", {}, Cross::cp}, {"N=0"}, {"i32 labels, u8 valid"}},
};

}  // namespace cplab::properties
