// blocc.Error, the Python exception for every mistake blocc reports: its
// message is blocc::Error's text (the C++ side's), or one the bindings
// write in the same style, naming the kernel and the argument.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace blocc::python {

/// Creates blocc.Error in `module` (once, at import).
void define_error_type(pybind11::module_ &module);

/// Raises blocc.Error with `message` (throws pybind11::error_already_set).
[[noreturn]] void raise_error(const std::string &message);

} // namespace blocc::python
