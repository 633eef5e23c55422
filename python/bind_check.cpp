// cplab.check_shards: `cplab check`'s engine on tensors instead of files.
#include <pybind11/stl.h>

#include "core/error.hpp"
#include "python/bindings.hpp"
#include "python/check_result.hpp"
#include "python/tensor_bridge.hpp"
#include "reference/plan.hpp"

namespace cplab::python {
namespace py = pybind11;

namespace {

io::TensorFile gathered_file(py::handle obj) {
  if (is_tensor(obj)) {
    io::TensorFile file;
    file.tensors[""] = tensor_from_torch(obj, "gathered");
    return file;
  }
  return shard_from_dict(obj, "gathered");
}

CheckResult check_shards_fn(py::handle batch_obj, py::handle shards_obj, std::int64_t cp,
                            const std::string& layout, py::handle gathered,
                            const LayoutOptions& options) {
  const Batch batch = batch_from_dict(batch_obj, "batch");
  CPLAB_CHECK(py::isinstance<py::sequence>(shards_obj) && !py::isinstance<py::str>(shards_obj) &&
                  !py::isinstance<py::dict>(shards_obj),
              "shards must be a list of per-rank dicts, one per rank in rank order");
  const auto seq = py::reinterpret_borrow<py::sequence>(shards_obj);
  CPLAB_CHECK(static_cast<std::int64_t>(seq.size()) == cp,
              "{} shards for cp={}: give one per rank, in rank order", seq.size(), cp);
  std::vector<io::TensorFile> shards;
  for (std::size_t r = 0; r < seq.size(); ++r)
    shards.push_back(shard_from_dict(seq[r], fmt::format("shards[{}]", r)));
  const bool automatic = layout == "auto";
  LayoutOptions probe_options = options;
  probe_options.pad_id.reset();
  probe_options.pad_policy.reset();
  const LayoutSpec probe =
      make_spec(automatic ? reference::layout_names().front() : layout, cp, probe_options);
  check::Conventions conventions;
  conventions.pad_id = options.pad_id;
  if (options.pad_policy) conventions.policy = check::parse_pad_policy(*options.pad_policy);
  CheckResult result;
  if (automatic) {
    check::FixedOptions fixed;
    for (const auto& given : options.given) fixed.push_back(given.first);
    result.verdict = check::find_layout(probe, fixed, batch, shards, conventions);
  } else {
    result.verdict.outcome = check::check_shards(probe, batch, shards, conventions);
  }
  if (!gathered.is_none())
    check::check_gathered(batch, gathered_file(gathered), result.verdict.outcome);
  return result;
}

}  // namespace

void bind_check(py::module_& m) {
  bind_check_result(m);
  m.def(
      "check_shards",
      [](py::object batch, py::object shards, std::int64_t cp, const std::string& layout,
         py::object gathered, CPLAB_LAYOUT_PARAMS) {
        return check_shards_fn(batch, shards, cp, layout, gathered, CPLAB_LAYOUT_OPTIONS);
      },
      py::arg("batch"), py::arg("shards"), py::arg("cp"), py::arg("layout") = "auto", py::kw_only(),
      py::arg("gathered") = py::none(), CPLAB_LAYOUT_ARGS,
      R"(Checks what a production sharder gave each rank against the reference: `cplab check`'s
engine on tensors instead of files.

    batch     the unsharded batch, a dict as cplab.shard takes it (seq_lens for packed rows)
    shards    one dict per rank, in rank order: the sharded batch (input_ids, labels,
              position_ids, masks, cu_seqlens / cu_seqlens_padded where the layout has them,
              extra token keys); entries that are not tensors are ignored
    cp        the CP size
    layout    a layout name, or "auto": every registered layout with the option values that
              could give shards of that length (options given here are kept) is tried, and the
              one that explains the shards is named, or the closest with its differences
    gathered  optionally a gather_token_tensor output (a tensor, trimmed or not, or a dict)
    pad_id, pad_policy ("spec" or "zero"): conventions that are not bugs; read off the shards
              unless given. The other keywords are the layout's options (see cplab.plan).

Every tensor is copied once on the way in (cplab's tensors own their bytes). Returns a
CheckResult: ok, layout, spec, cp, auto, candidates, also_explained_by, conventions, notes,
score, differences (each with rank, key, kind, row, slots, expected, got, message), report (the
text `cplab check` prints) and raise_for_failure(). Malformed input raises cplab.Error
(kind "bad_input").)");
}

}  // namespace cplab::python
