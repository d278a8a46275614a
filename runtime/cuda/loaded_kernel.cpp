#include "runtime/cuda/loaded_kernel.h"

#include "ir/error.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/fault_record.h"
#include "runtime/cuda/ptx_assembler.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <iostream>
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

/// The largest grid along x, y, z of the device of the current context
/// (queried when a kernel is loaded there: launches read it from the
/// kernel's per-context entry).
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

/// Warns once per process when the driver's JIT, which compiles the PTX
/// here, has a known miscompile (ptx_assembler.h).
void warn_of_driver_assembler() {
  static std::once_flag once;
  std::call_once(once, [] {
    int version = 0;
    if (api().cuDriverGetVersion(&version) != CUDA_SUCCESS)
      return;
    std::string warning =
        driver_assembler_warning(version, std::getenv("BLOCC_PTXAS"));
    if (!warning.empty())
      std::cerr << warning << std::endl;
  });
}

} // namespace

LoadedKernel::LoadedKernel(std::string name, std::string ptx,
                           std::string symbol, unsigned dynamic_shared_bytes,
                           std::vector<runtime::FaultSite> faults,
                           std::string cubin)
    : name_(std::move(name)), ptx_(std::move(ptx)), symbol_(std::move(symbol)),
      dynamic_shared_bytes_(dynamic_shared_bytes), faults_(std::move(faults)),
      cubin_(std::move(cubin)) {}

void LoadedKernel::enable_dynamic_shared_memory(CUfunction function) const {
  // Up to 48 KB every function may use without opting in.
  constexpr unsigned kWithoutOptIn = 48 * 1024;
  if (dynamic_shared_bytes_ <= kWithoutOptIn)
    return;
  const Api &a = api();
  const std::string what = this->what();
  CUdevice device = 0;
  check(a.cuCtxGetDevice(&device), "cuCtxGetDevice", what);
  int limit = 0;
  check(a.cuDeviceGetAttribute(
            &limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            device),
        "cuDeviceGetAttribute", what);
  if (dynamic_shared_bytes_ > static_cast<unsigned>(limit)) {
    char gpu[256] = {};
    a.cuDeviceGetName(gpu, sizeof gpu, device);
    throw Error(what + " needs " + std::to_string(dynamic_shared_bytes_) +
                " bytes of shared memory per program, more than the " +
                std::to_string(limit) + " bytes GPU " + std::to_string(device) +
                " (" + gpu + ") allows a block; use a smaller block");
  }
  check(a.cuFuncSetAttribute(function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(dynamic_shared_bytes_)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", what);
}

const LoadedKernel::Loaded &LoadedKernel::loaded_in(CUcontext context) const {
  const unsigned long long key = context_key(context);
  const Loaded *last = last_loaded_.load(std::memory_order_acquire);
  if (last && last->context_key == key)
    return *last;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = loaded_.find(key);
  if (it != loaded_.end()) {
    last_loaded_.store(&it->second, std::memory_order_release);
    return it->second;
  }
  const Api &a = api();
  const std::string what = this->what();
  std::vector<char> error_log(16384, '\0'), info_log(16384, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      error_log.data(), reinterpret_cast<void *>(error_log.size() - 1),
      info_log.data(), reinterpret_cast<void *>(info_log.size() - 1)};
  Loaded loaded;
  loaded.context_key = key;
  CUresult result = a.cuModuleLoadDataEx(&loaded.module, module_image().data(),
                                         4, options, values);
  if (result != CUDA_SUCCESS) {
    std::string log = log_text(error_log);
    throw Error(what + ": cuModuleLoadDataEx failed: " + describe(result) +
                (log.empty() ? std::string()
                             : "; the driver's PTX compiler said:\n" + log));
  }
  // The module stays loaded for the life of the process (like the
  // context it lives in); kernels are few and small.
  check(a.cuModuleGetFunction(&loaded.function, loaded.module, symbol_.c_str()),
        "cuModuleGetFunction", what);
  enable_dynamic_shared_memory(loaded.function);
  loaded.grid_limits = grid_limits(what);
  if (!faults_.empty())
    loaded.faults = watch_faults(loaded.module, context, name_, faults_);
  const Loaded &entry = loaded_.emplace(key, loaded).first->second;
  last_loaded_.store(&entry, std::memory_order_release);
  return entry;
}

const std::string &LoadedKernel::module_image() const {
  if (!cubin_.empty())
    return cubin_;
  const std::optional<PtxAssembler> &assembler = ptx_assembler();
  if (!assembler) {
    warn_of_driver_assembler();
    return ptx_;
  }
  if (cubin_.empty())
    cubin_ = assemble_ptx(*assembler, ptx_, what());
  return cubin_;
}

CUfunction LoadedKernel::function_in(CUcontext context) const {
  return loaded_in(context).function;
}

void LoadedKernel::launch(CUcontext context, const LaunchShape &shape,
                          void **parameters, CUstream stream) const {
  report_finished_faults();
  ContextScope scope(context);
  const Loaded &loaded = loaded_in(context);
  const std::array<int64_t, 3> &limits = loaded.grid_limits;
  static const char *axes[3] = {"x (axis 0)", "y (axis 1)", "z (axis 2)"};
  for (int axis = 0; axis < 3; ++axis)
    if (shape.grid[axis] > limits[axis])
      throw Error(what() + ": the grid has " +
                  std::to_string(shape.grid[axis]) + " programs along " +
                  axes[axis] + ", more than the GPU's limit of " +
                  std::to_string(limits[axis]) +
                  "; give each program more work (a larger block) or move "
                  "programs to another grid axis");
  CUresult launched = api().cuLaunchKernel(
      loaded.function, static_cast<unsigned>(shape.grid[0]),
      static_cast<unsigned>(shape.grid[1]),
      static_cast<unsigned>(shape.grid[2]),
      static_cast<unsigned>(shape.threads), 1, 1, dynamic_shared_bytes_, stream,
      parameters, nullptr);
  if (launched != CUDA_SUCCESS)
    check(launched, "cuLaunchKernel", what());
  if (loaded.faults)
    note_launch(*loaded.faults, stream);
}

CUcontext context_of_pointer(uint64_t address, const std::string &kernel) {
  CUcontext context = nullptr;
  CUresult result = api().cuPointerGetAttribute(
      &context, CU_POINTER_ATTRIBUTE_CONTEXT, address);
  if (result != CUDA_SUCCESS)
    check(result, "cuPointerGetAttribute", "kernel '" + kernel + "'");
  return context;
}

} // namespace blocc::cuda

namespace blocc::cuda {

CUcontext context_of_stream(CUstream stream, const std::string &kernel) {
  if (!stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
    return nullptr;
  CUcontext context = nullptr;
  CUresult result = api().cuStreamGetCtx(stream, &context);
  if (result != CUDA_SUCCESS)
    check(result, "cuStreamGetCtx",
          "kernel '" + kernel + "' (is the stream a valid CUstream?)");
  return context;
}

} // namespace blocc::cuda
