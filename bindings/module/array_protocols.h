// Reading an array argument's memory through whichever protocol its object
// implements, without copying it:
//
//   1. the buffer protocol (numpy, memoryview, array.array): host memory;
//   2. torch.Tensor, by its own accessors (data_ptr(), is_contiguous(), ...)
//      as Triton reads it, so that tensors requiring gradients, bfloat16 and
//      fp8 tensors pass (their DLPack and CUDA array interface exports
//      refuse them); CPU tensors are host memory, CUDA tensors device memory;
//   3. DLPack (__dlpack__ / __dlpack_device__: CuPy, JAX, ...): CPU or CUDA
//      memory, borrowed for the launch (the capsule is kept, not consumed);
//   4. the CUDA array interface (__cuda_array_interface__, versions 2 and
//      3: Numba, CuPy): device memory, its GPU asked of the driver.
//
// Every protocol fills one ArrayView; the launch checks it the same way
// (element type, contiguity, read-only) and hands it to C++ as one
// blocc_arg_v1 whose `device` is -1 for host memory and the CUDA ordinal
// otherwise.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace blocc::python {

/// An array's memory as a launch sees it.
struct ArrayView {
  void *pointer = nullptr;
  uint64_t size_bytes = 0;
  std::optional<std::string> element; // "f32"; nullopt: no blocc type
  std::string element_text;           // the producer's name of its type
  bool read_only = false;
  int device = -1; // -1 host memory, else the CUDA ordinal
  bool contiguous = true;
  std::string strides; // "(8,)" in bytes, for messages about contiguity
  bool torch = false;  // a torch.Tensor (launches take torch's stream)
  // The CUDA array interface's producer stream (version 3), which must be
  // waited for unless the launch runs on it.
  std::optional<uintptr_t> producer_stream;
  // "numpy.ndarray[float32]", "torch.Tensor[float32] on cuda:0"
  std::string description;
};

/// Objects a launch must keep until it returns: acquired buffers (released
/// by the destructor, under the GIL) and DLPack capsules.
class ArrayKeepAlive {
public:
  ArrayKeepAlive() = default;
  ~ArrayKeepAlive();
  ArrayKeepAlive(const ArrayKeepAlive &) = delete;
  ArrayKeepAlive &operator=(const ArrayKeepAlive &) = delete;

  Py_buffer *new_buffer();
  void keep(pybind11::object object) { objects_.push_back(std::move(object)); }

private:
  std::vector<std::unique_ptr<Py_buffer>> buffers_;
  std::vector<pybind11::object> objects_;
};

/// Fills `view` from the first protocol `value` implements and returns
/// true; false when it implements none. `dlpack_stream` is what a CUDA
/// DLPack producer is told the launch runs on (its __dlpack__(stream=)).
/// Raises (pybind11::error_already_set, or a std::runtime_error whose text
/// says what is wrong with the object) when a protocol's data is malformed.
bool view_array(const pybind11::object &value, uintptr_t dlpack_stream,
                ArrayView &view, ArrayKeepAlive &keep);

/// The blocc element type ("f32") of a buffer whose struct-module format
/// is `format` and whose elements have `itemsize` bytes, or nullopt.
std::optional<std::string> buffer_element(const char *format, size_t itemsize);

/// The blocc element type of a torch.dtype named `name` ("float32", from
/// "torch.float32"), or nullopt.
std::optional<std::string> torch_element(const std::string &name);

/// `module`.`name` (a type) once `module` is imported, else nullptr: read
/// from sys.modules without importing, since a launch on numpy arrays must
/// not import torch. The caller keeps the type found (a new reference).
PyTypeObject *imported_type(const char *module, const char *name);

/// torch.Tensor, once torch is imported (looked up until then, kept after).
PyTypeObject *torch_tensor_type();

/// How messages show a Python value's type: "numpy.ndarray", "int".
std::string type_name(const pybind11::handle &value);

} // namespace blocc::python
