// The part of the CUDA Driver API blocc calls, declared here and resolved
// at run time from libcuda.so.1 (dlopen on first use), so that blocc builds
// without the CUDA toolkit and loads and runs on machines without a driver.
//
// The declarations mirror the driver's C ABI (cuda.h): opaque handles,
// `CUresult` codes, and the versioned entry points (`cuMemAlloc_v2`, ...)
// that the toolkit's macros name. Only what blocc uses is here. Internal to
// runtime/ and backends/: public headers expose no CUDA types.
#pragma once

#include <cstddef>
#include <string>

namespace blocc::cuda::driver {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// Special stream handles: the legacy default stream and the per-thread
// default stream (the null stream is the legacy one too).
inline const CUstream CU_STREAM_LEGACY = reinterpret_cast<CUstream>(0x1);
inline const CUstream CU_STREAM_PER_THREAD = reinterpret_cast<CUstream>(0x2);
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x1;
constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 0x2;

// CUdevice_attribute values.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute values.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUpointer_attribute values.
constexpr int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;

// CUjit_option values.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// Tensor maps (TMA descriptors, sm_90 and newer): what
// cuTensorMapEncodeTiled writes and a kernel takes by value as a
// `.param .align 64 .b8 [128]`. Opaque: only the driver and the GPU read it.
struct alignas(64) CUtensorMap {
  unsigned long long opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128 && alignof(CUtensorMap) == 64);

// The tensor map enums, by their values in cuda.h (passed as ints).
enum CUtensorMapDataType : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
};
enum CUtensorMapInterleave : int {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_INTERLEAVE_16B = 1,
  CU_TENSOR_MAP_INTERLEAVE_32B = 2,
};
enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};
enum CUtensorMapL2promotion : int {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};
enum CUtensorMapFloatOOBfill : int {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
};

using CuTensorMapEncodeTiled = CUresult (*)(
    CUtensorMap *tensor_map, CUtensorMapDataType data_type, unsigned rank,
    void *global_address, const unsigned long long *global_dims,
    const unsigned long long *global_strides, const unsigned *box_dims,
    const unsigned *element_strides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2_promotion,
    CUtensorMapFloatOOBfill oob_fill);

/// The driver's entry points, resolved by `api()`.
struct Api {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuCtxGetCurrent)(CUcontext *context);
  CUresult (*cuCtxGetDevice)(CUdevice *device);
  CUresult (*cuCtxPushCurrent)(CUcontext context);
  CUresult (*cuCtxPopCurrent)(CUcontext *context);
  CUresult (*cuCtxSynchronize)();
  /// Optional (drivers for CUDA 12.0 and newer): nullptr when missing.
  CUresult (*cuCtxGetId)(CUcontext context, unsigned long long *id);
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext *context);
  CUresult (*cuStreamQuery)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemHostAlloc)(void **pointer, size_t bytes, unsigned flags);
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr *device_pointer,
                                        void *host_pointer, unsigned flags);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void *source,
                           size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *destination, CUdeviceptr source, size_t bytes);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr destination, CUdeviceptr source,
                           size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr destination, unsigned char value,
                         size_t count);
  CUresult (*cuMemsetD8Async)(CUdeviceptr destination, unsigned char value,
                              size_t count, CUstream stream);
  CUresult (*cuPointerGetAttribute)(void *data, int attribute,
                                    CUdeviceptr pointer);
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                 unsigned num_options, int *options,
                                 void **option_values);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *pointer, size_t *bytes,
                                CUmodule module, const char *name);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x,
                             unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream,
                             void **parameters, void **extra);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventQuery)(CUevent event);
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start,
                                 CUevent end);
  /// Optional (drivers for CUDA 12.0 and newer): nullptr when missing, so
  /// that older drivers still run every kernel that takes no tensor map.
  CuTensorMapEncodeTiled cuTensorMapEncodeTiled;
};

/// The driver, loaded and initialized (cuInit) on the first call. Throws
/// blocc::Error saying why when it cannot be: no libcuda.so.1 (no NVIDIA
/// driver installed), a driver too old for an entry point, or cuInit
/// failing (for instance no GPU). $BLOCC_CUDA_DRIVER names another file
/// to load instead of libcuda.so.1.
const Api &api();

/// Whether `api()` succeeds; when not, `reason` says why. Never throws.
bool available(std::string *reason = nullptr);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result code.
std::string describe(CUresult result);

/// Throws blocc::Error "<what>: <call> failed: <describe(result)>" unless
/// `result` is CUDA_SUCCESS. `what` names the object of the call (a kernel,
/// a buffer), `call` the driver function.
void check(CUresult result, const char *call, const std::string &what);
/// The same for a `what` known at compile time: no string is made unless
/// the call failed (launches check several calls each).
inline void check(CUresult result, const char *call, const char *what) {
  if (result != CUDA_SUCCESS)
    check(result, call, std::string(what));
}

} // namespace blocc::cuda::driver
