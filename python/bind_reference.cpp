// cplab.layouts, cplab.plan, cplab.shard, cplab.gather, cplab.shifted_loss: the reference itself,
// on torch tensors.
#include <pybind11/stl.h>

#include <algorithm>

#include "attention/schedule.hpp"
#include "core/attention_algo.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "layouts/layout_descriptor.hpp"
#include "python/bindings.hpp"
#include "python/layout_options.hpp"
#include "python/tensor_bridge.hpp"
#include "reference/loss.hpp"
#include "reference/plan.hpp"
#include "reference/token_shift.hpp"
#include "reference/verbs.hpp"
#include "reference/work.hpp"

namespace cplab::python {
namespace py = pybind11;
using namespace pybind11::literals;

py::object local_cu_seqlens(const RowPlan& row) {
  if (row.local_cu_seqlens.empty()) return py::none();
  py::list per_rank;
  for (const auto& table : row.local_cu_seqlens)
    per_rank.append(int64s_to_torch(table, {static_cast<std::int64_t>(table.size())}));
  return per_rank;
}

py::object varlen_segments(const RowPlan& row) {
  if (row.varlen.empty()) return py::none();
  py::list per_rank;
  for (const VarlenSegments& s : row.varlen) {
    per_rank.append(py::dict(
        "cu_seqlens_q"_a =
            int64s_to_torch(s.cu_seqlens_q, {static_cast<std::int64_t>(s.cu_seqlens_q.size())}),
        "cu_seqlens_k"_a =
            int64s_to_torch(s.cu_seqlens_k, {static_cast<std::int64_t>(s.cu_seqlens_k.size())}),
        "k_slice"_a = py::make_tuple(s.k_begin, s.k_end)));
  }
  return per_rank;
}

namespace {

// What every layout declares: the rows it takes and whether it is CP off (its descriptor), and its
// own options (its declaration). Read off the registries, so a new layout needs no entry here.
py::list describe_layouts() {
  py::list out;
  for (const reference::LayoutInfo& info : reference::layouts()) {
    const sim::LayoutDescriptor& descriptor = sim::layout_descriptor(info.name);
    py::list rows;
    if (descriptor.bshd_rows) rows.append("bshd");
    rows.append("packed");  // every layout takes packed rows
    py::list options;
    for (const layouts::LayoutOption* o : layouts::options_of(info.name)) options.append(o->name);
    py::list algos;
    for (sim::AttentionAlgo algo : sim::all_algos()) {
      if (sim::layout_refusal(descriptor, algo).empty()) algos.append(sim::algo_name(algo));
    }
    out.append(py::dict("name"_a = info.name, "rows"_a = rows, "cp_off"_a = descriptor.cp_off,
                        "options"_a = options, "algos"_a = algos));
  }
  return out;
}

py::dict plan_dict(const ShardPlan& plan) {
  const RowPlan& row = plan.rows.at(0);
  const std::int64_t C = row.cp, local = row.local_len();
  std::vector<std::int64_t> index, positions, doc_ids, real;
  for (std::int64_t r = 0; r < C; ++r) {
    for (std::int64_t g : row.index[r]) {
      index.push_back(g);
      positions.push_back(row.positions[g]);
      doc_ids.push_back(row.doc_ids[g]);
      real.push_back(row.real[g]);
    }
  }
  const std::int64_t L = row.padded_len;
  return py::dict(
      "varlen"_a = varlen_segments(row), "layout"_a = plan.spec.layout, "cp"_a = C,
      "spec"_a = spec_brief(plan.spec), "seq_len"_a = row.caller_len, "padded_seq_len"_a = L,
      "packed"_a = row.packed, "index"_a = int64s_to_torch(index, {C, local}),
      "positions"_a = int64s_to_torch(positions, {C, local}),
      "doc_ids"_a = int64s_to_torch(doc_ids, {C, local}),
      "real"_a = tensor_to_torch(Tensor::from<std::int64_t>({C, local}, real).to(DType::b8)),
      "cu_seqlens"_a = local_cu_seqlens(row),
      "valid_tokens"_a = int64s_to_torch(row.valid_tokens, {C}),
      "global_positions"_a = int64s_to_torch(row.positions, {L}),
      "caller_pos"_a = int64s_to_torch(row.caller_pos, {L}),
      "cu_seqlens_padded"_a = int64s_to_torch(
          row.cu_seqlens_padded, {static_cast<std::int64_t>(row.cu_seqlens_padded.size())}));
}

py::dict plan_fn(const std::string& layout, std::int64_t cp, std::optional<std::int64_t> seq_len,
                 std::optional<std::vector<std::int64_t>> doc_lens,
                 std::optional<std::vector<std::int64_t>> doc_lens_padded,
                 const std::string& mask_text, const LayoutOptions& options) {
  const sim::AttentionMask mask = sim::parse_mask(mask_text);
  const LayoutSpec spec = make_spec(layout, cp, options);
  const ShardPlan plan = plan_rows(spec, RowShape{seq_len, doc_lens, doc_lens_padded}, 1);
  py::dict out = plan_dict(plan);
  const std::vector<std::int64_t> work = reference::causal_work(plan.rows.at(0), mask);
  out["mask"] = sim::mask_text(mask);
  out["work"] = int64s_to_torch(work, {static_cast<std::int64_t>(work.size())});
  out["imbalance"] = reference::imbalance(work);
  return out;
}

py::list shard_fn(py::handle batch_obj, const std::string& layout, std::int64_t cp,
                  const LayoutOptions& options) {
  const Batch batch = batch_from_dict(batch_obj, "batch");
  const ShardPlan plan = plan_batch(make_spec(layout, cp, options), batch);
  std::vector<std::vector<Batch>> sharded = reference::shard_batch(plan, batch);
  py::list out;
  for (std::int64_t r = 0; r < cp; ++r) {
    py::dict rank = batch_to_dict(std::move(sharded[0][r]));
    const RowPlan& row = plan.rows.at(0);
    if (!row.local_cu_seqlens.empty()) {
      const auto& table = row.local_cu_seqlens[r];
      rank["cu_seqlens"] = int64s_to_torch(table, {static_cast<std::int64_t>(table.size())});
    }
    out.append(rank);
  }
  return out;
}

py::object gather_fn(const std::vector<py::object>& shard_objs, const std::string& layout,
                     std::int64_t cp, std::optional<std::int64_t> seq_len,
                     std::optional<std::vector<std::int64_t>> doc_lens,
                     std::optional<std::vector<std::int64_t>> doc_lens_padded, std::int64_t seq_dim,
                     bool trim, const LayoutOptions& options) {
  CPLAB_CHECK(static_cast<std::int64_t>(shard_objs.size()) == cp,
              "gather: {} shards for cp={}: give one per rank, in rank order", shard_objs.size(),
              cp);
  std::vector<Tensor> locals;
  for (std::size_t r = 0; r < shard_objs.size(); ++r)
    locals.push_back(tensor_from_torch(shard_objs[r], fmt::format("shards[{}]", r)));
  CPLAB_CHECK(seq_dim >= 1 && seq_dim < locals[0].dim(),
              "gather: seq_dim={} of a {}-dimensional shard; the row dim is seq_dim - 1", seq_dim,
              locals[0].dim());
  const ShardPlan plan =
      plan_rows(make_spec(layout, cp, options), RowShape{seq_len, doc_lens, doc_lens_padded},
                locals[0].size(seq_dim - 1));
  return tensor_to_torch(reference::gather_token_tensor(plan, locals, seq_dim, trim));
}

py::list shift_fn(py::handle value_obj, std::int64_t depth, const std::string& layout,
                  std::int64_t cp, std::optional<std::vector<std::int64_t>> doc_lens,
                  std::optional<std::vector<std::int64_t>> doc_lens_padded, std::int64_t seq_dim,
                  double fill, const LayoutOptions& options) {
  CPLAB_CHECK(depth >= 1, "depth must be at least 1, not {}", depth);
  const Tensor value = tensor_from_torch(value_obj, "value");
  CPLAB_CHECK(holds_exactly(value.dtype(), fill), "shift: fill={} is not a {} value", fill,
              dtype_name(value.dtype()));
  CPLAB_CHECK(seq_dim >= 1 && seq_dim < value.dim(),
              "shift: seq_dim={} of a {}-dimensional value; the row dim is seq_dim - 1", seq_dim,
              value.dim());
  const std::int64_t rows = value.size(seq_dim - 1), seq = value.size(seq_dim);
  CPLAB_CHECK(!doc_lens || rows == 1, "doc_lens= describes one packed row; value has {} rows",
              rows);
  const LayoutSpec spec = make_spec(layout, cp, options);
  const ShardPlan plan = doc_lens
                             ? plan_rows(spec, RowShape{std::nullopt, doc_lens, doc_lens_padded}, 1)
                             : plan_rows(spec, RowShape{seq, std::nullopt, std::nullopt}, rows);
  CPLAB_CHECK(plan.rows[0].caller_len == seq, "doc_lens= occupy {} tokens; value has S={}",
              plan.rows[0].caller_len, seq);
  const Tensor global = reference::pad_to_global(
      plan,
      TokenField{.value = value, .seq_dim = seq_dim, .rule = PadRule::constant, .pad_value = fill});
  const Tensor shifted = reference::shift_global(plan, global, seq_dim, depth, fill);
  py::list out;
  for (std::int64_t r = 0; r < cp; ++r)
    out.append(tensor_to_torch(reference::select_rank(plan, shifted, seq_dim, r)));
  return out;
}

py::dict shifted_loss_fn(py::handle logits_obj, py::handle labels_obj, py::handle valid_obj,
                         const std::string& layout, std::int64_t cp,
                         std::optional<std::vector<std::int64_t>> doc_lens,
                         std::optional<std::vector<std::int64_t>> doc_lens_padded,
                         std::int64_t depth, const LayoutOptions& options) {
  CPLAB_CHECK(depth >= 1, "depth must be at least 1, not {}", depth);
  const Tensor logits = tensor_from_torch(logits_obj, "logits");
  const Tensor labels = tensor_from_torch(labels_obj, "labels");
  CPLAB_CHECK(logits.dtype() == DType::f32 && logits.dim() == 3,
              "logits must be a float32 [B, S, V] tensor, found {}", tensor_brief(logits));
  CPLAB_CHECK(labels.dim() == 2 && labels.size(0) == logits.size(0) &&
                  labels.size(1) == logits.size(1) &&
                  (labels.dtype() == DType::i64 || labels.dtype() == DType::i32),
              "labels must be an integer [B, S] tensor matching logits {}, found {}",
              tensor_brief(logits), tensor_brief(labels));
  Tensor valid = valid_obj.is_none()
                     ? Tensor::from_bools(labels.shape(), std::vector<bool>(labels.numel(), true))
                     : tensor_from_torch(valid_obj, "valid");
  CPLAB_CHECK(
      valid.shape() == labels.shape() && (valid.dtype() == DType::b8 || valid.dtype() == DType::u8),
      "valid must be a bool or uint8 tensor shaped like labels {}, found {}",
      shape_str(labels.shape()), tensor_brief(valid));
  const std::int64_t rows = labels.size(0);
  CPLAB_CHECK(!doc_lens || rows == 1, "doc_lens= describes one packed row; labels have {} rows",
              rows);
  const LayoutSpec spec = make_spec(layout, cp, options);
  const ShardPlan plan =
      doc_lens ? plan_rows(spec, RowShape{std::nullopt, doc_lens, doc_lens_padded}, 1)
               : plan_rows(spec, RowShape{labels.size(1), std::nullopt, std::nullopt}, rows);
  CPLAB_CHECK(plan.rows[0].caller_len == labels.size(1),
              "doc_lens= occupy {} tokens; labels have S={}", plan.rows[0].caller_len,
              labels.size(1));
  reference::LossReference ref = reference::shifted_loss_caller(plan, logits, labels, valid, depth);
  const std::int64_t L = plan.rows[0].padded_len;
  std::vector<std::int64_t> targets;
  std::vector<bool> contributes;
  for (std::int64_t b = 0; b < rows; ++b) {
    targets.insert(targets.end(), ref.target[b].begin(), ref.target[b].end());
    for (std::uint8_t c : ref.contributes[b]) contributes.push_back(c != 0);
  }
  py::list rank_grads;
  const Tensor scaled = [&] {
    Tensor g = ref.grad_global;
    for (std::int64_t i = 0; i < g.numel(); ++i) g.set(i, g.get(i) * static_cast<double>(cp));
    return g;
  }();
  for (std::int64_t r = 0; r < cp; ++r)
    rank_grads.append(tensor_to_torch(reference::select_rank(plan, scaled, 1, r)));
  return py::dict("global_mean"_a = ref.global_mean,
                  "contributing_total"_a = ref.contributing_total, "rank_loss"_a = ref.rank_loss,
                  "rank_contributing"_a = ref.rank_contributing,
                  "grad"_a = tensor_to_torch(std::move(ref.grad_global)),
                  "rank_grad"_a = rank_grads, "targets"_a = int64s_to_torch(targets, {rows, L}),
                  "contributes"_a = tensor_to_torch(Tensor::from_bools({rows, L}, contributes)));
}

// layouts() and plan(): the registry and one row's plan.
void bind_layout_functions(py::module_& m) {
  m.def("layouts", &describe_layouts,
        R"(layouts() -> list[dict]

Every registered layout, in the registry's order, each a dict of
    name     the layout's name (what every other function's `layout` takes)
    rows     the rows it takes: "bshd" (rows of S tokens) and/or "packed" (documents, seq_lens)
    cp_off   True when it exists only with CP off (cp=1)
    options  the names of its own keyword options (as its declaration lists them:
             pad_multiple for contiguous, chunk_size and chunk_pad_at_cp1 for magi, ...))");
  m.def(
      "plan",
      [](const std::string& layout, std::int64_t cp, std::optional<std::int64_t> seq_len,
         std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, const std::string& mask,
         CPLAB_LAYOUT_PARAMS) {
        return plan_fn(layout, cp, seq_len, doc_lens, doc_lens_padded, mask, CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("layout"), py::arg("cp"), py::kw_only(), py::arg("seq_len") = py::none(),
      py::arg("doc_lens") = py::none(), py::arg("doc_lens_padded") = py::none(),
      py::arg("mask") = "causal", CPLAB_LAYOUT_ARGS,
      R"(The reference plan of one row: a BSHD row of `seq_len` tokens, or a packed row of
documents (`doc_lens`, and `doc_lens_padded` when the caller pads each document itself).

Returns a dict: layout, cp, spec (the layout in one line), seq_len (S), padded_seq_len (L),
packed, and as int64 tensors (built as vectors, copied once into torch)
    index [C, l]       the global slot each rank's local token holds
    positions [C, l]   its position id (computed before partitioning)
    doc_ids [C, l]     its document (1-based; 0: row padding)
    real [C, l]        bool: a real token, not padding
    cu_seqlens         list of C local cu_seqlens tensors (layouts with whole local
                       documents, thd), else None
    valid_tokens [C], global_positions [L], caller_pos [L] (-1: an added slot),
    cu_seqlens_padded (packed rows)
    mask               the attention mask's canonical text (mask=, SPEC 13.5: "causal",
                       "window:W", "chunked:K", "bidirectional:B-E,...")
    work [C]           each rank's attention work under it (pairs of real query and key it
                       computes, SPEC 8), and imbalance (max/mean)
Layout options: pad_id, pad_policy ("spec" or "zero"), and each layout's own options by name as
layouts() lists them (pad_multiple=, chunk_size=, ...).)");
}

// shard(), gather() and shift(): what ranks hold of a batch's token tensors, and back.
void bind_token_functions(py::module_& m) {
  m.def(
      "shard",
      [](py::object batch, const std::string& layout, std::int64_t cp, CPLAB_LAYOUT_PARAMS) {
        return shard_fn(batch, layout, cp, CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("batch"), py::arg("layout"), py::arg("cp"), py::kw_only(), CPLAB_LAYOUT_ARGS,
      R"(What every rank must hold of `batch` (the reference's shard_batch): a list of C dicts.

`batch` is a dict as `cplab check --batch` reads one: input_ids [B,S] or inputs_embeds
[B,S,H], labels, optional position_ids, loss_mask, valid, padding_mask, an "extra_tokens" dict,
a "passthrough" dict and, for a packed row, seq_lens (and seq_lens_padded). Its tensors are
copied once (cplab's tensors own their bytes); the shards come back without a copy. Each rank's
dict holds every token key (position_ids added when absent), the pass-through tensors and, for
layouts with whole local documents, its local cu_seqlens. A packed batch is one row.)");
  m.def(
      "gather",
      [](const std::vector<py::object>& shards, const std::string& layout, std::int64_t cp,
         std::optional<std::int64_t> seq_len, std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, std::int64_t seq_dim, bool trim,
         CPLAB_LAYOUT_PARAMS) {
        return gather_fn(shards, layout, cp, seq_len, doc_lens, doc_lens_padded, seq_dim, trim,
                         CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("shards"), py::arg("layout"), py::arg("cp"), py::kw_only(),
      py::arg("seq_len") = py::none(), py::arg("doc_lens") = py::none(),
      py::arg("doc_lens_padded") = py::none(), py::arg("seq_dim") = 1, py::arg("trim") = true,
      CPLAB_LAYOUT_ARGS,
      R"(gather_token_tensor: the C local shards (rank order, sequence on `seq_dim`) put back at
their global slots; trim=True cuts the padded stream back to the caller's S. The row is
described as in plan(). Inputs are copied once; the result comes back without a copy.)");
  m.def(
      "shift",
      [](py::object value, std::int64_t depth, const std::string& layout, std::int64_t cp,
         std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, std::int64_t seq_dim,
         double fill, CPLAB_LAYOUT_PARAMS) {
        return shift_fn(value, depth, layout, cp, doc_lens, doc_lens_padded, seq_dim, fill,
                        CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("value"), py::arg("depth"), py::kw_only(), py::arg("layout"), py::arg("cp"),
      py::arg("doc_lens") = py::none(), py::arg("doc_lens_padded") = py::none(),
      py::arg("seq_dim") = 1, py::arg("fill"), CPLAB_LAYOUT_ARGS,
      R"(The inputs of a multi-token prediction head of depth k under CP (SPEC §6.1): what every
rank's shard of `value` (caller coordinates, sequence on `seq_dim`) shifted by `depth` slots must
hold, a list of C tensors. Each token takes the value `depth` slots ahead on the global stream in
its own document, wherever that slot lives, and `fill` (a value of value's dtype) where there is
none: past a document's or the stream's end, and where that slot is one the layout added (the
slots the layout adds hold `fill` themselves). Automodel's roll_tensor(input_ids, -k) on one GPU,
made correct for every layout and document boundary.)");
}

// shifted_loss(): the loss every rank's share is checked against.
void bind_loss_functions(py::module_& m) {
  m.def(
      "shifted_loss",
      [](py::object logits, py::object labels, py::object valid, const std::string& layout,
         std::int64_t cp, std::optional<std::vector<std::int64_t>> doc_lens,
         std::optional<std::vector<std::int64_t>> doc_lens_padded, std::int64_t depth,
         CPLAB_LAYOUT_PARAMS) {
        return shifted_loss_fn(logits, labels, valid, layout, cp, doc_lens, doc_lens_padded, depth,
                               CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("logits"), py::arg("labels"), py::arg("valid") = py::none(), py::kw_only(),
      py::arg("layout"), py::arg("cp"), py::arg("doc_lens") = py::none(),
      py::arg("doc_lens_padded") = py::none(), py::arg("depth") = 1, CPLAB_LAYOUT_ARGS,
      R"(The shifted cross-boundary loss of SPEC §6 on the unsharded batch, as the reference
computes it: logits float32 [B,S,V], labels [B,S] (unshifted, -100 = ignore), valid [B,S]
bool (default: all). Returns a dict: global_mean (HF's shifted cross-entropy mean),
contributing_total (N), rank_loss and rank_contributing (per rank: loss_r = sum of its CE * C /
N, so their mean is global_mean), grad [B,L,V] (d global_mean / d logits on the padded stream),
rank_grad (per rank [B,l,V]: C * grad on its slots, what its backward must give), targets [B,L]
(each slot's target label, -1 none) and contributes [B,L] bool. depth=k (SPEC §6.1, multi-token
prediction): slot t predicts the label k slots ahead in its document; N, the means and the
gradients are depth k's own. Depth 1 is the next-token loss.)");
}

}  // namespace

void bind_reference(py::module_& m) {
  bind_layout_functions(m);
  bind_token_functions(m);
  bind_loss_functions(m);
}

}  // namespace cplab::python
