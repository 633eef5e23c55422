#pragma once
// The parts of the _cplab module, one function per file that binds them.
#include <pybind11/pybind11.h>

#include "python/layout_options.hpp"

namespace cplab::python {

void bind_reference(pybind11::module_& m);  // layouts, plan, shard, gather, shifted_loss
void bind_check(pybind11::module_& m);      // check_shards and its result
void bind_cases(pybind11::module_& m);      // generated cases for cplab.testing
void bind_attention(pybind11::module_& m);  // attention, mask_matrix

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
