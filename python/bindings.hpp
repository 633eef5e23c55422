#pragma once
// The parts of the _cplab module, one function per file that binds them.
#include <pybind11/pybind11.h>

#include "core/shard_plan.hpp"
#include "python/layout_options.hpp"

namespace cplab::python {

void bind_reference(pybind11::module_& m);  // layouts, plan, shard, gather, shifted_loss
void bind_check(pybind11::module_& m);      // check_shards and its result
void bind_cases(pybind11::module_& m);      // generated cases for cplab.testing
void bind_attention(pybind11::module_& m);  // attention, mask_matrix

// A row's per-rank local cu_seqlens (where its ranks hold whole documents) and varlen segments
// (where they attend through them, as dicts of cu_seqlens_q, cu_seqlens_k, k_slice), as plan()
// and check_attention's meta hand them over; None where the layout has none.
pybind11::object local_cu_seqlens(const RowPlan& row);
pybind11::object varlen_segments(const RowPlan& row);

}  // namespace cplab::python

// The layout options every function takes as keyword arguments: pad_id, pad_policy and each
// layout's own options by their declared names (pad_multiple=, chunk_size=, ...), taken as
// **kwargs and checked against the declarations, so a new option needs nothing here.
#define CPLAB_LAYOUT_PARAMS                                                  \
  std::optional<std::int64_t> pad_id, std::optional<std::string> pad_policy, \
      pybind11::kwargs options
#define CPLAB_LAYOUT_OPTIONS ::cplab::python::layout_options(pad_id, pad_policy, options)
#define CPLAB_LAYOUT_ARGS \
  pybind11::arg("pad_id") = pybind11::none(), pybind11::arg("pad_policy") = pybind11::none()
