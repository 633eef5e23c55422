#pragma once
// cplab.Error: every failure the module reports is one Python exception class with the CLI's
// one-line message and a kind (the CLI's exit status in words):
//   bad_input     what the CLI exits 2 on (cplab::Error, out of memory or threads)
//   check_failed  what it exits 1 on (raised by cplab.testing and CheckResult.raise_for_failure)
//   internal      what it exits 3 on (any other exception: a bug of cplab)
#include <pybind11/pybind11.h>

#include <string>

namespace cplab::python {

// Installs the translator of C++ exceptions into cplab.Error (cplab._error.Error).
void register_errors(pybind11::module_& m);

// The one-line text of a message as the CLI prints it (control bytes escaped, cut at 1000 bytes).
std::string one_line(const std::string& message);

}  // namespace cplab::python

namespace cplab::python {

// Raises cplab.Error(message, kind="check_failed", **details) from C++.
[[noreturn]] void raise_check_failed(const std::string& message, pybind11::dict details);

}  // namespace cplab::python
