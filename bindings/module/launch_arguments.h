// Python values turned into a kernel's C arguments (blocc/kernel_abi.h),
// without copying arrays:
//
// - pointer parameters take any object with the buffer protocol (numpy
//   arrays, memoryview, array.array, bytearray): the array's memory, its
//   extent (for checked mode) and its element type, which must be the
//   parameter's. Read-only arrays are marked read-only (a kernel that
//   stores through one is an error, before it runs). The array must be
//   contiguous (C or Fortran order): a kernel addresses memory from the
//   first element. None is a null pointer.
// - scalar and constant parameters take bool, int, float and whatever
//   implements __index__ (integers) or __float__ (numpy scalars).
//
// Where the array's memory is, is the device: host memory for the buffer
// protocol. The GPU protocols (__cuda_array_interface__, __dlpack__) are
// recognized and refused with a clear message until the GPU bindings land;
// they fill the same blocc_arg_v1, with `device` >= 0, and the C++ side
// rejects launches mixing devices.
//
// Every mistake raises blocc.Error naming the kernel and the argument.
#pragma once

#include "blocc/kernel_abi.h"

#include <pybind11/pybind11.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace blocc::python {

/// "kernel 'add', argument 3 'out' (bl::Ptr<f32>)", as the C++ side says it.
std::string argument_label(const blocc_kernel_v1 &kernel, size_t index);

class LaunchArguments {
public:
  /// Converts `values` (one per parameter of `kernel`, in order). Holds the
  /// arrays' buffers until destroyed; needs the GIL for both.
  LaunchArguments(const blocc_kernel_v1 &kernel,
                  const std::vector<pybind11::object> &values);
  ~LaunchArguments();
  LaunchArguments(const LaunchArguments &) = delete;
  LaunchArguments &operator=(const LaunchArguments &) = delete;

  const blocc_arg_v1 *data() const { return args_.data(); }
  size_t size() const { return args_.size(); }

private:
  blocc_arg_v1 pointer_argument(size_t index, const pybind11::object &value);
  blocc_arg_v1 scalar_argument(size_t index, const pybind11::object &value);
  const char *keep(std::string s) {
    return strings_.emplace_back(std::move(s)).c_str();
  }

  const blocc_kernel_v1 &kernel_;
  std::vector<blocc_arg_v1> args_;
  std::deque<std::string> strings_;
  std::vector<std::unique_ptr<Py_buffer>> buffers_;
};

} // namespace blocc::python
