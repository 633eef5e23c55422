#pragma once
// The parts of the _cplab module, one function per file that binds them.
#include <pybind11/pybind11.h>

#include "python/layout_options.hpp"

namespace cplab::python {

void bind_reference(pybind11::module_& m);  // layouts, plan, shard, gather, shifted_loss
void bind_check(pybind11::module_& m);      // check_shards and its result
void bind_cases(pybind11::module_& m);      // generated cases for cplab.testing

}  // namespace cplab::python

// The layout options every function takes as keyword arguments: the lambda's parameters, the
// LayoutOptions they make, and their names and defaults.
#define CPLAB_LAYOUT_PARAMS                                                         \
  std::optional<std::int64_t> pad_multiple, std::optional<std::int64_t> chunk_size, \
      bool chunk_pad_at_cp1, std::optional<std::int64_t> ring_degree,               \
      std::optional<std::int64_t> block_size, std::optional<std::int64_t> pad_id,   \
      std::optional<std::string> pad_policy
#define CPLAB_LAYOUT_OPTIONS                                                                \
  ::cplab::python::LayoutOptions {                                                          \
    pad_multiple, chunk_size, ring_degree, block_size, pad_id, chunk_pad_at_cp1, pad_policy \
  }
#define CPLAB_LAYOUT_ARGS                                                                          \
  pybind11::arg("pad_multiple") = pybind11::none(),                                                \
  pybind11::arg("chunk_size") = pybind11::none(), pybind11::arg("chunk_pad_at_cp1") = false,       \
  pybind11::arg("ring_degree") = pybind11::none(), pybind11::arg("block_size") = pybind11::none(), \
  pybind11::arg("pad_id") = pybind11::none(), pybind11::arg("pad_policy") = pybind11::none()
