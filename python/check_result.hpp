#pragma once
// What cplab.check_shards returns: the engine's verdict (check/layout_search.hpp) as a Python
// object, and the report `cplab check` prints for it.
#include <pybind11/pybind11.h>

#include <string>

#include "check/layout_search.hpp"

namespace cplab::python {

struct CheckResult {
  check::Verdict verdict;
  bool ok() const { return verdict.outcome.diffs.empty(); }
  std::string report() const;  // `cplab check`'s text, without its file line
  std::string first_difference() const;
};

void bind_check_result(pybind11::module_& m);

}  // namespace cplab::python
