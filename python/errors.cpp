#include "python/errors.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <new>
#include <system_error>

#include "core/error.hpp"
#include "core/untrusted_text.hpp"

namespace cplab::python {
namespace py = pybind11;

namespace {

// cplab.Error, looked up once; kept for the life of the process (never decremented at exit, when
// the interpreter may already be gone).
PyObject* error_class() {
  static PyObject* cls =
      py::object(py::module_::import("cplab._error").attr("Error")).release().ptr();
  return cls;
}

void raise(const char* kind, const char* cli_kind, const std::string& message) {
  const std::string line = one_line(message);
  py::object error = py::reinterpret_borrow<py::object>(error_class())(
      line, py::arg("kind") = kind,
      py::arg("cli_line") = fmt::format("cplab: {}: {}", cli_kind, line));
  PyErr_SetObject(error_class(), error.ptr());
}

}  // namespace

void raise_check_failed(const std::string& message, py::dict details) {
  const std::string line = one_line(message);
  details["kind"] = "check_failed";
  details["cli_line"] = "cplab: " + line;
  py::object error = py::reinterpret_borrow<py::object>(error_class())(line, **details);
  PyErr_SetObject(error_class(), error.ptr());
  throw py::error_already_set();
}

std::string one_line(const std::string& message) { return escape_untrusted(message); }

void register_errors(py::module_& m) {
  error_class();  // fails the import, not a later call, when cplab._error is missing
  m.attr("Error") = py::reinterpret_borrow<py::object>(error_class());
  // The CLI's mapping (cli/errors.cpp): the same exceptions, the same kinds and lines.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;  // a Python exception raised under C++: pybind11 restores it as it was
    } catch (const py::builtin_exception& e) {
      raise("bad_input", "error", e.what());  // a value of the wrong Python type
    } catch (const Error& e) {
      raise("bad_input", "error", e.what());
    } catch (const ResourceError& e) {
      raise("bad_input", "out of resources", e.what());
    } catch (const std::bad_alloc&) {
      raise("bad_input", "out of resources",
            "out of memory (std::bad_alloc); the input needs more memory than this machine gives");
    } catch (const std::filesystem::filesystem_error& e) {
      raise("bad_input", "error", e.what());
    } catch (const std::exception& e) {
      raise("internal", "internal error",
            fmt::format("{} (a bug of cplab: please report it with the call)", e.what()));
    }
  });
}

}  // namespace cplab::python
