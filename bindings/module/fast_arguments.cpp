#include "fast_arguments.h"

#include "array_protocols.h"

#include <cstring>
#include <map>
#include <set>
#include <tuple>

namespace py = pybind11;

namespace blocc::python {

namespace {

/// Attribute names, interned once: a lookup by an interned name compares
/// pointers.
struct Names {
  PyObject *dtype = PyUnicode_InternFromString("dtype");
  PyObject *is_cuda = PyUnicode_InternFromString("is_cuda");
  PyObject *is_cpu = PyUnicode_InternFromString("is_cpu");
  PyObject *get_device = PyUnicode_InternFromString("get_device");
  PyObject *data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject *nbytes = PyUnicode_InternFromString("nbytes");
  PyObject *is_contiguous = PyUnicode_InternFromString("is_contiguous");
};

const Names &names() {
  static const Names *n = new Names; // never freed: the module never unloads
  return *n;
}

/// What a launch derives from an array's type and element type: blocc's
/// element type (nullptr: none) and the description messages show, both
/// at addresses that stay valid for the process.
struct Described {
  const char *element = nullptr;
  std::string description;
};

/// Every (type or dtype, format, device or item size) seen, described once.
/// Grows by the few kinds of arrays a process passes; used under the GIL.
class Descriptions {
public:
  /// A torch tensor of `dtype` (a torch.dtype, a singleton) on `device`
  /// (-1: the CPU), described as array_protocols.cpp's view_torch does.
  const Described &torch(PyObject *dtype, int device) {
    auto [it, fresh] = seen_.try_emplace({dtype, std::string(), device});
    if (fresh) {
      Py_INCREF(dtype); // the key's address must stay this dtype's
      std::string name = py::str(dtype);
      if (name.rfind("torch.", 0) == 0)
        name.erase(0, 6);
      it->second.element = intern(torch_element(name));
      it->second.description =
          "torch.Tensor[" + name + "]" +
          (device >= 0 ? " on cuda:" + std::to_string(device) : std::string());
    }
    return it->second;
  }

  /// A numpy array (`array`, of that type) whose buffer has `format` and
  /// `itemsize`, described as view_buffer does: numpy spells one format
  /// one dtype.
  const Described &numpy(PyObject *array, const char *format,
                         Py_ssize_t itemsize) {
    PyTypeObject *type = Py_TYPE(array);
    auto [it, fresh] =
        seen_.try_emplace({type, std::string(format ? format : "B"), itemsize});
    if (fresh) {
      Py_INCREF(type);
      it->second.element = intern(buffer_element(format, itemsize));
      std::string dtype = py::str(py::handle(array).attr("dtype"));
      it->second.description = type_name(array) + "[" + dtype + "]";
    }
    return it->second;
  }

private:
  const char *intern(const std::optional<std::string> &element) {
    return element ? elements_.insert(*element).first->c_str() : nullptr;
  }

  std::map<std::tuple<const void *, std::string, int64_t>, Described> seen_;
  std::set<std::string> elements_;
};

Descriptions &descriptions() {
  static Descriptions *d = new Descriptions;
  return *d;
}

/// numpy.ndarray once numpy is imported (kept after).
PyTypeObject *numpy_array_type() {
  static PyTypeObject *array = nullptr;
  if (!array)
    array = imported_type("numpy", "ndarray");
  return array;
}

/// `object`.`name` as an int, or false (clearing the error) when it is
/// missing or not an int. `call`: `name` is a method taking no argument.
bool int_attribute(PyObject *object, PyObject *name, bool call,
                   long long &value) {
  PyObject *result = call ? PyObject_CallMethodNoArgs(object, name)
                          : PyObject_GetAttr(object, name);
  if (!result) {
    PyErr_Clear();
    return false;
  }
  int overflow = 0;
  value = PyLong_Check(result) ? PyLong_AsLongLongAndOverflow(result, &overflow)
                               : -1;
  const bool ok = PyLong_Check(result) && !overflow && !PyErr_Occurred();
  Py_DECREF(result);
  PyErr_Clear();
  return ok;
}

/// Whether `object`.`name` (or `name`() when `call`) is True; false too
/// when it is missing.
bool true_attribute(PyObject *object, PyObject *name, bool call) {
  PyObject *result = call ? PyObject_CallMethodNoArgs(object, name)
                          : PyObject_GetAttr(object, name);
  if (!result) {
    PyErr_Clear();
    return false;
  }
  const bool is_true = result == Py_True;
  Py_DECREF(result);
  return is_true;
}

/// A scalar argument: an exact bool, int (within 64 bits) or float, as
/// LaunchArguments converts them.
bool read_scalar(PyObject *value, blocc_arg_v1 &arg) {
  if (PyBool_Check(value)) {
    arg.kind = BLOCC_ARG_INT;
    arg.int_value = value == Py_True;
    arg.description = "bool";
    return true;
  }
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    arg.int_value = PyLong_AsLongLongAndOverflow(value, &overflow);
    arg.kind = BLOCC_ARG_INT;
    arg.description = "int";
    return !overflow;
  }
  if (PyFloat_CheckExact(value)) {
    arg.kind = BLOCC_ARG_FLOAT;
    arg.float_value = PyFloat_AS_DOUBLE(value);
    arg.description = "float";
    return true;
  }
  return false;
}

bool same_element(const char *element, const char *dtype) {
  return element && std::strcmp(element, dtype) == 0;
}

} // namespace

FastArguments::~FastArguments() { release(); }

void FastArguments::release() {
  for (Py_buffer &buffer : buffers_)
    PyBuffer_Release(&buffer);
  buffers_.clear();
}

bool FastArguments::read(const blocc_kernel_v1 &kernel,
                         const std::vector<py::object> &values) {
  const size_t n = kernel.num_params;
  args_.assign(n, blocc_arg_v1{});
  // Reserved: a Py_buffer must not move while it is acquired.
  buffers_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    blocc_arg_v1 &arg = args_[i];
    arg.device = -1;
    const bool read = kernel.params[i].kind == BLOCC_PARAM_POINTER
                          ? read_pointer(kernel.params[i], values[i].ptr(), arg)
                          : read_scalar(values[i].ptr(), arg);
    if (!read) {
      release();
      return false;
    }
  }
  return true;
}

bool FastArguments::read_pointer(const blocc_param_v1 &param, PyObject *value,
                                 blocc_arg_v1 &arg) {
  arg.kind = BLOCC_ARG_POINTER;
  if (value == Py_None) {
    arg.dtype = param.dtype;
    arg.size_bytes = BLOCC_UNKNOWN_SIZE;
    arg.description = "None";
    return true;
  }
  // numpy first: a launch on numpy arrays must not look for torch.
  if (PyTypeObject *array = numpy_array_type();
      array && PyObject_TypeCheck(value, array))
    return read_numpy(param, value, arg);
  if (PyTypeObject *tensor = torch_tensor_type();
      tensor && PyObject_TypeCheck(value, tensor))
    return read_torch(param, value, arg);
  return false;
}

bool FastArguments::read_torch(const blocc_param_v1 &param, PyObject *tensor,
                               blocc_arg_v1 &arg) {
  const Names &name = names();
  PyObject *dtype = PyObject_GetAttr(tensor, name.dtype);
  if (!dtype) {
    PyErr_Clear();
    return false;
  }
  // The descriptions keep every dtype they have seen: the reference
  // dropped here is not the last.
  long long device = -1;
  bool on_device = true_attribute(tensor, name.is_cuda, false);
  if (on_device ? !int_attribute(tensor, name.get_device, true, device)
                : !true_attribute(tensor, name.is_cpu, false)) {
    Py_DECREF(dtype);
    return false;
  }
  const Described &described =
      descriptions().torch(dtype, static_cast<int>(device));
  Py_DECREF(dtype);
  long long pointer = 0, bytes = 0;
  if (!same_element(described.element, param.dtype) ||
      !true_attribute(tensor, name.is_contiguous, true) ||
      !int_attribute(tensor, name.data_ptr, true, pointer) ||
      !int_attribute(tensor, name.nbytes, false, bytes))
    return false;
  if (device >= 0 && torch_device_ < 0)
    torch_device_ = static_cast<int>(device);
  arg.dtype = described.element;
  arg.pointer = reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
  arg.size_bytes = static_cast<uint64_t>(bytes);
  arg.device = static_cast<int32_t>(device);
  arg.description = described.description.c_str();
  return true;
}

bool FastArguments::read_numpy(const blocc_param_v1 &param, PyObject *array,
                               blocc_arg_v1 &arg) {
  Py_buffer &buffer = buffers_.emplace_back();
  if (PyObject_GetBuffer(array, &buffer, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    buffers_.pop_back(); // nothing acquired
    return false;
  }
  const Described &described =
      descriptions().numpy(array, buffer.format, buffer.itemsize);
  if (!same_element(described.element, param.dtype) ||
      !PyBuffer_IsContiguous(&buffer, 'A'))
    return false;
  arg.dtype = described.element;
  arg.pointer = buffer.buf;
  arg.size_bytes = static_cast<uint64_t>(buffer.len);
  arg.read_only = buffer.readonly ? 1 : 0;
  arg.description = described.description.c_str();
  return true;
}

void *torch_current_stream(int device) {
  // torch._C._cuda_getCurrentRawStream(device) is what Triton's launcher
  // calls; builds of torch without it take the public API.
  static PyObject *raw_stream = [] {
    PyObject *torch_c = PyImport_ImportModule("torch._C");
    PyObject *accessor =
        torch_c ? PyObject_GetAttrString(torch_c, "_cuda_getCurrentRawStream")
                : nullptr;
    Py_XDECREF(torch_c);
    PyErr_Clear();
    return accessor; // kept: never released
  }();
  py::object stream;
  if (raw_stream)
    stream = py::reinterpret_steal<py::object>(
        PyObject_CallOneArg(raw_stream, py::int_(device).ptr()));
  else
    stream = py::module_::import("torch")
                 .attr("cuda")
                 .attr("current_stream")(device)
                 .attr("cuda_stream");
  if (!stream)
    throw py::error_already_set();
  void *handle = PyLong_AsVoidPtr(stream.ptr());
  if (PyErr_Occurred())
    throw py::error_already_set();
  return handle;
}

} // namespace blocc::python
