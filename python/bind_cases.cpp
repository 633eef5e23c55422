// Generated cases for cplab.testing: a case's one-line form (the driver's, `cplab replay`'s) made
// into its batch as torch tensors, the shards a user's sharder gave checked against it, and the
// inputs and expected results of a user's CP loss on it, and the facts and exact attention a user's
// CP attention is checked against.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>

#include "attention/schedule.hpp"
#include "check/loss_check.hpp"
#include "check/shard_check.hpp"
#include "core/attention_mask.hpp"
#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "layouts/layout_descriptor.hpp"
#include "properties/case.hpp"
#include "properties/case_data.hpp"
#include "python/bindings.hpp"
#include "python/check_result.hpp"
#include "python/tensor_bridge.hpp"
#include "reference/cp_attention_reference.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::python {
namespace py = pybind11;
using namespace pybind11::literals;
using properties::Case;

namespace {

// The logits of a case's loss: the stream the loss property draws them from (microbatch 0).
constexpr std::uint64_t kLogitsStream = 100;
constexpr float kLogitsScale = 4.0f;
// f32 losses and gradients of a user's loss against the reference's doubles.
constexpr double kLossTolerance = 1e-4;
constexpr double kGradTolerance = 1e-5;
constexpr std::int64_t kMostDepths = 16;  // check_loss(depths=D): MTP heads a model trains

class GeneratedCase {
 public:
  GeneratedCase(const std::string& line, bool passthrough)
      : GeneratedCase(properties::parse_case(line), passthrough) {}

  GeneratedCase(Case c, bool passthrough)
      : case_(std::move(c)), line_(properties::print_case(case_)) {
    properties::validate_case(case_);
    CPLAB_CHECK(case_.spec.microbatches == 1,
                "case '{}': cplab.testing hands a sharder one microbatch (mb=1)", line_);
    batch_ = properties::make_batch(case_);
    if (!passthrough) batch_.passthrough.clear();
    plan_ = plan_batch(case_.spec, batch_);
  }

  const std::string& line() const { return line_; }
  // The layout, rows and documents: what a sharder's author needs to picture the batch (the
  // case's other fields say how its data was drawn).
  std::string headline() const {
    std::string docs;
    for (const auto& row : case_.docs) {
      for (const properties::Document& d : row)
        docs += fmt::format("{}{}{}", docs.empty() ? "" : ",", d.real,
                            d.extra > 0 ? fmt::format("+{}", d.extra) : "");
    }
    return fmt::format("{} rows={} S={}{}", spec_brief(case_.spec), case_.rows, case_.seq_len,
                       docs.empty() ? "" : " docs=" + docs);
  }
  std::int64_t cp() const { return case_.spec.cp; }
  const std::string& layout() const { return case_.spec.layout; }
  std::string spec() const { return spec_brief(case_.spec); }
  bool packed() const { return case_.packed(); }
  std::int64_t documents() const {
    std::int64_t n = 0;
    for (const auto& row : case_.docs) n += static_cast<std::int64_t>(row.size());
    return n;
  }
  py::dict batch() const { return batch_to_dict(batch_); }

  // The same rows at C = `cp` (check_attention's unsharded run of the user's kernel): the case's
  // layout options where they hold at that C, else the layout's defaults.
  GeneratedCase at_cp(std::int64_t cp) const {
    Case c = case_;
    c.spec.cp = cp;
    properties::resolve_case_options(c);
    try {
      return GeneratedCase(c, false);
    } catch (const Error&) {
      c.spec = layouts::without_options(c.spec);
      c.automatic.clear();
      properties::resolve_case_options(c);
      return GeneratedCase(c, false);
    }
  }

  // What a CP attention is handed about each row beside its shards (check_attention's meta): per
  // row the global slot of every local slot, and per global slot its position in its document as
  // masks measure it (SPEC §13.5), its position id, its bidirectional span (0: none), its
  // document (0 = padding), whether it is a real token and the caller position it holds; the ranks'
  // local cu_seqlens where they hold whole documents and their varlen segments where they attend
  // through them.
  py::dict attention_layout() const {
    const sim::LayoutDescriptor& layout = sim::layout_descriptor(case_.spec.layout);
    const sim::AttentionMask mask = sim::parse_mask(mask_text());
    py::list rows;
    for (const RowPlan& row : plan_.rows) {
      const std::int64_t C = row.cp, local = row.local_len(), L = row.padded_len;
      std::vector<std::int64_t> index, real(row.real.begin(), row.real.end()),
          doc_ids(row.doc_ids.begin(), row.doc_ids.end()), mask_pos, spans;
      for (const sim::TokenFacts& f :
           sim::row_token_facts(row.doc_ids, row.real, row.caller_pos, mask)) {
        mask_pos.push_back(f.pos);
        spans.push_back(f.span);
      }
      for (const auto& slots : row.index) index.insert(index.end(), slots.begin(), slots.end());
      rows.append(py::dict(
          "index"_a = int64s_to_torch(index, {C, local}),
          "position_ids"_a = int64s_to_torch(row.positions, {L}),
          "positions"_a = int64s_to_torch(mask_pos, {L}), "spans"_a = int64s_to_torch(spans, {L}),
          "doc_ids"_a = int64s_to_torch(doc_ids, {L}),
          "real"_a = tensor_to_torch(Tensor::from<std::int64_t>({L}, real).to(DType::b8)),
          "caller_pos"_a = int64s_to_torch(row.caller_pos, {L}),
          "cu_seqlens"_a = local_cu_seqlens(row), "varlen"_a = varlen_segments(row)));
    }
    return py::dict("rows"_a = rows, "padded_len"_a = plan_.rows.at(0).padded_len,
                    "caller_len"_a = case_.seq_len,
                    // R of a layout with rings of Ulysses groups (usp's ring_group), else 1.
                    "ring_degree"_a = sim::layout_ring_degree(layout, case_.spec),
                    "mask"_a = sim::mask_text(mask));
  }

  // The exact unsharded attention of the case's rows under its mask (SPEC §13.3), in double:
  // q, grad_out [B, L, H, d], k, v [B, L, H_kv, d] on the padded stream, any floating dtype (read
  // exactly). Each result is the raw bytes of a float64 tensor of the named shape.
  py::dict attention_reference(py::handle q_obj, py::handle k_obj, py::handle v_obj,
                               py::handle grad_out_obj) const {
    const Tensor q = tensor_from_torch(q_obj, "q"), k = tensor_from_torch(k_obj, "k"),
                 v = tensor_from_torch(v_obj, "v"),
                 grad_out = tensor_from_torch(grad_out_obj, "grad_out");
    const reference::CpAttentionReference r =
        reference::cp_attention_reference(plan_, q, k, v, grad_out, sim::parse_mask(mask_text()));
    const auto bytes = [](const std::vector<double>& values) {
      return py::bytes(reinterpret_cast<const char*>(values.data()),
                       values.size() * sizeof(double));
    };
    return py::dict("out"_a = bytes(r.out), "lse"_a = bytes(r.lse), "dq"_a = bytes(r.grad_q),
                    "dk"_a = bytes(r.grad_k), "dv"_a = bytes(r.grad_v));
  }

  CheckResult check(py::handle shards_obj, std::optional<std::int64_t> pad_id,
                    std::optional<std::string> pad_policy) const {
    const auto seq = py::reinterpret_borrow<py::sequence>(shards_obj);
    std::vector<io::TensorFile> shards;
    for (std::size_t r = 0; r < seq.size(); ++r)
      shards.push_back(shard_from_dict(seq[r], fmt::format("rank {} shard", r)));
    check::Conventions conventions;
    conventions.pad_id = pad_id;
    if (pad_policy) conventions.policy = check::parse_pad_policy(*pad_policy);
    CheckResult result;
    result.verdict.outcome = check::check_shards(case_.spec, batch_, shards, conventions);
    return result;
  }

  // What a rank's loss is handed: its logits shard and its target labels (each local token's
  // next-token label fetched from wherever it lives, -100 where the token has none or does not
  // contribute), and N, the global count of contributing tokens; for check_logprobs also its
  // labels unshifted and every slot's next label (-1: none).
  py::dict loss_inputs() {
    prepare_loss();
    py::list logits, labels;
    for (std::int64_t r = 0; r < cp(); ++r) {
      logits.append(tensor_to_torch(reference::select_rank(plan_, padded_logits_.front(), 1, r)));
      labels.append(tensor_to_torch(rank_targets(r)));
    }
    // Each rank's labels as the layout shards them, unshifted (check_logprobs hands a pipeline
    // these: its shift across shard and document boundaries is what is checked).
    py::list unshifted, next_labels;
    const std::vector<std::vector<Batch>> shards = reference::shard_batch(plan_, batch_);
    for (const Batch& rank : shards.at(0))
      unshifted.append(tensor_to_torch(rank.at(keys::labels).to(DType::i64)));
    for (std::int64_t r = 0; r < cp(); ++r)
      next_labels.append(tensor_to_torch(rank_targets(r, true)));
    return py::dict("logits"_a = logits, "labels"_a = labels, "unshifted_labels"_a = unshifted,
                    "next_labels"_a = next_labels,
                    "num_label_tokens"_a = expected_->at(1).contributing_total,
                    "global_mean"_a = expected_->at(1).global_mean);
  }

  // What a rank's multi-token prediction loss is handed (SPEC §6.1, check_loss(depths=D)): its
  // logits of every depth [D, B, ℓ, V] (depth 1's first), its labels unshifted as the layout shards
  // them, its keep-mask, N_k of every depth, and what its `shift` needs: every rank's index map
  // [C, B, ℓ], the stream's document ids and caller positions [B, L] and whether rows are packed.
  py::dict mtp_inputs(std::int64_t depths) {
    prepare_depths(depths);
    const std::vector<std::vector<Batch>> shards = reference::shard_batch(plan_, batch_);
    const std::int64_t rows = static_cast<std::int64_t>(plan_.rows.size());
    const std::int64_t local = plan_.rows[0].local_len(), len = plan_.rows[0].padded_len;
    py::list logits, labels, valid, counts;
    for (std::int64_t r = 0; r < cp(); ++r) {
      Tensor stacked(DType::f32, {depths, rows, local, case_.vocab}, Uninitialized{});
      const std::int64_t each = rows * local * case_.vocab;
      for (std::int64_t k = 0; k < depths; ++k) {
        const Tensor mine = reference::select_rank(plan_, padded_logits_[k], 1, r);
        std::copy_n(mine.data<float>().begin(), each, stacked.data<float>().begin() + k * each);
      }
      logits.append(tensor_to_torch(std::move(stacked)));
      const Batch& rank = shards.at(0).at(static_cast<std::size_t>(r));
      labels.append(tensor_to_torch(rank.at(keys::labels).to(DType::i64)));
      valid.append(tensor_to_torch(rank.at(keys::valid).to(DType::b8)));
    }
    for (std::int64_t k = 1; k <= depths; ++k) counts.append(expected_->at(k).contributing_total);
    std::vector<std::int64_t> index, doc_ids, caller_pos;
    for (std::int64_t r = 0; r < cp(); ++r) {
      for (const RowPlan& row : plan_.rows)
        index.insert(index.end(), row.index[r].begin(), row.index[r].end());
    }
    for (const RowPlan& row : plan_.rows) {
      doc_ids.insert(doc_ids.end(), row.doc_ids.begin(), row.doc_ids.end());
      caller_pos.insert(caller_pos.end(), row.caller_pos.begin(), row.caller_pos.end());
    }
    return py::dict("logits"_a = logits, "labels"_a = labels, "valid"_a = valid,
                    "num_label_tokens"_a = counts,
                    "index"_a = int64s_to_torch(index, {cp(), rows, local}),
                    "doc_ids"_a = int64s_to_torch(doc_ids, {rows, len}),
                    "caller_pos"_a = int64s_to_torch(caller_pos, {rows, len}),
                    "packed"_a = plan_.rows[0].packed, "padded_len"_a = len);
  }

  // "" when every rank's MTP loss L₁ + λ/(D−1)·Σ L_k and its gradient on every depth's logits are
  // what SPEC §6.1 says, else one line naming the first rank, depth and slot that are not.
  std::string check_mtp(const std::vector<double>& losses, const std::vector<py::object>& grads,
                        std::int64_t depths, double scaling_factor) {
    prepare_depths(depths);
    check_counts(losses, grads);
    const check::LossExpectation& expected = *expected_;
    const reference::MtpCombination total = expected.global_total(scaling_factor);
    const double mean = mean_of(losses);
    for (std::int64_t r = 0; r < cp(); ++r) {
      const double want = expected.rank_total(r, scaling_factor);
      if (check::loss_matches(losses[r], want, kLossTolerance)) continue;
      std::string terms;
      for (std::int64_t k = 1; k <= depths; ++k) {
        terms += fmt::format("{}depth {}: {:.6g} (N_{} = {})", k > 1 ? ", " : "", k,
                             expected.at(k).rank_loss[r], k, expected.at(k).contributing_total);
      }
      return fmt::format(
          "rank {} MTP loss {:.6g} should be {:.6g} = L1 + {:.4g}/(D-1) x the deeper terms of "
          "its shares ({}); mean of rank losses {:.6g}, global MTP loss {:.6g}",
          r, losses[r], want, scaling_factor, terms, mean, total.total);
    }
    const Shape shape{depths, rows(), plan_.rows[0].local_len(), case_.vocab};
    for (std::int64_t r = 0; r < cp(); ++r) {
      if (grads[r].is_none()) continue;
      const Tensor got = tensor_from_torch(grads[r], fmt::format("rank {} grad", r)).to(DType::f32);
      if (got.shape() != shape) {
        return fmt::format("rank {} grad has shape {}; its logits are {}", r,
                           shape_str(got.shape()), shape_str(shape));
      }
      const std::span<const float> values = got.data<float>();
      const std::size_t each = values.size() / static_cast<std::size_t>(depths);
      for (std::int64_t k = 1; k <= depths; ++k) {
        const double weight = expected.depth_weight(k, scaling_factor);
        const check::GradDifference diff = expected.grad_difference(
            plan_, r, k, values.subspan(static_cast<std::size_t>(k - 1) * each, each), weight,
            kGradTolerance);
        if (!diff.first) continue;
        const check::GradMismatch& m = *diff.first;
        return fmt::format(
            "rank {} grad of depth {} at row {} local slot {} (global slot {}) logit {} is "
            "{:.6g}, should be {:.6g} (C x {:.4g} x d(depth-{} mean)/d logits)",
            r, k, m.row, m.slot, m.global_slot, m.logit, m.got, m.want, weight, k);
      }
    }
    return "";
  }

  // "" when every rank's loss and gradient are what SPEC §6 says, else one line naming the first
  // that is not.
  std::string check_loss(const std::vector<double>& losses, const std::vector<py::object>& grads) {
    prepare_loss();
    check_counts(losses, grads);
    const check::LossExpectation& expected = *expected_;
    const reference::LossReference& ref = expected.at(1);
    for (std::int64_t r = 0; r < cp(); ++r) {
      const double want = ref.rank_loss[r];
      if (check::loss_matches(losses[r], want, kLossTolerance)) continue;
      return fmt::format(
          "rank {} loss {:.6g} should be {:.6g} (sum of its {} contributing tokens' CE x C / N, "
          "N = {}); mean of rank losses {:.6g}, global shifted mean {:.6g}",
          r, losses[r], want, ref.rank_contributing[r], ref.contributing_total, mean_of(losses),
          ref.global_mean);
    }
    const Shape shape{rows(), plan_.rows[0].local_len(), case_.vocab};
    for (std::int64_t r = 0; r < cp(); ++r) {
      if (grads[r].is_none()) continue;
      const Tensor got = tensor_from_torch(grads[r], fmt::format("rank {} grad", r)).to(DType::f32);
      if (got.shape() != shape) {
        return fmt::format("rank {} grad has shape {}; its logits shard is {}", r,
                           shape_str(got.shape()), shape_str(shape));
      }
      const check::GradDifference diff =
          expected.grad_difference(plan_, r, 1, got.data<float>(), 1.0, kGradTolerance);
      if (!diff.first) continue;
      const check::GradMismatch& m = *diff.first;
      return fmt::format(
          "rank {} grad at row {} local slot {} (global slot {}) logit {} is {:.6g}, should be "
          "{:.6g} (C x d(global mean)/d logits)",
          r, m.row, m.slot, m.global_slot, m.logit, m.got, m.want);
    }
    return "";
  }

 private:
  std::string mask_text() const { return case_.mask.empty() ? "causal" : case_.mask; }

  std::int64_t rows() const { return static_cast<std::int64_t>(plan_.rows.size()); }

  void check_counts(const std::vector<double>& losses, const std::vector<py::object>& grads) const {
    CPLAB_CHECK(static_cast<std::int64_t>(losses.size()) == cp() &&
                    static_cast<std::int64_t>(grads.size()) == cp(),
                "{} losses and {} gradients for cp={}", losses.size(), grads.size(), cp());
  }

  double mean_of(const std::vector<double>& losses) const {
    double mean = 0.0;
    for (double l : losses) mean += l / static_cast<double>(cp());
    return mean;
  }

  void prepare_loss() { prepare_depths(1); }

  // Every depth's logits (depth 1's are the next-token check's; each depth draws its own stream)
  // and the expectation over exactly depths 1..`depths`.
  void prepare_depths(std::int64_t depths) {
    CPLAB_CHECK(depths >= 1 && depths <= kMostDepths, "depths must be in [1, {}], not {}",
                kMostDepths, depths);
    const std::int64_t rows = case_.rows, seq = case_.seq_len;
    for (auto k = static_cast<std::int64_t>(depth_logits_.size()); k < depths; ++k) {
      depth_logits_.push_back(
          properties::float_tensor(case_.seed, kLogitsStream + 1000 * static_cast<std::uint64_t>(k),
                                   {rows, seq, case_.vocab}, kLogitsScale));
      padded_logits_.push_back(reference::pad_to_global(
          plan_, TokenField{depth_logits_.back(), 1, PadRule::constant, 0.0}));
    }
    if (expected_ && expected_->depths() == depths) return;
    const std::vector<Tensor> logits(depth_logits_.begin(), depth_logits_.begin() + depths);
    expected_.emplace(plan_, logits, batch_.at(keys::labels).to(DType::i64),
                      batch_.at(keys::valid).to(DType::b8));
  }

  // Rank r's local targets: those that contribute to the loss (else IGNORE), or with `every`
  // each slot's target as SPEC §6 defines it (-1: none; IGNORE where the next label is one).
  Tensor rank_targets(std::int64_t r, bool every = false) const {
    const std::int64_t local = plan_.rows[0].local_len();
    const reference::LossReference& next = expected_->at(1);
    std::vector<std::int64_t> out;
    for (std::size_t b = 0; b < plan_.rows.size(); ++b) {
      for (std::int64_t k = 0; k < local; ++k) {
        const std::int64_t g = plan_.rows[b].index[r][k];
        out.push_back(every || next.contributes[b][g] ? next.target[b][g] : kIgnoreIndex);
      }
    }
    return Tensor::from<std::int64_t>({static_cast<std::int64_t>(plan_.rows.size()), local}, out);
  }

  Case case_;
  std::string line_;
  Batch batch_;
  ShardPlan plan_;
  // [d]: depth d+1's logits [B, S, V] in caller coordinates, and the same on the padded stream.
  std::vector<Tensor> depth_logits_, padded_logits_;
  std::optional<check::LossExpectation> expected_;
};

}  // namespace

void bind_cases(py::module_& m) {
  py::class_<GeneratedCase>(m, "_Case", "A generated case (cplab.testing's view of it).")
      .def(py::init<const std::string&, bool>(), py::arg("line"), py::arg("passthrough") = false)
      .def_property_readonly("line", &GeneratedCase::line)
      .def_property_readonly("headline", &GeneratedCase::headline)
      .def_property_readonly("cp", &GeneratedCase::cp)
      .def_property_readonly("layout", &GeneratedCase::layout)
      .def_property_readonly("spec", &GeneratedCase::spec)
      .def_property_readonly("packed", &GeneratedCase::packed)
      .def_property_readonly("documents", &GeneratedCase::documents)
      .def("batch", &GeneratedCase::batch)
      .def("check", &GeneratedCase::check, py::arg("shards"), py::arg("pad_id") = py::none(),
           py::arg("pad_policy") = py::none())
      .def("loss_inputs", &GeneratedCase::loss_inputs)
      .def("check_loss", &GeneratedCase::check_loss)
      .def("mtp_inputs", &GeneratedCase::mtp_inputs, py::arg("depths"))
      .def("check_mtp", &GeneratedCase::check_mtp, py::arg("losses"), py::arg("grads"),
           py::arg("depths"), py::arg("scaling_factor"))
      .def("at_cp", &GeneratedCase::at_cp, py::arg("cp"))
      .def("attention_layout", &GeneratedCase::attention_layout)
      .def("attention_reference", &GeneratedCase::attention_reference, py::arg("q"), py::arg("k"),
           py::arg("v"), py::arg("grad_out"));
}

}  // namespace cplab::python
