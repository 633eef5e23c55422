#include "python/layout_options.hpp"

#include <fmt/ranges.h>

#include "check/shard_check.hpp"
#include "core/error.hpp"
#include "reference/plan.hpp"

namespace cplab::python {

LayoutOptions layout_options(std::optional<std::int64_t> pad_id,
                             std::optional<std::string> pad_policy,
                             const pybind11::kwargs& kwargs) {
  LayoutOptions out{.pad_id = pad_id, .pad_policy = std::move(pad_policy), .given = {}};
  for (const auto& [key, value] : kwargs) {
    const std::string name = pybind11::str(key);
    const layouts::LayoutOption* option = layouts::option_named(name);
    if (option == nullptr) {
      std::vector<std::string> names;
      for (const layouts::LayoutOption* o : layouts::all_options()) names.emplace_back(o->name);
      CPLAB_FAIL("unexpected keyword argument '{}'; layout options: {}", name,
                 fmt::join(names, ", "));
    }
    if (value.is_none()) continue;  // as if not given
    const bool is_bool = pybind11::isinstance<pybind11::bool_>(value);
    CPLAB_CHECK(pybind11::isinstance<pybind11::int_>(value) && (!is_bool || option->is_switch),
                "{}= must be an int{}, got {}", name, option->is_switch ? " or a bool" : "",
                std::string(pybind11::str(pybind11::repr(value))));
    std::int64_t v = 0;
    try {
      v = value.cast<std::int64_t>();
    } catch (const pybind11::cast_error&) {
      CPLAB_FAIL("{}= {} does not fit in 64 bits", name,
                 std::string(pybind11::str(pybind11::repr(value))));
    }
    out.given.emplace_back(option, v);
  }
  return out;
}

LayoutSpec make_spec(const std::string& layout, std::int64_t cp, const LayoutOptions& options) {
  LayoutSpec spec;
  spec.layout = layout;
  spec.cp = cp;
  for (const auto& [option, value] : options.given) option->set(spec, value);
  if (options.pad_id) spec.pad_token_id = *options.pad_id;
  if (options.pad_policy) spec.pad_policy = check::parse_pad_policy(*options.pad_policy);
  validate_spec(spec);
  return spec;
}

ShardPlan plan_rows(const LayoutSpec& spec, const RowShape& shape, std::int64_t rows) {
  CPLAB_CHECK(shape.seq_len.has_value() != shape.doc_lens.has_value(),
              "give seq_len= (a BSHD row) or doc_lens= (a packed row), not {}",
              shape.seq_len ? "both" : "neither");
  CPLAB_CHECK(!shape.doc_lens_padded || shape.doc_lens,
              "doc_lens_padded= goes with doc_lens= (a packed row)");
  CPLAB_CHECK(rows >= 1, "a plan needs at least one row, got {}", rows);
  ShardPlan plan;
  plan.spec = spec;
  RowPlan row;
  if (shape.seq_len) {
    row = reference::plan_row(spec, *shape.seq_len);
  } else {
    std::int64_t occupied = 0;
    const auto& lens = shape.doc_lens_padded ? *shape.doc_lens_padded : *shape.doc_lens;
    for (std::int64_t n : lens) {
      CPLAB_CHECK(n >= 0, "document lengths must be non-negative, got {}", n);
      occupied += n;
    }
    row = reference::plan_row(spec, occupied, &*shape.doc_lens,
                              shape.doc_lens_padded ? &*shape.doc_lens_padded : nullptr);
  }
  plan.rows.assign(static_cast<std::size_t>(rows), row);
  return plan;
}

ShardPlan plan_batch(const LayoutSpec& spec, const Batch& batch) {
  CPLAB_CHECK(!batch.packed() || batch.rows() == 1,
              "a packed batch of {} rows: give one packed row at a time (each row of a packed "
              "batch is planned on its own and may have its own padded length)",
              batch.rows());
  return reference::plan(spec, batch);
}

}  // namespace cplab::python
