// Python values turned into a kernel's C arguments (blocc/kernel_abi.h),
// without copying arrays:
//
// - pointer parameters take arrays (array_protocols.h: the buffer protocol,
//   torch.Tensor, DLPack, the CUDA array interface): their memory, its
//   extent (for checked mode), its device, and its element type, which must
//   be the parameter's. Read-only arrays are marked read-only (a kernel
//   that stores through one is an error, before it runs). An array must be
//   contiguous (C or Fortran order): a kernel addresses memory from the
//   first element. None is a null pointer.
// - scalar and constant parameters take bool, int, float and whatever
//   implements __index__ (integers) or __float__ (numpy scalars).
//
// The device is the arrays': host memory runs on a host backend, CUDA
// memory on the GPU it lives on; the C++ side rejects launches mixing
// them, or mixing GPUs.
//
// Every mistake raises blocc.Error naming the kernel and the argument.
#pragma once

#include "array_protocols.h"
#include "blocc/kernel_abi.h"

#include <pybind11/pybind11.h>

#include <deque>
#include <string>
#include <vector>

namespace blocc::python {

/// "kernel 'add', argument 3 'out' (bl::Ptr<f32>)", as the C++ side says it.
std::string argument_label(const blocc_kernel_v1 &kernel, size_t index);

class LaunchArguments {
public:
  /// Converts `values` (one per parameter of `kernel`, in order) for a
  /// launch on `stream` (the launch's stream= handle; 0: none given).
  /// Holds the arrays until destroyed; needs the GIL for both.
  LaunchArguments(const blocc_kernel_v1 &kernel,
                  const std::vector<pybind11::object> &values,
                  uintptr_t stream);
  LaunchArguments(const LaunchArguments &) = delete;
  LaunchArguments &operator=(const LaunchArguments &) = delete;

  const blocc_arg_v1 *data() const { return args_.data(); }
  size_t size() const { return args_.size(); }
  /// The GPU of the first torch CUDA tensor among the arguments, or -1:
  /// a launch given no stream= runs on torch's current stream there.
  int torch_device() const { return torch_device_; }
  /// Waits (without the GIL) for the streams CUDA array interface
  /// producers named, unless the launch runs on them (`stream`: its
  /// handle, 0 for the default stream).
  void wait_for_producers(uintptr_t stream) const;

private:
  blocc_arg_v1 pointer_argument(size_t index, const pybind11::object &value,
                                uintptr_t stream);
  blocc_arg_v1 scalar_argument(size_t index, const pybind11::object &value);
  const char *keep(std::string s) {
    return strings_.emplace_back(std::move(s)).c_str();
  }

  const blocc_kernel_v1 &kernel_;
  std::vector<blocc_arg_v1> args_;
  std::deque<std::string> strings_;
  ArrayKeepAlive arrays_;
  int torch_device_ = -1;
  std::vector<uintptr_t> producer_streams_;
};

} // namespace blocc::python
