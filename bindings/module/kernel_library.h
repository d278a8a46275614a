// blocc.load_library(path): the kernels of a user's shared library, found
// through its BLOCC_EXPORT_KERNELS entry point (blocc/export.h).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace blocc::python {

/// {"name": blocc.Kernel} for every kernel the library at `path` exports,
/// and the version of blocc it was built with. The library stays loaded
/// for the rest of the process (Python may hold its kernels anywhere);
/// loading it again returns the same kernels.
pybind11::tuple load_kernel_library(const std::string &path);

} // namespace blocc::python
