// Exporting C++ kernels from a user's own pybind11 module, one line each:
//
//   #include <blocc/blocc.h>
//   #include <blocc/python.h>
//   namespace bl = blocc;
//
//   auto scale = bl::kernel("scale", {"x", "out", "alpha", "n", "BLOCK"},
//                           [](bl::Ptr<float> x, ...) { ... });
//
//   PYBIND11_MODULE(my_kernels, m) {
//     blocc::python::export_kernel(m, scale); // my_kernels.scale
//   }
//
// From Python, `my_kernels.scale` is a blocc.Kernel, launched as in Triton:
// `my_kernels.scale[grid](x, out, 2.0, n, BLOCK=1024)`. The module imports
// the `blocc` package when it loads; link the CMake target `blocc::blocc`.
// The kernel must outlive the module (a namespace-scope kernel does).
#pragma once

#include "blocc/export.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace blocc::python {

/// Adds `kernel` to module `m` as the attribute named like the kernel and
/// returns it (a blocc.Kernel). `param_names` names the parameters of a
/// kernel defined without names (bl::kernel's name list is the better
/// place); a bad name list raises blocc.Error.
inline pybind11::object
export_kernel(pybind11::module_ &m, detail::KernelBase &kernel,
              const std::vector<std::string> &param_names = {}) {
  pybind11::module_ blocc = pybind11::module_::import("blocc");
  const blocc_kernel_v1 *abi = nullptr;
  try {
    if (!param_names.empty())
      kernel.name_parameters(param_names);
    abi = export_kernel_abi(kernel);
  } catch (const Error &e) {
    PyErr_SetString(blocc.attr("Error").ptr(), e.what());
    throw pybind11::error_already_set();
  }
  pybind11::capsule handle(const_cast<void *>(static_cast<const void *>(abi)),
                           BLOCC_KERNEL_CAPSULE_NAME_V1);
  // The module is the kernel's owner: it keeps the module's code loaded.
  pybind11::object k = blocc.attr("_kernel_from_capsule")(handle, m);
  m.attr(kernel.name().c_str()) = k;
  return k;
}

} // namespace blocc::python
