// A stand-in for libcuda.so.1 that does nothing: every entry point blocc
// resolves (runtime/cuda/driver_api.cpp) succeeds at once. Device memory is
// host memory (malloc), copies are memcpy, modules accept any image,
// launches return without running anything, and the one device reports
// H100-like attributes. Loaded with BLOCC_CUDA_DRIVER=<this library>, it
// lets blocc's own host cost of a launch be measured on a machine without
// a GPU (blocc_bench_gpu_launch --launch-only --no-check). Results of
// kernels are never computed: nothing may check them.
#include <cstdlib>
#include <cstring>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;

// Distinct non-null handles.
int context_object, module_object, function_object, stream_object, event_object;
void *const kContext = &context_object;

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int *version) {
  *version = 12080;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult, const char **name) {
  *name = "CUDA_ERROR_FAKE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult, const char **text) {
  *text = "an error of the fake CUDA driver";
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "fake H100 (blocc tests)", length);
  if (length > 0)
    name[length - 1] = '\0';
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 5: // MAX_GRID_DIM_X
    *value = 2147483647;
    break;
  case 6: // MAX_GRID_DIM_Y
  case 7: // MAX_GRID_DIM_Z
    *value = 65535;
    break;
  case 16: // MULTIPROCESSOR_COUNT
    *value = 132;
    break;
  case 75: // COMPUTE_CAPABILITY_MAJOR
    *value = 9;
    break;
  case 76: // COMPUTE_CAPABILITY_MINOR
    *value = 0;
    break;
  case 97: // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    *value = 232448;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  *context = kContext;
  return kSuccess;
}
CUresult cuCtxGetCurrent(void **context) {
  *context = kContext;
  return kSuccess;
}
CUresult cuCtxGetDevice(int *device) {
  *device = 0;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(void *) { return kSuccess; }
CUresult cuCtxPopCurrent_v2(void **context) {
  if (context)
    *context = kContext;
  return kSuccess;
}
CUresult cuCtxSynchronize() { return kSuccess; }
CUresult cuCtxGetId(void *, unsigned long long *id) {
  *id = 1;
  return kSuccess;
}
CUresult cuStreamCreate(void **stream, unsigned) {
  *stream = &stream_object;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *) { return kSuccess; }
CUresult cuStreamGetCtx(void *, void **context) {
  *context = kContext;
  return kSuccess;
}
CUresult cuStreamQuery(void *) { return kSuccess; }
CUresult cuStreamSynchronize(void *) { return kSuccess; }
CUresult cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  void *p = std::malloc(bytes ? bytes : 1);
  if (!p)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *pointer = reinterpret_cast<unsigned long long>(p);
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long pointer) {
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(unsigned long long destination, const void *source,
                         size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(destination), source, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *destination, unsigned long long source,
                         size_t bytes) {
  std::memcpy(destination, reinterpret_cast<const void *>(source), bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoD_v2(unsigned long long destination,
                         unsigned long long source, size_t bytes) {
  std::memmove(reinterpret_cast<void *>(destination),
               reinterpret_cast<const void *>(source), bytes);
  return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long destination, unsigned char value,
                       size_t count) {
  std::memset(reinterpret_cast<void *>(destination), value, count);
  return kSuccess;
}
CUresult cuMemsetD8Async(unsigned long long destination, unsigned char value,
                         size_t count, void *) {
  return cuMemsetD8_v2(destination, value, count);
}
CUresult cuPointerGetAttribute(void *data, int attribute, unsigned long long) {
  if (attribute == 1) // CONTEXT
    *static_cast<void **>(data) = kContext;
  else if (attribute == 9) // DEVICE_ORDINAL
    *static_cast<int *>(data) = 0;
  else
    return kInvalidValue;
  return kSuccess;
}
CUresult cuModuleLoadDataEx(void **module, const void *, unsigned, int *,
                            void **) {
  *module = &module_object;
  return kSuccess;
}
CUresult cuModuleGetFunction(void **function, void *, const char *) {
  *function = &function_object;
  return kSuccess;
}
CUresult cuFuncSetAttribute(void *, int, int) { return kSuccess; }
// A zeroed block for every module global (the fault record reads zeros:
// no fault).
CUresult cuModuleGetGlobal_v2(unsigned long long *pointer, size_t *bytes,
                              void *, const char *) {
  static unsigned long long globals[64];
  *pointer = reinterpret_cast<unsigned long long>(globals);
  *bytes = sizeof globals;
  return kSuccess;
}
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *, void **,
                        void **) {
  return kSuccess;
}
CUresult cuEventCreate(void **event, unsigned) {
  *event = &event_object;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *) { return kSuccess; }
CUresult cuEventRecord(void *, void *) { return kSuccess; }
CUresult cuEventSynchronize(void *) { return kSuccess; }
CUresult cuEventElapsedTime(float *milliseconds, void *, void *) {
  *milliseconds = 0;
  return kSuccess;
}

} // extern "C"
