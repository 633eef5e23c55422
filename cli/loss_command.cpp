// `cplab loss`: the shifted cross-boundary loss of one batch, computed by an implementation under
// test on C ranks and by the reference on the unsharded batch, side by side (SPEC §6). Inputs are
// NumPy files, so a batch from a real training run can be checked as it is.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/layout_source.hpp"
#include "cli/option_flags.hpp"
#include "comm/thread_comm.hpp"
#include "core/error.hpp"
#include "io/npy.hpp"
#include "properties/implementation_registry.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {
namespace {

struct LossOptions {
  LayoutSpec spec;
  OptionFlags layout_options;
  std::string logits, labels, valid, doc_lens;
  std::string impl = "sim";
  bool json = false;
};

// The inputs as the reference and the sharder take them: logits [B,S,V] f32, labels [B,S] i64,
// valid [B,S] b8 (all true when no file is given).
struct LossFiles {
  Tensor logits, labels, valid;
};

LossFiles read_inputs(const LossOptions& options) {
  LossFiles in;
  in.logits = io::npy::read(options.logits);
  CPLAB_CHECK(
      in.logits.dim() == 3 && (in.logits.dtype() == DType::f32 || in.logits.dtype() == DType::f16),
      "{}: logits must be float32 [B, S, V], got {}", options.logits, tensor_brief(in.logits));
  in.logits = in.logits.to(DType::f32);
  // A NaN or Inf logit has no finite loss to agree with: refused, never compared.
  const auto values = in.logits.data<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    CPLAB_CHECK(std::isfinite(values[i]),
                "{}: logit {} at flat index {} is not finite; cplab compares finite losses only",
                options.logits, values[i], i);
  }
  const Shape rows_by_seq{in.logits.size(0), in.logits.size(1)};
  const Tensor labels = io::npy::read(options.labels);
  CPLAB_CHECK((labels.dtype() == DType::i64 || labels.dtype() == DType::i32) &&
                  labels.shape() == rows_by_seq,
              "{}: labels must be int64 or int32 {} to match the logits {}, got {}", options.labels,
              shape_str(rows_by_seq), shape_str(in.logits.shape()), tensor_brief(labels));
  in.labels = labels.to(DType::i64);
  if (options.valid.empty()) {
    in.valid = Tensor(DType::b8, rows_by_seq);
    for (std::int64_t i = 0; i < in.valid.numel(); ++i) in.valid.set(i, 1.0);
  } else {
    const Tensor valid = io::npy::read(options.valid);
    CPLAB_CHECK(
        (valid.dtype() == DType::b8 || valid.dtype() == DType::u8) && valid.shape() == rows_by_seq,
        "{}: valid must be bool or uint8 {} to match the logits {}, got {}", options.valid,
        shape_str(rows_by_seq), shape_str(in.logits.shape()), tensor_brief(valid));
    in.valid = valid.to(DType::b8);
  }
  return in;
}

Batch batch_of(const LossOptions& options, const LossFiles& in) {
  const std::int64_t rows = in.logits.size(0), seq = in.logits.size(1);
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

int run_loss(LossOptions options) {
  validate_spec(apply_option_flags(options.spec, options.layout_options, 0));
  const LossFiles in = read_inputs(options);
  const Batch batch = batch_of(options, in);
  options.spec = apply_option_flags(options.spec, options.layout_options, batch.seq_len());
  validate_spec(options.spec);
  const ShardPlan plan = reference::plan(options.spec, batch);
  const reference::LossReference expected =
      reference::shifted_loss_caller(plan, in.logits, in.labels, in.valid);
  // Any registered implementation, mutants included (`cplab loss --impl factor_c_forgotten` shows
  // what that bug does to a real batch).
  const properties::ImplementationInfo& info = properties::find_implementation(options.impl);
  const std::string unavailable = properties::unavailable_reason(info);
  CPLAB_CHECK(unavailable.empty(), "--impl {} cannot run here: {}", options.impl, unavailable);
  const std::unique_ptr<Implementation> impl = info.make();
  const std::int64_t cp = options.spec.cp, vocab = in.logits.size(2);
  std::vector<RankResult> results(static_cast<std::size_t>(cp));
  sim::World world(static_cast<int>(cp));
  world.run([&](sim::RankContext& ctx) {
    const RankShard shard = impl->shard(ctx.comm, options.spec, batch).at(0);
    const Tensor logits = impl->shard_token_tensor(ctx.comm, shard.layout, in.logits, 1, 0.0);
    const LossOutput out =
        impl->shifted_cp_loss(ctx.comm, shard.layout, logits, shard.local.at(keys::labels),
                              shard.local.at(keys::loss_mask));
    RankResult& mine = results[ctx.rank];
    mine.loss = out.loss;
    mine.contributing = out.contributing_local;
    // ∂loss_r/∂logits must be C × the global gradient on the tokens the reference gives this rank.
    const auto grad = out.grad.data<float>();
    const auto global = expected.grad_global.data<float>();
    const std::int64_t len = plan.rows[0].padded_len, local_len = len / cp;
    CPLAB_CHECK(out.grad.numel() == static_cast<std::int64_t>(plan.rows.size()) * local_len * vocab,
                "{}: gradient {} is not [B, ℓ, V]", options.impl, tensor_brief(out.grad));
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      for (std::int64_t k = 0; k < local_len; ++k) {
        const std::int64_t g = plan.rows[b].index[ctx.rank][k];
        for (std::int64_t v = 0; v < vocab; ++v) {
          const double want = static_cast<double>(cp) *
                              global[(static_cast<std::int64_t>(b) * len + g) * vocab + v];
          const double got = grad[(static_cast<std::int64_t>(b) * local_len + k) * vocab + v];
          // NaN-aware: a non-finite gradient is an infinite error, never a match.
          const double error =
              std::isfinite(got) ? std::abs(got - want) : std::numeric_limits<double>::infinity();
          mine.grad_error = std::max(mine.grad_error, error);
        }
      }
    }
  });
  double mean = 0.0, grad_error = 0.0;
  for (const RankResult& r : results) {
    mean += r.loss / static_cast<double>(cp);
    grad_error = std::max(grad_error, r.grad_error);
  }
  bool finite = std::isfinite(mean) && std::isfinite(expected.global_mean);
  for (const RankResult& r : results) finite = finite && std::isfinite(r.loss);
  if (!finite || !std::isfinite(grad_error)) {
    // JSON has no NaN: the numbers would print as null, which reads as nothing to compare.
    std::fprintf(stderr,
                 "cplab: check failed: the loss is not finite (global mean %g, mean of rank losses "
                 "%g, largest gradient difference %g)\n",
                 expected.global_mean, mean, grad_error);
    return kCheckFailed;
  }
  if (options.json) {
    nlohmann::ordered_json out;
    out["global_mean"] = expected.global_mean;
    out["contributing_total"] = expected.contributing_total;
    out["mean_of_rank_losses"] = mean;
    out["ranks"] = nlohmann::ordered_json::array();
    for (std::int64_t r = 0; r < cp; ++r) {
      out["ranks"].push_back(
          {{"rank", r}, {"loss", results[r].loss}, {"contributing", results[r].contributing}});
    }
    out["max_abs_err"] = std::abs(mean - expected.global_mean);
    out["grad_max_abs_err"] = grad_error;
    fmt::print("{}\n", out.dump());
    return 0;
  }
  fmt::print(
      "{} impl={}: global mean {:.7g} over N={} tokens; mean of rank losses {:.7g} (|diff| "
      "{:.3g}); largest "
      "gradient difference {:.3g}\n",
      spec_brief(options.spec), options.impl, expected.global_mean, expected.contributing_total,
      mean, std::abs(mean - expected.global_mean), grad_error);
  fmt::print("{:>4}  {:>14}  {:>12}\n", "rank", "loss", "contributing");
  for (std::int64_t r = 0; r < cp; ++r)
    fmt::print("{:>4}  {:>14.7g}  {:>12}\n", r, results[r].loss, results[r].contributing);
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
  sub->add_option("--logits", options->logits, "Logits [B,S,V] float32 .npy")->required();
  sub->add_option("--labels", options->labels,
                  "Labels [B,S] int64/int32 .npy, unshifted, -100 = ignore")
      ->required();
  sub->add_option("--valid", options->valid, "Valid mask [B,S] bool/uint8 .npy (default all true)");
  sub->add_option("--doc-lens", options->doc_lens,
                  "One packed row (B=1): its documents' real lengths, e.g. 5,3,8");
  sub->add_option("--impl", options->impl, "Implementation under test")->capture_default_str();
  sub->add_flag("--json", options->json, "Print one JSON object");
  add_option_flags(sub, options->layout_options);
  return {sub, [options] { return run_loss(*options); }};
}

}  // namespace cplab::cli
