// The _cplab extension module; the package around it is python/cplab/.
#include <pybind11/pybind11.h>

#include "python/bindings.hpp"
#include "python/errors.hpp"

PYBIND11_MODULE(_cplab, m) {
  m.doc() = "cplab's reference and shard checker on torch tensors (import cplab, not this).";
  cplab::python::register_errors(m);
  cplab::python::bind_reference(m);
  cplab::python::bind_check(m);
  cplab::python::bind_cases(m);
  cplab::python::bind_attention(m);
}
