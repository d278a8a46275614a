#include "runtime/cuda/loaded_kernel.h"

#include "ir/error.h"
#include "runtime/cuda/context.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace blocc::cuda {

using namespace driver;

namespace {

/// The log the JIT compiler left in `buffer` (empty when none).
std::string log_text(const std::vector<char> &buffer) {
  std::string text(buffer.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// The largest grid along x, y, z of the device of the current context.
std::array<int64_t, 3> grid_limits(const std::string &what) {
  const Api &a = api();
  CUdevice device = 0;
  check(a.cuCtxGetDevice(&device), "cuCtxGetDevice", what);
  std::array<int64_t, 3> limits{};
  const int attributes[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                             CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int axis = 0; axis < 3; ++axis) {
    int value = 0;
    check(a.cuDeviceGetAttribute(&value, attributes[axis], device),
          "cuDeviceGetAttribute", what);
    limits[axis] = value;
  }
  return limits;
}

} // namespace

LoadedKernel::LoadedKernel(std::string name, std::string ptx,
                           std::string symbol)
    : name_(std::move(name)), ptx_(std::move(ptx)), symbol_(std::move(symbol)) {
}

CUfunction LoadedKernel::function_in(CUcontext context) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = functions_.find(context);
  if (it != functions_.end())
    return it->second;
  const Api &a = api();
  const std::string what = "kernel '" + name_ + "'";
  std::vector<char> error_log(16384, '\0'), info_log(16384, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      error_log.data(), reinterpret_cast<void *>(error_log.size() - 1),
      info_log.data(), reinterpret_cast<void *>(info_log.size() - 1)};
  CUmodule module = nullptr;
  CUresult loaded =
      a.cuModuleLoadDataEx(&module, ptx_.c_str(), 4, options, values);
  if (loaded != CUDA_SUCCESS) {
    std::string log = log_text(error_log);
    throw Error(what + ": cuModuleLoadDataEx failed: " + describe(loaded) +
                (log.empty() ? std::string()
                             : "; the driver's PTX compiler said:\n" + log));
  }
  // The module stays loaded for the life of the process (like the
  // context it lives in); kernels are few and small.
  CUfunction function = nullptr;
  check(a.cuModuleGetFunction(&function, module, symbol_.c_str()),
        "cuModuleGetFunction", what);
  functions_.emplace(context, function);
  return function;
}

void LoadedKernel::launch(CUcontext context, const LaunchShape &shape,
                          void **parameters) const {
  const std::string what = "kernel '" + name_ + "'";
  ContextScope scope(context);
  std::array<int64_t, 3> limits = grid_limits(what);
  static const char *axes[3] = {"x (axis 0)", "y (axis 1)", "z (axis 2)"};
  for (int axis = 0; axis < 3; ++axis)
    if (shape.grid[axis] > limits[axis])
      throw Error(what + ": the grid has " + std::to_string(shape.grid[axis]) +
                  " programs along " + axes[axis] +
                  ", more than the GPU's "
                  "limit of " +
                  std::to_string(limits[axis]) +
                  "; give each program more work (a larger block) or move "
                  "programs to another grid axis");
  CUfunction function = function_in(context);
  check(api().cuLaunchKernel(function, static_cast<unsigned>(shape.grid[0]),
                             static_cast<unsigned>(shape.grid[1]),
                             static_cast<unsigned>(shape.grid[2]),
                             static_cast<unsigned>(shape.threads), 1, 1,
                             shape.shared_bytes, nullptr, parameters, nullptr),
        "cuLaunchKernel", what);
}

CUcontext context_of_pointer(uint64_t address, const std::string &what) {
  CUcontext context = nullptr;
  check(api().cuPointerGetAttribute(&context, CU_POINTER_ATTRIBUTE_CONTEXT,
                                    address),
        "cuPointerGetAttribute", what);
  return context;
}

} // namespace blocc::cuda
