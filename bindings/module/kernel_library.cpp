#include "kernel_library.h"

#include "blocc/kernel_abi.h"
#include "errors.h"
#include "python_kernel.h"

#include <dlfcn.h>

namespace py = pybind11;

namespace blocc::python {

py::tuple load_kernel_library(const std::string &path) {
  void *handle = nullptr;
  std::string why;
  {
    // Loading runs the library's static initializers (its kernels'
    // definitions), which need no Python. RTLD_LOCAL: the library's own
    // copy of blocc stays its own.
    py::gil_scoped_release released;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      why = dlerror();
  }
  if (!handle)
    raise_error("blocc.load_library('" + path + "'): " + why);
  auto entry = reinterpret_cast<blocc_export_kernels_fn_v1>(
      dlsym(handle, BLOCC_KERNEL_LIBRARY_SYMBOL_V1));
  if (!entry)
    raise_error("blocc.load_library('" + path +
                "'): the library exports no kernels (no symbol " +
                BLOCC_KERNEL_LIBRARY_SYMBOL_V1 +
                "); list them with BLOCC_EXPORT_KERNELS(...) from "
                "<blocc/export.h>");
  const blocc_kernel_library_v1 *library = entry();
  if (!library || library->abi_version != BLOCC_KERNEL_ABI_VERSION)
    raise_error("blocc.load_library('" + path +
                "'): the library was built for another version of blocc's "
                "kernel interface; rebuild it against this blocc");
  if (library->error)
    raise_error("blocc.load_library('" + path + "'): " + library->error);
  py::dict kernels;
  for (size_t i = 0; i < library->num_kernels; ++i)
    kernels[library->kernels[i]->name] =
        make_kernel(library->kernels[i], py::str(path));
  return py::make_tuple(kernels, py::str(library->blocc_version));
}

} // namespace blocc::python
