// The extension module blocc._blocc, which the Python package `blocc`
// (bindings/python/blocc) wraps: blocc.Error, blocc.Kernel, the shipped
// kernels, load_library, and the runtime's queries (backends, GPUs, the
// compile cache).
#include "blocc/kernel.h"
#include "errors.h"
#include "gpu_timer.h"
#include "kernel_library.h"
#include "python_kernel.h"
#include "runtime/cuda/device.h"
#include "shipped_kernels.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "runtime/cpu/disk_cache.h"
#endif

#include <pybind11/pybind11.h>

namespace py = pybind11;
using namespace blocc::python;

namespace {

blocc::Backend backend_named(const std::string &name) {
  if (name == "auto")
    return blocc::Backend::Auto;
  if (name == "interpreter")
    return blocc::Backend::Interpreter;
  if (name == "cpu")
    return blocc::Backend::Cpu;
  raise_error("backend='" + name +
              "' names no host backend; expected 'auto', 'cpu' or "
              "'interpreter'");
}

py::object kernel_from_capsule(const py::capsule &capsule, py::object owner) {
  const char *name = capsule.name();
  if (!name || std::string(name) != BLOCC_KERNEL_CAPSULE_NAME_V1)
    raise_error(std::string("expected a capsule named '") +
                BLOCC_KERNEL_CAPSULE_NAME_V1 +
                "' (from "
                "blocc::python::export_kernel), got '" +
                (name ? name : "") + "'");
  return make_kernel(
      static_cast<const blocc_kernel_v1 *>(capsule.get_pointer()),
      std::move(owner));
}

void define_cuda_queries(py::module_ &m) {
  m.def("_cuda_is_available", &blocc::cuda::is_available);
  m.def("_cuda_unavailable_reason", &blocc::cuda::unavailable_reason);
  m.def("_cuda_device_count", &blocc::cuda::device_count);
  m.def("_cuda_current_device", &blocc::cuda::current_device);
  m.def("_cuda_set_device", &blocc::cuda::set_device);
  m.def("_cuda_device_properties", [](int ordinal) {
    blocc::cuda::DeviceProperties p = blocc::cuda::properties(ordinal);
    return py::make_tuple(p.name, p.compute_capability, p.multiprocessors);
  });
  m.def("_cuda_synchronize", &blocc::cuda::synchronize, py::arg("ordinal") = -1,
        py::call_guard<py::gil_scoped_release>());
}

} // namespace

PYBIND11_MODULE(_blocc, m) {
  m.doc() = "blocc's extension module; use the package `blocc`.";
  define_error_type(m);
  define_kernel_type(m);
  m.def("_kernel_from_capsule", &kernel_from_capsule);
  m.def("_shipped_kernels", [] {
    py::dict kernels;
    for (const blocc_kernel_v1 *k : shipped_kernels())
      kernels[k->name] = make_kernel(k, py::none());
    return kernels;
  });
  m.def("_load_library", &load_kernel_library);
  m.def("_host_backend", [](const std::string &backend) {
    return blocc::host_backend_description(backend_named(backend));
  });
  m.def("_cpu_backend_built", [] {
#ifdef BLOCC_HAVE_CPU_BACKEND
    return true;
#else
    return false;
#endif
  });
  m.def("_gpu_backend_built", [] {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
    return true;
#else
    return false;
#endif
  });
  m.def("_cache_directory", []() -> py::object {
#ifdef BLOCC_HAVE_CPU_BACKEND
    auto directory = blocc::runtime::cpu::cache_directory_from_environment();
    if (directory)
      return py::str(*directory);
#endif
    return py::none();
  });
  m.def("_clear_compile_cache", &blocc::clear_compile_cache,
        py::call_guard<py::gil_scoped_release>());
  define_cuda_queries(m);
  define_gpu_timer(m);
  m.attr("__version__") = BLOCC_VERSION_STRING;
}
