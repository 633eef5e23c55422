// `cplab loss`: the shifted cross-boundary loss of one batch, computed by an implementation under
// test on C ranks and by the reference on the unsharded batch, side by side (SPEC §6), at depths
// 1..D for multi-token prediction (§6.1). Inputs are NumPy files, so a batch from a real training
// run can be checked as it is.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/loss_check.hpp"
#include "cli/command.hpp"
#include "cli/layout_source.hpp"
#include "cli/option_flags.hpp"
#include "core/error.hpp"
#include "io/npy.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/rank_losses.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {
namespace {

struct LossOptions {
  LayoutSpec spec;
  OptionFlags layout_options;
  std::string logits, labels, valid, doc_lens;
  std::string impl = "sim";
  std::int64_t depths = 0;  // 0: logits [B,S,V], the next-token loss; D: logits [D,B,S,V]
  double mtp_scaling_factor = 0.1;
  bool json = false;
};

// The inputs as the reference and the sharder take them: logits [B,S,V] f32 per depth (depth 1's
// first), labels [B,S] i64, valid [B,S] b8 (all true when no file is given).
struct LossFiles {
  std::vector<Tensor> logits;
  Tensor labels, valid;
};

LossFiles read_inputs(const LossOptions& options) {
  LossFiles in;
  Tensor logits = io::npy::read(options.logits);
  const bool mtp = options.depths > 0;
  CPLAB_CHECK((logits.dtype() == DType::f32 || logits.dtype() == DType::f16) &&
                  logits.dim() == (mtp ? 4 : 3) && (!mtp || logits.size(0) == options.depths),
              "{}: logits must be float32 {}, got {}", options.logits,
              mtp ? fmt::format("[D={}, B, S, V] (--depths {})", options.depths, options.depths)
                  : std::string("[B, S, V]"),
              tensor_brief(logits));
  logits = logits.to(DType::f32);
  // A NaN or Inf logit has no finite loss to agree with: refused, never compared.
  const auto values = logits.data<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    CPLAB_CHECK(std::isfinite(values[i]),
                "{}: logit {} at flat index {} is not finite; cplab compares finite losses only",
                options.logits, values[i], i);
  }
  if (mtp) {
    const Shape one{logits.size(1), logits.size(2), logits.size(3)};
    const std::int64_t each = logits.size(1) * logits.size(2) * logits.size(3);
    for (std::int64_t k = 0; k < options.depths; ++k) {
      Tensor depth(DType::f32, one, Uninitialized{});
      std::copy_n(values.begin() + k * each, each, depth.data<float>().begin());
      in.logits.push_back(std::move(depth));
    }
  } else {
    in.logits.push_back(std::move(logits));
  }
  const Tensor& first = in.logits.front();
  const Shape rows_by_seq{first.size(0), first.size(1)};
  const Tensor labels = io::npy::read(options.labels);
  CPLAB_CHECK((labels.dtype() == DType::i64 || labels.dtype() == DType::i32) &&
                  labels.shape() == rows_by_seq,
              "{}: labels must be int64 or int32 {} to match the logits {}, got {}", options.labels,
              shape_str(rows_by_seq), shape_str(first.shape()), tensor_brief(labels));
  in.labels = labels.to(DType::i64);
  if (options.valid.empty()) {
    in.valid = Tensor(DType::b8, rows_by_seq);
    for (std::int64_t i = 0; i < in.valid.numel(); ++i) in.valid.set(i, 1.0);
  } else {
    const Tensor valid = io::npy::read(options.valid);
    CPLAB_CHECK(
        (valid.dtype() == DType::b8 || valid.dtype() == DType::u8) && valid.shape() == rows_by_seq,
        "{}: valid must be bool or uint8 {} to match the logits {}, got {}", options.valid,
        shape_str(rows_by_seq), shape_str(first.shape()), tensor_brief(valid));
    in.valid = valid.to(DType::b8);
  }
  return in;
}

Batch batch_of(const LossOptions& options, const LossFiles& in) {
  const std::int64_t rows = in.labels.size(0), seq = in.labels.size(1);
  Batch batch;
  batch.add(keys::input_ids,
            Tensor(DType::i64, {rows, seq}));  // the loss needs no ids; a batch needs a primary
  batch.add(keys::labels, in.labels);
  batch.add(keys::loss_mask, in.valid);
  if (!options.doc_lens.empty()) {
    CPLAB_CHECK(rows == 1, "--doc-lens describes one packed row; the logits have B={} rows", rows);
    batch.seq_lens = {parse_doc_lens(options.doc_lens)};
  }
  return batch;
}

struct RankResult {
  double loss = 0.0;
  std::int64_t contributing = 0;
  double grad_error = 0.0;
};

// One depth's loss on C ranks next to the reference's.
struct DepthResult {
  std::int64_t depth = 1;
  double global_mean = 0.0;             // the reference's
  std::int64_t contributing_total = 0;  // the reference's N_k
  std::vector<RankResult> ranks;
  double mean = 0.0;        // mean of the rank losses
  double grad_error = 0.0;  // largest |∂loss_r/∂z - C × global gradient|
  bool finite() const {
    bool all = std::isfinite(mean) && std::isfinite(global_mean) && std::isfinite(grad_error);
    for (const RankResult& r : ranks) all = all && std::isfinite(r.loss);
    return all;
  }
};

DepthResult compare_depth(const LossOptions& options, const ShardPlan& plan, const Batch& batch,
                          Implementation& impl, const LossFiles& in,
                          const check::LossExpectation& expected, std::int64_t depth) {
  DepthResult result;
  result.depth = depth;
  result.global_mean = expected.at(depth).global_mean;
  result.contributing_total = expected.at(depth).contributing_total;
  const std::vector<LossOutput> outputs = properties::run_rank_losses(
      impl, options.spec, batch, in.logits[static_cast<std::size_t>(depth - 1)], depth);
  for (std::size_t r = 0; r < outputs.size(); ++r) {
    const LossOutput& out = outputs[r];
    CPLAB_CHECK(out.grad.dtype() == DType::f32, "{}: rank {}'s gradient {} is not f32",
                options.impl, r, tensor_brief(out.grad));
    // ∂loss_r/∂logits must be C × the global gradient on the tokens the reference gives this rank.
    const check::GradDifference grad =
        expected.grad_difference(plan, static_cast<std::int64_t>(r), depth, out.grad.data<float>(),
                                 1.0, std::numeric_limits<double>::infinity());
    result.ranks.push_back({out.loss, out.contributing_local, grad.max_abs_error});
    result.mean += out.loss / static_cast<double>(outputs.size());
    result.grad_error = std::max(result.grad_error, grad.max_abs_error);
  }
  return result;
}

nlohmann::ordered_json depth_json(const DepthResult& d) {
  return {{"depth", d.depth},
          {"global_mean", d.global_mean},
          {"contributing_total", d.contributing_total},
          {"mean_of_rank_losses", d.mean},
          {"max_abs_err", std::abs(d.mean - d.global_mean)},
          {"grad_max_abs_err", d.grad_error}};
}

// The MTP combination L₁ + λ/(D−1)·Σ L_k (SPEC §6.1) of the global means and of the rank losses.
nlohmann::ordered_json mtp_json(const check::LossExpectation& expected,
                                const std::vector<DepthResult>& depths, double scaling_factor) {
  std::vector<double> ranks;
  for (const DepthResult& d : depths) ranks.push_back(d.mean);
  const reference::MtpCombination want = expected.global_total(scaling_factor);
  const reference::MtpCombination got = reference::combine_depths(ranks, scaling_factor);
  return {{"scaling_factor", scaling_factor},
          {"depth_weight", want.weight},
          {"global_total", want.total},
          {"mean_of_rank_totals", got.total},
          {"max_abs_err", std::abs(got.total - want.total)}};
}

int run_loss(LossOptions options) {
  CPLAB_CHECK(std::isfinite(options.mtp_scaling_factor),
              "--mtp-scaling-factor must be finite, not {}", options.mtp_scaling_factor);
  validate_spec(apply_option_flags(options.spec, options.layout_options, 0));
  const LossFiles in = read_inputs(options);
  const Batch batch = batch_of(options, in);
  options.spec = apply_option_flags(options.spec, options.layout_options, batch.seq_len());
  validate_spec(options.spec);
  const ShardPlan plan = reference::plan(options.spec, batch);
  // Any registered implementation, mutants included (`cplab loss --impl factor_c_forgotten` shows
  // what that bug does to a real batch).
  const properties::ImplementationInfo& info = properties::find_implementation(options.impl);
  const std::string unavailable = properties::unavailable_reason(info);
  CPLAB_CHECK(unavailable.empty(), "--impl {} cannot run here: {}", options.impl, unavailable);
  const std::unique_ptr<Implementation> impl = info.make();
  // Depth by depth: one reference gradient [B, L, V] at a time beside the logits.
  check::LossExpectation expected;
  std::vector<DepthResult> depths;
  for (const Tensor& logits : in.logits) {
    expected.add_depth(plan, logits, in.labels, in.valid);
    depths.push_back(compare_depth(options, plan, batch, *impl, in, expected, expected.depths()));
    expected.release_gradient(expected.depths());
  }
  for (const DepthResult& d : depths) {
    if (!d.finite()) {
      // JSON has no NaN: the numbers would print as null, which reads as nothing to compare.
      const std::string which =
          options.depths > 0 ? fmt::format("the depth-{} loss", d.depth) : "the loss";
      std::fprintf(stderr,
                   "cplab: check failed: %s is not finite (global mean %g, mean of rank losses "
                   "%g, largest gradient difference %g)\n",
                   which.c_str(), d.global_mean, d.mean, d.grad_error);
      return kCheckFailed;
    }
  }
  const DepthResult& first = depths.front();
  const std::int64_t cp = options.spec.cp;
  if (options.json) {
    nlohmann::ordered_json out;
    out["global_mean"] = first.global_mean;
    out["contributing_total"] = first.contributing_total;
    out["mean_of_rank_losses"] = first.mean;
    out["ranks"] = nlohmann::ordered_json::array();
    for (std::int64_t r = 0; r < cp; ++r) {
      out["ranks"].push_back({{"rank", r},
                              {"loss", first.ranks[r].loss},
                              {"contributing", first.ranks[r].contributing}});
    }
    out["max_abs_err"] = std::abs(first.mean - first.global_mean);
    out["grad_max_abs_err"] = first.grad_error;
    if (options.depths > 0) {
      out["depths"] = nlohmann::ordered_json::array();
      for (const DepthResult& d : depths) out["depths"].push_back(depth_json(d));
      out["mtp"] = mtp_json(expected, depths, options.mtp_scaling_factor);
    }
    fmt::print("{}\n", out.dump());
    return 0;
  }
  fmt::print(
      "{} impl={}: global mean {:.7g} over N={} tokens; mean of rank losses {:.7g} (|diff| "
      "{:.3g}); largest "
      "gradient difference {:.3g}\n",
      spec_brief(options.spec), options.impl, first.global_mean, first.contributing_total,
      first.mean, std::abs(first.mean - first.global_mean), first.grad_error);
  fmt::print("{:>4}  {:>14}  {:>12}\n", "rank", "loss", "contributing");
  for (std::int64_t r = 0; r < cp; ++r)
    fmt::print("{:>4}  {:>14.7g}  {:>12}\n", r, first.ranks[r].loss, first.ranks[r].contributing);
  if (options.depths > 0) {
    fmt::print("\n{:>5}  {:>14}  {:>8}  {:>14}  {:>10}  {:>10}\n", "depth", "global mean", "N_k",
               "rank mean", "|diff|", "grad diff");
    for (const DepthResult& d : depths) {
      fmt::print("{:>5}  {:>14.7g}  {:>8}  {:>14.7g}  {:>10.3g}  {:>10.3g}\n", d.depth,
                 d.global_mean, d.contributing_total, d.mean, std::abs(d.mean - d.global_mean),
                 d.grad_error);
    }
    const nlohmann::ordered_json mtp = mtp_json(expected, depths, options.mtp_scaling_factor);
    fmt::print("MTP total L1 + {:.4g}/(D-1) sum L_k: global {:.7g}, from the rank losses {:.7g}\n",
               options.mtp_scaling_factor, mtp["global_total"].get<double>(),
               mtp["mean_of_rank_totals"].get<double>());
  }
  return 0;
}

}  // namespace

Command add_loss_command(CLI::App& app) {
  auto options = std::make_shared<LossOptions>();
  CLI::App* sub = app.add_subcommand(
      "loss",
      "Shifted cross-boundary loss of a batch (.npy files) on C ranks, next to the reference's");
  sub->add_option("--layout", options->spec.layout,
                  fmt::format("Layout: {}", fmt::join(reference::layout_names(), ", ")))
      ->required();
  sub->add_option("--cp", options->spec.cp, "CP size C")->required();
  sub->add_option("--logits", options->logits,
                  "Logits [B,S,V] float32 .npy ([D,B,S,V] with --depths D, depth 1's first)")
      ->required();
  sub->add_option("--labels", options->labels,
                  "Labels [B,S] int64/int32 .npy, unshifted, -100 = ignore")
      ->required();
  sub->add_option("--valid", options->valid, "Valid mask [B,S] bool/uint8 .npy (default all true)");
  sub->add_option("--doc-lens", options->doc_lens,
                  "One packed row (B=1): its documents' real lengths, e.g. 5,3,8");
  sub->add_option("--impl", options->impl, "Implementation under test")->capture_default_str();
  sub->add_option("--depths", options->depths,
                  "Multi-token prediction: D depths, logits[k-1] predicting the label k ahead "
                  "(SPEC 6.1)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{16}));
  sub->add_option("--mtp-scaling-factor", options->mtp_scaling_factor,
                  "lambda of L1 + lambda/(D-1) sum_k L_k (with --depths)")
      ->capture_default_str()
      ->needs("--depths");
  sub->add_flag("--json", options->json, "Print one JSON object");
  add_option_flags(sub, options->layout_options);
  return {sub, [options] { return run_loss(*options); }};
}

}  // namespace cplab::cli
