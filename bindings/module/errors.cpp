#include "errors.h"

#include "ir/error.h"

namespace py = pybind11;

namespace blocc::python {

namespace {
// A strong reference kept for the life of the process: the type outlives
// every module that could raise it.
PyObject *error_type = nullptr;
} // namespace

void define_error_type(py::module_ &module) {
  error_type = PyErr_NewExceptionWithDoc(
      "blocc.Error",
      "A mistake blocc reports: a bad kernel (at trace time), bad launch "
      "arguments, a failed check, a missing backend. The message names the "
      "kernel, the argument or the kernel's source line.",
      PyExc_Exception, nullptr);
  if (!error_type)
    throw py::error_already_set();
  module.attr("Error") = py::handle(error_type);
  // C++ code run by the module (device queries, the caches) throws
  // blocc::Error: it reaches Python as blocc.Error too.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      PyErr_SetString(error_type, e.what());
    }
  });
}

void raise_error(const std::string &message) {
  PyErr_SetString(error_type, message.c_str());
  throw py::error_already_set();
}

} // namespace blocc::python
