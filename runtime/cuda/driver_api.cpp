#include "runtime/cuda/driver_api.h"

#include "ir/error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace blocc::cuda::driver {

namespace {

/// The outcome of the one attempt to load the driver.
struct Loaded {
  Api api{};
  bool ok = false;
  std::string failure; // why not, when !ok
};

template <typename F> bool resolve(void *library, const char *symbol, F &f) {
  f = reinterpret_cast<F>(dlsym(library, symbol));
  return f != nullptr;
}

Loaded load() {
  Loaded loaded;
  const char *override_path = std::getenv("BLOCC_CUDA_DRIVER");
  std::string path =
      override_path && *override_path ? override_path : "libcuda.so.1";
  // Never unloaded: modules and contexts live as long as the process.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    loaded.failure = "the CUDA driver library " + path +
                     " could not be loaded (" + (why ? why : "unknown") +
                     "); GPU kernels need an NVIDIA GPU and its driver. "
                     "Kernels on host memory run on the CPU backend or the "
                     "interpreter without it";
    return loaded;
  }
  Api &a = loaded.api;
  struct Entry {
    const char *symbol;
    bool found;
  };
  const Entry entries[] = {
      {"cuInit", resolve(library, "cuInit", a.cuInit)},
      {"cuDriverGetVersion",
       resolve(library, "cuDriverGetVersion", a.cuDriverGetVersion)},
      {"cuGetErrorName", resolve(library, "cuGetErrorName", a.cuGetErrorName)},
      {"cuGetErrorString",
       resolve(library, "cuGetErrorString", a.cuGetErrorString)},
      {"cuDeviceGetCount",
       resolve(library, "cuDeviceGetCount", a.cuDeviceGetCount)},
      {"cuDeviceGet", resolve(library, "cuDeviceGet", a.cuDeviceGet)},
      {"cuDeviceGetName",
       resolve(library, "cuDeviceGetName", a.cuDeviceGetName)},
      {"cuDeviceGetAttribute",
       resolve(library, "cuDeviceGetAttribute", a.cuDeviceGetAttribute)},
      {"cuDevicePrimaryCtxRetain", resolve(library, "cuDevicePrimaryCtxRetain",
                                           a.cuDevicePrimaryCtxRetain)},
      {"cuCtxGetCurrent",
       resolve(library, "cuCtxGetCurrent", a.cuCtxGetCurrent)},
      {"cuCtxGetDevice", resolve(library, "cuCtxGetDevice", a.cuCtxGetDevice)},
      {"cuCtxPushCurrent_v2",
       resolve(library, "cuCtxPushCurrent_v2", a.cuCtxPushCurrent)},
      {"cuCtxPopCurrent_v2",
       resolve(library, "cuCtxPopCurrent_v2", a.cuCtxPopCurrent)},
      {"cuCtxSynchronize",
       resolve(library, "cuCtxSynchronize", a.cuCtxSynchronize)},
      {"cuStreamCreate", resolve(library, "cuStreamCreate", a.cuStreamCreate)},
      {"cuStreamDestroy_v2",
       resolve(library, "cuStreamDestroy_v2", a.cuStreamDestroy)},
      {"cuStreamGetCtx", resolve(library, "cuStreamGetCtx", a.cuStreamGetCtx)},
      {"cuStreamQuery", resolve(library, "cuStreamQuery", a.cuStreamQuery)},
      {"cuStreamSynchronize",
       resolve(library, "cuStreamSynchronize", a.cuStreamSynchronize)},
      {"cuMemAlloc_v2", resolve(library, "cuMemAlloc_v2", a.cuMemAlloc)},
      {"cuMemFree_v2", resolve(library, "cuMemFree_v2", a.cuMemFree)},
      {"cuMemcpyHtoD_v2", resolve(library, "cuMemcpyHtoD_v2", a.cuMemcpyHtoD)},
      {"cuMemcpyDtoH_v2", resolve(library, "cuMemcpyDtoH_v2", a.cuMemcpyDtoH)},
      {"cuMemcpyDtoD_v2", resolve(library, "cuMemcpyDtoD_v2", a.cuMemcpyDtoD)},
      {"cuMemsetD8_v2", resolve(library, "cuMemsetD8_v2", a.cuMemsetD8)},
      {"cuMemsetD8Async",
       resolve(library, "cuMemsetD8Async", a.cuMemsetD8Async)},
      {"cuPointerGetAttribute",
       resolve(library, "cuPointerGetAttribute", a.cuPointerGetAttribute)},
      {"cuModuleLoadDataEx",
       resolve(library, "cuModuleLoadDataEx", a.cuModuleLoadDataEx)},
      {"cuModuleGetFunction",
       resolve(library, "cuModuleGetFunction", a.cuModuleGetFunction)},
      {"cuFuncSetAttribute",
       resolve(library, "cuFuncSetAttribute", a.cuFuncSetAttribute)},
      {"cuModuleGetGlobal_v2",
       resolve(library, "cuModuleGetGlobal_v2", a.cuModuleGetGlobal)},
      {"cuLaunchKernel", resolve(library, "cuLaunchKernel", a.cuLaunchKernel)},
      {"cuEventCreate", resolve(library, "cuEventCreate", a.cuEventCreate)},
      {"cuEventDestroy_v2",
       resolve(library, "cuEventDestroy_v2", a.cuEventDestroy)},
      {"cuEventRecord", resolve(library, "cuEventRecord", a.cuEventRecord)},
      {"cuEventSynchronize",
       resolve(library, "cuEventSynchronize", a.cuEventSynchronize)},
      {"cuEventQuery", resolve(library, "cuEventQuery", a.cuEventQuery)},
      {"cuMemHostAlloc", resolve(library, "cuMemHostAlloc", a.cuMemHostAlloc)},
      {"cuMemHostGetDevicePointer_v2",
       resolve(library, "cuMemHostGetDevicePointer_v2",
               a.cuMemHostGetDevicePointer)},
      {"cuEventElapsedTime",
       resolve(library, "cuEventElapsedTime", a.cuEventElapsedTime)},
  };
  resolve(library, "cuCtxGetId", a.cuCtxGetId); // optional
  resolve(library, "cuTensorMapEncodeTiled",
          a.cuTensorMapEncodeTiled); // optional
  for (const Entry &e : entries) {
    if (!e.found) {
      loaded.failure = "the CUDA driver " + path + " lacks " + e.symbol +
                       " (a driver for CUDA 11 or newer is needed)";
      return loaded;
    }
  }
  CUresult init = a.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char *name = nullptr;
    a.cuGetErrorName(init, &name);
    loaded.failure =
        std::string("the CUDA driver failed to initialize: cuInit returned ") +
        (name ? name : std::to_string(init).c_str()) +
        (init == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable GPU is visible)"
                                      : "");
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

const Loaded &loaded() {
  static const Loaded l = load();
  return l;
}

} // namespace

const Api &api() {
  const Loaded &l = loaded();
  if (!l.ok)
    throw Error("no GPU: " + l.failure);
  return l.api;
}

bool available(std::string *reason) {
  const Loaded &l = loaded();
  if (!l.ok && reason)
    *reason = l.failure;
  return l.ok;
}

std::string describe(CUresult result) {
  const Loaded &l = loaded();
  const char *name = nullptr, *text = nullptr;
  if (l.ok) {
    l.api.cuGetErrorName(result, &name);
    l.api.cuGetErrorString(result, &text);
  }
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void check(CUresult result, const char *call, const std::string &what) {
  if (result == CUDA_SUCCESS)
    return;
  throw Error(what + ": " + call + " failed: " + describe(result));
}

} // namespace blocc::cuda::driver
