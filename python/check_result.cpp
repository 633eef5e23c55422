#include "python/check_result.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/stl.h>

#include "python/errors.hpp"

namespace cplab::python {
namespace py = pybind11;
using namespace pybind11::literals;

namespace {

std::string policy_name(PadPolicy policy) {
  for (const auto& p : check::pad_policies()) {
    if (p.policy == policy) return p.name;
  }
  return "?";
}

}  // namespace

std::string CheckResult::report() const {
  const check::Outcome& o = verdict.outcome;
  const std::string brief = check::layout_brief(o.spec);
  std::string out;
  if (!verdict.automatic) {
    out += fmt::format("layout: {}\n", brief);
  } else if (o.diffs.empty()) {
    out += fmt::format("layout: {} (auto: explains the shards; {} candidate plans tried){}\n",
                       brief, verdict.candidates,
                       verdict.also.empty()
                           ? ""
                           : fmt::format("; also explained by {}", fmt::join(verdict.also, ", ")));
  } else {
    out += fmt::format(
        "layout: no registered layout explains the shards; closest of {} candidate plans: {}, "
        "except:\n",
        verdict.candidates, brief);
  }
  out += fmt::format("conventions: pad policy {} ({}) · pad id {} ({}){}\n",
                     policy_name(o.spec.pad_policy),
                     o.policy_given ? "given" : "fits the shards best", o.spec.pad_token_id,
                     o.pad_id_from, o.cu_seqlens.empty() ? "" : " · cu_seqlens " + o.cu_seqlens);
  for (const auto& note : o.notes) out += fmt::format("note: {}\n", note);
  for (const auto& d : o.diffs) out += fmt::format("  {}\n", d.text);
  out += o.diffs.empty() ? fmt::format("MATCH: every key of every rank is what {} gives", brief)
                         : fmt::format("MISMATCH: {} differences ({} wrong slots, keys or entries)",
                                       o.diffs.size(), o.score);
  return out;
}

std::string CheckResult::first_difference() const {
  const auto& diffs = verdict.outcome.diffs;
  if (diffs.empty()) return "";
  return diffs.size() == 1 ? diffs[0].text
                           : fmt::format("{} (and {} more)", diffs[0].text, diffs.size() - 1);
}

void bind_check_result(py::module_& m) {
  py::class_<check::Difference>(m, "Difference",
                                "One run of local slots that are wrong the same way.")
      .def_property_readonly(
          "rank",
          [](const check::Difference& d) -> py::object {
            return d.rank >= 0 ? py::int_(d.rank) : py::object(py::none());
          },
          "The rank whose shard differs (None: the gathered tensor).")
      .def_readonly("key", &check::Difference::key)
      .def_property_readonly(
          "kind", [](const check::Difference& d) { return check::diff_kind_name(d.kind); },
          "slot, pad, missing_key, extra_key, shape, dtype or cu_seqlens.")
      .def_readonly("row", &check::Difference::row)
      .def_property_readonly(
          "slots", [](const check::Difference& d) { return py::make_tuple(d.begin, d.end); },
          "[begin, end) of the local slots (cu_seqlens: entries; gathered: positions).")
      .def_readonly("expected", &check::Difference::should,
                    "The global slot each of them should hold.")
      .def_readonly("got", &check::Difference::holds,
                    "The global slot whose value each holds (found by value; -1 none, -2 several).")
      .def_readonly("message", &check::Difference::text)
      .def("__repr__", [](const check::Difference& d) { return d.text; });
  py::class_<CheckResult>(m, "CheckResult", "The verdict of check_shards.")
      .def_property_readonly("ok", &CheckResult::ok, "True when every key of every rank matches.")
      .def("__bool__", &CheckResult::ok)
      .def_property_readonly("layout",
                             [](const CheckResult& r) { return r.verdict.outcome.spec.layout; })
      .def_property_readonly("cp", [](const CheckResult& r) { return r.verdict.outcome.spec.cp; })
      .def_property_readonly(
          "spec", [](const CheckResult& r) { return check::layout_brief(r.verdict.outcome.spec); },
          "The layout found (or given) with its options, in one line.")
      .def_property_readonly("auto", [](const CheckResult& r) { return r.verdict.automatic; })
      .def_property_readonly("candidates",
                             [](const CheckResult& r) { return r.verdict.candidates; })
      .def_property_readonly("also_explained_by",
                             [](const CheckResult& r) { return r.verdict.also; })
      .def_property_readonly("conventions",
                             [](const CheckResult& r) {
                               const check::Outcome& o = r.verdict.outcome;
                               return py::dict(
                                   "pad_policy"_a = policy_name(o.spec.pad_policy),
                                   "pad_policy_from"_a = o.policy_given ? "given" : "best fit",
                                   "pad_id"_a = o.spec.pad_token_id,
                                   "pad_id_from"_a = o.pad_id_from, "cu_seqlens"_a = o.cu_seqlens);
                             })
      .def_property_readonly("notes", [](const CheckResult& r) { return r.verdict.outcome.notes; })
      .def_property_readonly("score", [](const CheckResult& r) { return r.verdict.outcome.score; })
      .def_property_readonly("differences",
                             [](const CheckResult& r) { return r.verdict.outcome.diffs; })
      .def_property_readonly("report", &CheckResult::report, "The report `cplab check` prints.")
      .def(
          "raise_for_failure",
          [](const CheckResult& r) {
            if (r.ok()) return;
            const auto& d = r.verdict.outcome.diffs[0];
            raise_check_failed(
                fmt::format("{}: {}", check::layout_brief(r.verdict.outcome.spec),
                            r.first_difference()),
                py::dict("rank"_a = d.rank, "key"_a = d.key, "result"_a = py::cast(r)));
          },
          "Raises cplab.Error(kind='check_failed') naming the first difference, unless ok.")
      .def("__str__", &CheckResult::report)
      .def("__repr__", [](const CheckResult& r) {
        return fmt::format(
            "<cplab.CheckResult {} {}: {} differences>", r.ok() ? "MATCH" : "MISMATCH",
            check::layout_brief(r.verdict.outcome.spec), r.verdict.outcome.diffs.size());
      });
}

}  // namespace cplab::python
