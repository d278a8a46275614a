// Exporting kernels written in C++ to Python through the C interface of
// blocc/kernel_abi.h. Link the CMake target `blocc::blocc` (blocc's build, or
// the SDK pip installs: blocc.get_cmake_dir()).
//
// From a shared library that Python loads with blocc.load_library(path):
//
//   #include <blocc/blocc.h>
//   #include <blocc/export.h>
//   namespace bl = blocc;
//   auto scale = bl::kernel("scale", {"x", "out", "alpha", "n", "BLOCK"},
//                           [](bl::Ptr<float> x, ...) { ... });
//   BLOCC_EXPORT_KERNELS(scale)   // once per library, at namespace scope
//
// From a pybind11 module: blocc/python.h (blocc::python::export_kernel).
//
// Exported kernels must live as long as the library (namespace-scope
// kernels do): Python keeps pointers to them.
#pragma once

#include "blocc/kernel.h"
#include "blocc/kernel_abi.h"

#include <vector>

namespace blocc {

/// The C interface of `kernel` (blocc/kernel_abi.h). Built once per kernel;
/// later calls return the same table. Its parameter names are those the
/// kernel has when it is first exported. Throws blocc::Error for a kernel
/// whose definition is wrong (KernelBase::definition_error).
const blocc_kernel_v1 *export_kernel_abi(detail::KernelBase &kernel);

/// The table BLOCC_EXPORT_KERNELS's entry point returns. Never throws: a
/// failure (two kernels of one name) is reported in the table's `error`.
const blocc_kernel_library_v1 *
export_kernel_library(const std::vector<detail::KernelBase *> &kernels);

/// The kernels' table, for BLOCC_EXPORT_KERNELS.
template <typename... K>
const blocc_kernel_library_v1 *export_kernels(K &...kernels) {
  return export_kernel_library(
      {static_cast<detail::KernelBase *>(&kernels)...});
}

} // namespace blocc

/// Defines the entry point blocc.load_library looks up
/// (blocc_export_kernels_v1), listing the library's kernels. Use it once per
/// shared library, at namespace scope, after the kernels.
#define BLOCC_EXPORT_KERNELS(...)                                              \
  extern "C" __attribute__((visibility("default")))                            \
  const blocc_kernel_library_v1 *                                              \
  blocc_export_kernels_v1(void) {                                              \
    static const blocc_kernel_library_v1 *const library =                      \
        ::blocc::export_kernels(__VA_ARGS__);                                  \
    return library;                                                            \
  }
