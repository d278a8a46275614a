// The launch fast path: a launch's arguments read with the fewest Python
// calls, for the arguments launches pass almost always: numpy arrays, torch
// tensors (CPU or CUDA), None, and exact ints, floats and bools.
//
// A torch tensor costs six C-level attribute reads (dtype, is_cuda, is_cpu
// or get_device, data_ptr, nbytes, is_contiguous) where the general reader
// (array_protocols.h) asks for its device object, its type, its element
// size and more, building strings; a numpy array costs one
// PyObject_GetBuffer. What a launch derives from a dtype or a type (blocc's
// element type, the description messages show) is computed once per dtype
// object and type and kept, so the fast path builds no string.
//
// The fast path reports no mistake: an argument of another kind, or one
// that fails a cheap check (an element type other than the parameter's, a
// non-contiguous array, an int beyond 64 bits), makes it give up, and the
// launch reads every argument again through LaunchArguments, which raises
// the error naming the argument. Arguments it takes are described exactly
// as LaunchArguments describes them, so that errors the C++ side raises
// (a read-only array written, host memory on the GPU) read the same.
#pragma once

#include "blocc/kernel_abi.h"

#include <pybind11/pybind11.h>

#include <vector>

namespace blocc::python {

/// One launch's arguments read through the fast path. Holds the buffers it
/// acquired until destroyed (under the GIL).
class FastArguments {
public:
  FastArguments() = default;
  ~FastArguments();
  FastArguments(const FastArguments &) = delete;
  FastArguments &operator=(const FastArguments &) = delete;

  /// Reads `values` (one per parameter of `kernel`); false, having
  /// released what it acquired, when any argument needs the general path.
  bool read(const blocc_kernel_v1 &kernel,
            const std::vector<pybind11::object> &values);

  const blocc_arg_v1 *data() const { return args_.data(); }
  size_t size() const { return args_.size(); }
  /// The GPU of the first torch CUDA tensor, or -1 (as LaunchArguments).
  int torch_device() const { return torch_device_; }

private:
  bool read_pointer(const blocc_param_v1 &param, PyObject *value,
                    blocc_arg_v1 &arg);
  bool read_torch(const blocc_param_v1 &param, PyObject *tensor,
                  blocc_arg_v1 &arg);
  bool read_numpy(const blocc_param_v1 &param, PyObject *array,
                  blocc_arg_v1 &arg);
  void release();

  std::vector<blocc_arg_v1> args_;
  std::vector<Py_buffer> buffers_;
  int torch_device_ = -1;
};

/// torch's current CUDA stream on `device`, through the accessor Triton
/// uses (torch._C._cuda_getCurrentRawStream, looked up once): one C call
/// instead of torch.cuda.current_stream()'s Python.
void *torch_current_stream(int device);

} // namespace blocc::python
