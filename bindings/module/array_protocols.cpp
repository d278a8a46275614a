#include "array_protocols.h"

#include "runtime/cuda/device.h"

#include <cstring>
#include <stdexcept>

namespace py = pybind11;

namespace blocc::python {

namespace {

/// The blocc element type of a signed or unsigned integer, float or bool of
/// `bytes` bytes, or nullopt.
std::optional<std::string> sized_element(char kind, size_t bytes) {
  const int bits = static_cast<int>(bytes * 8);
  switch (kind) {
  case 'i':
    if (bits == 8 || bits == 16 || bits == 32 || bits == 64)
      return "i" + std::to_string(bits);
    break;
  case 'u':
    if (bits == 8 || bits == 16 || bits == 32 || bits == 64)
      return "u" + std::to_string(bits);
    break;
  case 'f':
    if (bits == 16 || bits == 32 || bits == 64)
      return "f" + std::to_string(bits);
    break;
  case 'b':
    if (bits == 8)
      return std::string("i1");
    break;
  }
  return std::nullopt;
}

} // namespace

/// The element type of a buffer whose struct-module format is `format`.
std::optional<std::string> buffer_element(const char *format, size_t itemsize) {
  std::string f = format ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<'))
    f.erase(0, 1);
  if (f.size() != 1)
    return std::nullopt;
  const char c = f[0];
  if (c == '?')
    return sized_element('b', itemsize);
  if (std::strchr("bhilqn", c))
    return sized_element('i', itemsize);
  if (std::strchr("BHILQN", c))
    return sized_element('u', itemsize);
  if (std::strchr("efd", c))
    return sized_element('f', itemsize);
  return std::nullopt;
}

namespace {

/// "(8,)", "(80, 4)": strides as Python prints a tuple.
std::string tuple_text(const std::vector<int64_t> &values) {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + (values.size() == 1 ? ",)" : ")");
}

/// Whether an array of `shape` with byte `strides` is dense in C or
/// Fortran order (dimensions of one element may have any stride).
bool dense(const std::vector<int64_t> &shape,
           const std::vector<int64_t> &strides, int64_t itemsize) {
  const auto dense_in = [&](bool c_order) {
    int64_t expected = itemsize;
    const size_t n = shape.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t d = c_order ? n - 1 - k : k;
      if (shape[d] == 1)
        continue;
      if (strides[d] != expected)
        return false;
      expected *= shape[d];
    }
    return true;
  };
  for (int64_t extent : shape)
    if (extent == 0)
      return true;
  return dense_in(true) || dense_in(false);
}

int64_t element_count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

void view_buffer(const py::object &value, Py_buffer *b, ArrayView &view) {
  if (PyObject_GetBuffer(value.ptr(), b, PyBUF_STRIDES | PyBUF_FORMAT) != 0)
    throw py::error_already_set();
  view.pointer = b->buf;
  view.size_bytes = static_cast<uint64_t>(b->len);
  view.element = buffer_element(b->format, static_cast<size_t>(b->itemsize));
  view.element_text = b->format ? b->format : "B";
  view.read_only = b->readonly != 0;
  view.contiguous = PyBuffer_IsContiguous(b, 'A') != 0;
  if (!view.contiguous)
    view.strides =
        tuple_text(std::vector<int64_t>(b->strides, b->strides + b->ndim));
  std::string dtype = view.element_text;
  if (py::hasattr(value, "dtype"))
    dtype = py::str(value.attr("dtype"));
  view.description = type_name(value) + "[" + dtype + "]";
}

} // namespace

/// torch.dtype's name ("float32", from "torch.float32") as a blocc type.
std::optional<std::string> torch_element(const std::string &name) {
  static const std::pair<const char *, const char *> names[] = {
      {"bool", "i1"},           {"int8", "i8"},
      {"uint8", "u8"},          {"int16", "i16"},
      {"uint16", "u16"},        {"int32", "i32"},
      {"uint32", "u32"},        {"int64", "i64"},
      {"uint64", "u64"},        {"float16", "f16"},
      {"bfloat16", "bf16"},     {"float32", "f32"},
      {"float64", "f64"},       {"float8_e4m3fn", "f8e4m3"},
      {"float8_e5m2", "f8e5m2"}};
  for (const auto &[torch, blocc] : names)
    if (name == torch)
      return std::string(blocc);
  return std::nullopt;
}

namespace {

bool is_torch_tensor(const py::object &value) {
  PyTypeObject *tensor = torch_tensor_type();
  return tensor && PyObject_TypeCheck(value.ptr(), tensor);
}

void view_torch(const py::object &t, ArrayView &view) {
  std::string dtype = py::str(t.attr("dtype"));
  if (dtype.rfind("torch.", 0) == 0)
    dtype.erase(0, 6);
  py::object device = t.attr("device");
  const std::string device_type = py::str(device.attr("type"));
  view.torch = true;
  view.pointer =
      reinterpret_cast<void *>(t.attr("data_ptr")().cast<uintptr_t>());
  view.size_bytes = t.attr("numel")().cast<uint64_t>() *
                    t.attr("element_size")().cast<uint64_t>();
  view.element = torch_element(dtype);
  view.element_text = dtype;
  view.contiguous = t.attr("is_contiguous")().cast<bool>();
  if (!view.contiguous) {
    std::vector<int64_t> strides;
    const int64_t itemsize = t.attr("element_size")().cast<int64_t>();
    for (py::handle s : t.attr("stride")())
      strides.push_back(s.cast<int64_t>() * itemsize);
    view.strides = tuple_text(strides);
  }
  view.description = "torch.Tensor[" + dtype + "]";
  if (device_type == "cuda") {
    view.device = device.attr("index").is_none()
                      ? cuda::current_device()
                      : device.attr("index").cast<int>();
    view.description += " on cuda:" + std::to_string(view.device);
  } else if (device_type != "cpu") {
    throw std::runtime_error(view.description + " is on device '" +
                             device_type +
                             "'; blocc takes CPU and CUDA tensors");
  }
}

// DLPack's C structs (dlpack.h): the tensor of v0.x "dltensor" capsules,
// what every producer exports when __dlpack__ is called without
// max_version, and of 1.x "dltensor_versioned" capsules, which add a
// version and flags (read-only among them).
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLPackFlagReadOnly = 1;
constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::optional<std::string> dlpack_element(const DLDataType &t,
                                          std::string &text) {
  static const char *const codes[] = {"int",    "uint",    "float", "handle",
                                      "bfloat", "complex", "bool"};
  text = (t.code < 7 ? std::string(codes[t.code])
                     : "code " + std::to_string(t.code)) +
         std::to_string(t.bits) +
         (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
  if (t.lanes != 1 || t.bits % 8)
    return std::nullopt;
  switch (t.code) {
  case 0:
    return sized_element('i', t.bits / 8);
  case 1:
    return sized_element('u', t.bits / 8);
  case 2:
    return sized_element('f', t.bits / 8);
  case 4:
    return t.bits == 16 ? std::optional<std::string>("bf16") : std::nullopt;
  case 6:
    return sized_element('b', t.bits / 8);
  }
  return std::nullopt;
}

void view_dlpack(const py::object &value, uintptr_t stream, ArrayView &view,
                 ArrayKeepAlive &keep) {
  py::tuple where = value.attr("__dlpack_device__")();
  const int32_t device_type = where[0].cast<int32_t>();
  const bool on_gpu = device_type == kDLCUDA || device_type == kDLCUDAManaged;
  if (!on_gpu && device_type != kDLCPU && device_type != kDLCUDAHost)
    throw std::runtime_error(
        type_name(value) + " is a DLPack array on device type " +
        std::to_string(device_type) + "; blocc takes CPU and CUDA memory");
  // A CUDA producer orders its work before `stream` (1: the legacy
  // default stream); a CPU producer takes no stream.
  py::dict arguments;
  if (on_gpu)
    arguments["stream"] = py::int_(stream);
  // DLPack 1.0 first, for its read-only flag (numpy exports a read-only
  // array only so), and no copy, whose writes the caller would never see;
  // producers that predate it refuse the keywords with a TypeError.
  py::dict versioned;
  for (auto item : arguments)
    versioned[item.first] = item.second;
  versioned["max_version"] = py::make_tuple(1, 0);
  versioned["copy"] = false;
  py::object capsule;
  try {
    capsule = value.attr("__dlpack__")(**versioned);
  } catch (py::error_already_set &e) {
    if (!e.matches(PyExc_TypeError))
      throw;
    capsule = value.attr("__dlpack__")(**arguments);
  }
  keep.keep(capsule); // borrowed: its destructor gives the tensor back
  const DLTensor *tensor = nullptr;
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned")) {
    auto *managed = static_cast<DLManagedTensorVersioned *>(
        PyCapsule_GetPointer(capsule.ptr(), "dltensor_versioned"));
    if (managed->version.major != 1)
      throw std::runtime_error(type_name(value) + " exported DLPack " +
                               std::to_string(managed->version.major) + "." +
                               std::to_string(managed->version.minor) +
                               " when asked for at most 1.0");
    view.read_only = (managed->flags & kDLPackFlagReadOnly) != 0;
    tensor = &managed->dl_tensor;
  } else {
    auto *managed = static_cast<DLManagedTensor *>(
        PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (!managed)
      throw py::error_already_set();
    tensor = &managed->dl_tensor;
  }
  const DLTensor &t = *tensor;
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  const int64_t itemsize = (t.dtype.bits * t.dtype.lanes + 7) / 8;
  view.element = dlpack_element(t.dtype, view.element_text);
  view.pointer = static_cast<char *>(t.data) + t.byte_offset;
  view.size_bytes = static_cast<uint64_t>(element_count(shape) * itemsize);
  if (t.strides) {
    std::vector<int64_t> strides;
    for (int32_t d = 0; d < t.ndim; ++d)
      strides.push_back(t.strides[d] * itemsize);
    view.contiguous = dense(shape, strides, itemsize);
    if (!view.contiguous)
      view.strides = tuple_text(strides);
  }
  view.device =
      t.device.device_type == kDLCUDA || t.device.device_type == kDLCUDAManaged
          ? t.device.device_id
          : -1;
  view.description =
      type_name(value) + "[" + view.element_text + "]" +
      (view.device >= 0 ? " on cuda:" + std::to_string(view.device)
                        : std::string());
}

void view_cuda_array(const py::object &value, ArrayView &view) {
  py::dict cai = value.attr("__cuda_array_interface__");
  const auto field = [&](const char *name) -> py::object {
    if (!cai.contains(name))
      throw std::runtime_error(
          type_name(value) + ".__cuda_array_interface__ has no '" + name + "'");
    return cai[name];
  };
  const std::string typestr = py::str(field("typestr"));
  py::tuple data = field("data");
  std::vector<int64_t> shape;
  for (py::handle extent : py::tuple(field("shape")))
    shape.push_back(extent.cast<int64_t>());
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw std::runtime_error(type_name(value) +
                             " is a masked array; blocc takes plain arrays");
  if (typestr.size() < 3 || typestr[0] == '>')
    throw std::runtime_error(type_name(value) + ": typestr '" + typestr +
                             "' is not a little-endian element type");
  const int64_t itemsize = std::stoll(typestr.substr(2));
  view.element_text = typestr;
  view.element = sized_element(typestr[1], static_cast<size_t>(itemsize));
  view.pointer = reinterpret_cast<void *>(data[0].cast<uintptr_t>());
  view.read_only = data[1].cast<bool>();
  view.size_bytes = static_cast<uint64_t>(element_count(shape) * itemsize);
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::vector<int64_t> strides;
    for (py::handle s : py::tuple(cai["strides"]))
      strides.push_back(s.cast<int64_t>());
    view.contiguous = dense(shape, strides, itemsize);
    if (!view.contiguous)
      view.strides = tuple_text(strides);
  }
  if (cai.contains("stream") && !cai["stream"].is_none())
    view.producer_stream = cai["stream"].cast<uintptr_t>();
  view.description = type_name(value) + "[" + typestr + "]";
  // Elements blocc has no type for are the mistake to report, whatever the
  // memory: asking the driver first would report its failure instead.
  if (!view.element)
    return;
  // The interface does not say which GPU: the driver does (an empty
  // array may have no memory to ask about).
  view.device = view.pointer ? cuda::device_of_pointer(view.pointer)
                             : cuda::current_device();
  view.description += " on cuda:" + std::to_string(view.device);
}

} // namespace

PyTypeObject *imported_type(const char *module, const char *name) {
  PyObject *loaded = PyDict_GetItemString(PyImport_GetModuleDict(), module);
  if (!loaded)
    return nullptr;
  PyObject *type = PyObject_GetAttrString(loaded, name);
  if (!type || !PyType_Check(type)) {
    PyErr_Clear();
    Py_XDECREF(type);
    return nullptr;
  }
  return reinterpret_cast<PyTypeObject *>(type); // kept: never released
}

PyTypeObject *torch_tensor_type() {
  static PyTypeObject *tensor = nullptr;
  if (!tensor)
    tensor = imported_type("torch", "Tensor");
  return tensor;
}

std::string type_name(const py::handle &value) {
  py::handle type = py::type::handle_of(value);
  std::string module = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

ArrayKeepAlive::~ArrayKeepAlive() {
  for (auto &buffer : buffers_)
    PyBuffer_Release(buffer.get());
}

Py_buffer *ArrayKeepAlive::new_buffer() {
  return buffers_.emplace_back(std::make_unique<Py_buffer>()).get();
}

bool view_array(const py::object &value, uintptr_t dlpack_stream,
                ArrayView &view, ArrayKeepAlive &keep) {
  if (PyObject_CheckBuffer(value.ptr())) {
    // Zeroed: a failed PyObject_GetBuffer leaves nothing to release.
    view_buffer(value, keep.new_buffer(), view);
    return true;
  }
  if (is_torch_tensor(value)) {
    view_torch(value, view);
    return true;
  }
  if (py::hasattr(value, "__dlpack__") &&
      py::hasattr(value, "__dlpack_device__")) {
    view_dlpack(value, dlpack_stream, view, keep);
    return true;
  }
  if (py::hasattr(value, "__cuda_array_interface__")) {
    view_cuda_array(value, view);
    return true;
  }
  return false;
}

} // namespace blocc::python
