#include "launch_arguments.h"

#include "errors.h"
#include "runtime/cuda/device.h"

namespace py = pybind11;

namespace blocc::python {

std::string argument_label(const blocc_kernel_v1 &kernel, size_t index) {
  const blocc_param_v1 &p = kernel.params[index];
  std::string named =
      p.name && *p.name ? std::string(" '") + p.name + "'" : std::string();
  return "kernel '" + std::string(kernel.name) + "', argument " +
         std::to_string(index + 1) + named + " (" + p.type_name + ")";
}

LaunchArguments::LaunchArguments(const blocc_kernel_v1 &kernel,
                                 const std::vector<py::object> &values,
                                 uintptr_t stream)
    : kernel_(kernel) {
  args_.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    args_.push_back(kernel.params[i].kind == BLOCC_PARAM_POINTER
                        ? pointer_argument(i, values[i], stream)
                        : scalar_argument(i, values[i]));
}

void LaunchArguments::wait_for_producers(uintptr_t stream) const {
  for (uintptr_t producer : producer_streams_) {
    // 1 and 2 name the legacy and per-thread default streams; a launch
    // without a stream runs on the legacy one.
    const uintptr_t launch = stream ? stream : 1;
    if (producer == launch)
      continue;
    py::gil_scoped_release released;
    cuda::synchronize_stream(
        producer == 1 ? nullptr : reinterpret_cast<void *>(producer));
  }
}

blocc_arg_v1 LaunchArguments::pointer_argument(size_t index,
                                               const py::object &value,
                                               uintptr_t stream) {
  const blocc_param_v1 &param = kernel_.params[index];
  const std::string label = argument_label(kernel_, index);
  blocc_arg_v1 a{};
  a.kind = BLOCC_ARG_POINTER;
  a.device = -1;
  if (value.is_none()) {
    a.dtype = param.dtype;
    a.size_bytes = BLOCC_UNKNOWN_SIZE;
    a.description = "None";
    return a;
  }
  ArrayView view;
  bool is_array = false;
  try {
    is_array = view_array(value, stream ? stream : 1, view, arrays_);
  } catch (py::error_already_set &e) {
    raise_error(label + ": cannot read the array " + type_name(value) + ": " +
                e.what());
  } catch (const std::exception &e) {
    raise_error(label + ": " + e.what());
  }
  if (!is_array)
    raise_error(label + ": expected an array of " + param.dtype +
                " (a numpy array or torch tensor, or any object with the "
                "buffer protocol, __dlpack__ or __cuda_array_interface__), "
                "got " +
                type_name(value));
  if (!view.element)
    raise_error(label + ": " + view.description +
                " has elements blocc has no type for; kernels take bool, "
                "(u)int8/16/32/64, float16, bfloat16, float32 and float64 "
                "arrays");
  if (!view.contiguous)
    raise_error(label + ": " + view.description +
                " is not contiguous (strides in bytes: " + view.strides +
                "); a kernel addresses the array's memory from its first "
                "element, so pass a contiguous copy "
                "(numpy.ascontiguousarray, tensor.contiguous())");
  if (view.torch && view.device >= 0 && torch_device_ < 0)
    torch_device_ = view.device;
  if (view.producer_stream)
    producer_streams_.push_back(*view.producer_stream);
  a.dtype = keep(*view.element);
  a.pointer = view.pointer;
  a.size_bytes = view.size_bytes;
  a.read_only = view.read_only ? 1 : 0;
  a.device = view.device;
  a.description = keep(view.description);
  return a;
}

blocc_arg_v1 LaunchArguments::scalar_argument(size_t index,
                                              const py::object &value) {
  const blocc_param_v1 &param = kernel_.params[index];
  const auto refuse = [&](const std::string &why) {
    const std::string expected = param.kind == BLOCC_PARAM_CONSTANT
                                     ? "a compile-time constant"
                                     : "a scalar";
    raise_error(argument_label(kernel_, index) + ": expected " + expected +
                " of type " + param.dtype + " (an int, float or bool), got " +
                (value.is_none() ? std::string("None") : type_name(value)) +
                why);
  };
  blocc_arg_v1 a{};
  a.device = -1;
  a.description = keep(type_name(value));
  PyObject *v = value.ptr();
  // Arrays of one element still are arrays: a scalar must be a scalar.
  if (py::hasattr(value, "ndim") && py::cast<int64_t>(value.attr("ndim")) != 0)
    refuse("");
  const bool integer = PyBool_Check(v) || PyLong_Check(v) ||
                       (!PyFloat_Check(v) && PyIndex_Check(v));
  if (integer) {
    PyObject *index_value = PyNumber_Index(v);
    if (!index_value) {
      py::error_already_set cause;
      refuse(std::string(" (") + cause.what() + ")");
    }
    py::int_ i = py::reinterpret_steal<py::int_>(index_value);
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow)
      raise_error(argument_label(kernel_, index) + ": the value " +
                  std::string(py::str(i)) + " does not fit in 64 bits");
    a.kind = BLOCC_ARG_INT;
    a.int_value = n;
    return a;
  }
  if (PyFloat_Check(v) || py::hasattr(value, "__float__")) {
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) {
      py::error_already_set cause;
      refuse(std::string(" (") + cause.what() + ")");
    }
    a.kind = BLOCC_ARG_FLOAT;
    a.float_value = d;
    return a;
  }
  refuse("");
  return a; // not reached: refuse raises
}

} // namespace blocc::python
