#include "launch_arguments.h"

#include "errors.h"

#include <cstring>
#include <optional>

namespace py = pybind11;

namespace blocc::python {

namespace {

/// The element type of a buffer whose struct-module format is `format`:
/// "f32" and so on, or nullopt for what kernels cannot take (complex,
/// structured, big-endian elements).
std::optional<std::string> element_type(const char *format, size_t itemsize) {
  std::string f = format ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<'))
    f.erase(0, 1);
  if (f.size() != 1)
    return std::nullopt;
  const char c = f[0];
  const auto sized = [&](const char *b8, const char *b16, const char *b32,
                         const char *b64) -> std::optional<std::string> {
    const char *name = itemsize == 1   ? b8
                       : itemsize == 2 ? b16
                       : itemsize == 4 ? b32
                       : itemsize == 8 ? b64
                                       : nullptr;
    if (!name)
      return std::nullopt;
    return std::string(name);
  };
  if (c == '?')
    return itemsize == 1 ? std::optional<std::string>("i1") : std::nullopt;
  if (std::strchr("bhilqn", c))
    return sized("i8", "i16", "i32", "i64");
  if (std::strchr("BHILQN", c))
    return sized("u8", "u16", "u32", "u64");
  if (std::strchr("efd", c))
    return sized(nullptr, "f16", "f32", "f64");
  return std::nullopt;
}

/// How messages show a Python value's type: "numpy.ndarray", "int".
std::string type_name(const py::handle &value) {
  py::handle type = py::type::handle_of(value);
  std::string module = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

/// "numpy.ndarray[float32]": the array's type and element type, the
/// numpy name where the object has a dtype.
std::string array_description(const py::handle &value,
                              const std::string &element) {
  std::string dtype = element;
  if (py::hasattr(value, "dtype"))
    dtype = py::str(value.attr("dtype"));
  return type_name(value) + "[" + dtype + "]";
}

} // namespace

std::string argument_label(const blocc_kernel_v1 &kernel, size_t index) {
  const blocc_param_v1 &p = kernel.params[index];
  std::string named =
      p.name && *p.name ? std::string(" '") + p.name + "'" : std::string();
  return "kernel '" + std::string(kernel.name) + "', argument " +
         std::to_string(index + 1) + named + " (" + p.type_name + ")";
}

LaunchArguments::LaunchArguments(const blocc_kernel_v1 &kernel,
                                 const std::vector<py::object> &values)
    : kernel_(kernel) {
  args_.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    args_.push_back(kernel.params[i].kind == BLOCC_PARAM_POINTER
                        ? pointer_argument(i, values[i])
                        : scalar_argument(i, values[i]));
}

LaunchArguments::~LaunchArguments() {
  for (auto &buffer : buffers_)
    PyBuffer_Release(buffer.get());
}

blocc_arg_v1 LaunchArguments::pointer_argument(size_t index,
                                               const py::object &value) {
  const blocc_param_v1 &param = kernel_.params[index];
  blocc_arg_v1 a{};
  a.kind = BLOCC_ARG_POINTER;
  a.device = -1;
  if (value.is_none()) {
    a.dtype = param.dtype;
    a.size_bytes = BLOCC_UNKNOWN_SIZE;
    a.description = "None";
    return a;
  }
  if (py::hasattr(value, "__cuda_array_interface__") ||
      (!PyObject_CheckBuffer(value.ptr()) && py::hasattr(value, "__dlpack__")))
    raise_error(argument_label(kernel_, index) + ": " + type_name(value) +
                " is a GPU or DLPack array; this version of blocc's Python "
                "bindings takes host arrays with the buffer protocol "
                "(numpy) only");
  if (!PyObject_CheckBuffer(value.ptr()))
    raise_error(argument_label(kernel_, index) + ": expected an array of " +
                param.dtype +
                " (a numpy array, or any object with the buffer "
                "protocol), got " +
                type_name(value));
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(value.ptr(), view.get(),
                         PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
    py::error_already_set cause;
    raise_error(argument_label(kernel_, index) +
                ": cannot read the memory of " + type_name(value) + ": " +
                cause.what());
  }
  Py_buffer *b = view.get();
  buffers_.push_back(std::move(view));
  std::optional<std::string> element =
      element_type(b->format, static_cast<size_t>(b->itemsize));
  const std::string what = array_description(
      value, element ? *element : std::string(b->format ? b->format : "?"));
  if (!element)
    raise_error(argument_label(kernel_, index) + ": " + what +
                " has elements blocc has no type for; kernels take bool, "
                "(u)int8/16/32/64, float16, float32 and float64 arrays");
  if (!PyBuffer_IsContiguous(b, 'A')) {
    std::string strides;
    for (int d = 0; d < b->ndim; ++d)
      strides += (d ? ", " : "") + std::to_string(b->strides[d]);
    if (b->ndim == 1)
      strides += ",";
    raise_error(argument_label(kernel_, index) + ": " + what +
                " is not contiguous (strides in bytes: (" + strides +
                ")); a kernel addresses the array's memory from its first "
                "element, so pass a contiguous copy "
                "(numpy.ascontiguousarray)");
  }
  a.dtype = keep(*element);
  a.pointer = b->buf;
  a.size_bytes = static_cast<uint64_t>(b->len);
  a.read_only = b->readonly ? 1 : 0;
  a.description = keep(what);
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
