// A stand-in for libcuda.so.1 that does nothing: every entry point blocc
// resolves (runtime/cuda/driver_api.cpp) succeeds at once. Device memory is
// host memory (malloc), copies are memcpy, modules accept any image,
// launches return without running anything, and the one device reports
// H100-like attributes. Loaded with BLOCC_CUDA_DRIVER=<this library>, it
// lets blocc's own host cost of a launch be measured on a machine without
// a GPU (blocc_bench_gpu_launch --launch-only --no-check). Results of
// kernels are never computed: nothing may check them.
//
// Each thread has its own stack of current contexts, as with the real
// driver (nothing is current on a new thread), and every entry point
// counts its calls: `blocc_fake_cuda_calls` reads the counts, so a test
// can pin how many driver calls a launch makes (launch_calls_test.cpp).
// cuTensorMapEncodeTiled and cuLaunchKernel also record their arguments
// (fake_cuda_driver.h), so that tests check what blocc passes the driver.
#include "fake_cuda/fake_cuda_driver.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kInvalidContext = 201;

// Distinct non-null handles.
int context_object, module_object, function_object, stream_object, event_object;
void *const kContext = &context_object;

/// The first bytes of the module image loaded last (PTX text or a cubin),
/// for blocc_fake_cuda_loaded_image.
char loaded_image_start[64];

/// The last cuTensorMapEncodeTiled's arguments (tests call it from one
/// thread).
blocc_fake_cuda::TensorMapEncode last_encode;
bool encoded = false;

/// The parameters launches record: their sizes, and the last launch's.
constexpr int kMaxRecorded = 32;
unsigned recorded_sizes[kMaxRecorded];
int recorded_count = 0;
blocc_fake_cuda::LaunchParameter recorded[kMaxRecorded];

/// The calling thread's context stack (the back is current).
thread_local std::vector<void *> context_stack;

// Call counts per entry point, each entry point's slot taken on its first
// call.
constexpr int kMaxEntryPoints = 64;
const char *entry_names[kMaxEntryPoints];
std::atomic<unsigned long long> entry_calls[kMaxEntryPoints];
std::atomic<int> entry_count{0};

int slot_for(const char *name) {
  int slot = entry_count.fetch_add(1);
  if (slot >= kMaxEntryPoints)
    std::abort();
  entry_names[slot] = name;
  return slot;
}

} // namespace

// Counts one call of the entry point it opens.
#define COUNT_CALL()                                                           \
  static const int call_slot = slot_for(__func__);                             \
  entry_calls[call_slot].fetch_add(1, std::memory_order_relaxed)

extern "C" {

CUresult cuInit(unsigned) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuDriverGetVersion(int *version) {
  COUNT_CALL();
  *version = 12080;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult, const char **name) {
  COUNT_CALL();
  *name = "CUDA_ERROR_FAKE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult, const char **text) {
  COUNT_CALL();
  *text = "an error of the fake CUDA driver";
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  COUNT_CALL();
  *count = 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  COUNT_CALL();
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  COUNT_CALL();
  std::strncpy(name, "fake H100 (blocc tests)", length);
  if (length > 0)
    name[length - 1] = '\0';
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  COUNT_CALL();
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
  COUNT_CALL();
  *context = kContext;
  return kSuccess;
}
CUresult cuCtxGetCurrent(void **context) {
  COUNT_CALL();
  *context = context_stack.empty() ? nullptr : context_stack.back();
  return kSuccess;
}
CUresult cuCtxGetDevice(int *device) {
  COUNT_CALL();
  *device = 0;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(void *context) {
  COUNT_CALL();
  context_stack.push_back(context);
  return kSuccess;
}
CUresult cuCtxPopCurrent_v2(void **context) {
  COUNT_CALL();
  if (context_stack.empty())
    return kInvalidContext;
  if (context)
    *context = context_stack.back();
  context_stack.pop_back();
  return kSuccess;
}
CUresult cuCtxSynchronize() {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuCtxGetId(void *, unsigned long long *id) {
  COUNT_CALL();
  *id = 1;
  return kSuccess;
}
CUresult cuStreamCreate(void **stream, unsigned) {
  COUNT_CALL();
  *stream = &stream_object;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuStreamGetCtx(void *, void **context) {
  COUNT_CALL();
  *context = kContext;
  return kSuccess;
}
CUresult cuStreamQuery(void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuStreamSynchronize(void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  COUNT_CALL();
  void *p = std::malloc(bytes ? bytes : 1);
  if (!p)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *pointer = reinterpret_cast<unsigned long long>(p);
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long pointer) {
  COUNT_CALL();
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(unsigned long long destination, const void *source,
                         size_t bytes) {
  COUNT_CALL();
  std::memcpy(reinterpret_cast<void *>(destination), source, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *destination, unsigned long long source,
                         size_t bytes) {
  COUNT_CALL();
  std::memcpy(destination, reinterpret_cast<const void *>(source), bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoD_v2(unsigned long long destination,
                         unsigned long long source, size_t bytes) {
  COUNT_CALL();
  std::memmove(reinterpret_cast<void *>(destination),
               reinterpret_cast<const void *>(source), bytes);
  return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long destination, unsigned char value,
                       size_t count) {
  COUNT_CALL();
  std::memset(reinterpret_cast<void *>(destination), value, count);
  return kSuccess;
}
CUresult cuMemsetD8Async(unsigned long long destination, unsigned char value,
                         size_t count, void *) {
  COUNT_CALL();
  std::memset(reinterpret_cast<void *>(destination), value, count);
  return kSuccess;
}
CUresult cuPointerGetAttribute(void *data, int attribute, unsigned long long) {
  COUNT_CALL();
  if (attribute == 1) // CONTEXT
    *static_cast<void **>(data) = kContext;
  else if (attribute == 9) // DEVICE_ORDINAL
    *static_cast<int *>(data) = 0;
  else
    return kInvalidValue;
  return kSuccess;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned, int *,
                            void **) {
  COUNT_CALL();
  std::strncpy(loaded_image_start, static_cast<const char *>(image),
               sizeof loaded_image_start - 1);
  *module = &module_object;
  return kSuccess;
}
CUresult cuModuleGetFunction(void **function, void *, const char *) {
  COUNT_CALL();
  *function = &function_object;
  return kSuccess;
}
CUresult cuFuncSetAttribute(void *, int, int) {
  COUNT_CALL();
  return kSuccess;
}
// A zeroed block for every module global but the fault record's address
// (8 bytes, fault_record.h), which has a word of its own.
unsigned long long fault_record_address;
CUresult cuModuleGetGlobal_v2(unsigned long long *pointer, size_t *bytes,
                              void *, const char *name) {
  COUNT_CALL();
  static unsigned long long globals[64];
  if (std::strcmp(name, "blocc_fault_record") == 0) {
    *pointer = reinterpret_cast<unsigned long long>(&fault_record_address);
    *bytes = sizeof fault_record_address;
    return kSuccess;
  }
  *pointer = reinterpret_cast<unsigned long long>(globals);
  *bytes = sizeof globals;
  return kSuccess;
}
// Mapped host memory is host memory, at the same address on the "device".
CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned) {
  COUNT_CALL();
  *pointer = std::calloc(1, bytes ? bytes : 1);
  return *pointer ? kSuccess : 2;
}
CUresult cuMemHostGetDevicePointer_v2(unsigned long long *device_pointer,
                                      void *host_pointer, unsigned) {
  COUNT_CALL();
  *device_pointer = reinterpret_cast<unsigned long long>(host_pointer);
  return kSuccess;
}
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *, void **parameters,
                        void **) {
  COUNT_CALL();
  for (int i = 0; i < recorded_count; ++i) {
    blocc_fake_cuda::LaunchParameter &p = recorded[i];
    p.address = parameters[i];
    p.size = recorded_sizes[i];
    std::memcpy(p.bytes, parameters[i],
                p.size < sizeof p.bytes ? p.size : sizeof p.bytes);
  }
  return kSuccess;
}
// Checks what the real driver documents as invalid that a caller could
// get wrong: the map's alignment, the rank and the address's alignment.
CUresult cuTensorMapEncodeTiled(void *tensor_map, int data_type, unsigned rank,
                                void *global_address,
                                const unsigned long long *global_dims,
                                const unsigned long long *global_strides,
                                const unsigned *box_dims,
                                const unsigned *element_strides, int interleave,
                                int swizzle, int l2_promotion, int oob_fill) {
  COUNT_CALL();
  if (reinterpret_cast<std::uintptr_t>(tensor_map) % 64 != 0 || rank < 1 ||
      rank > 5 || reinterpret_cast<std::uintptr_t>(global_address) % 16 != 0)
    return kInvalidValue;
  blocc_fake_cuda::TensorMapEncode e;
  e.tensor_map = tensor_map;
  e.data_type = data_type;
  e.rank = rank;
  e.global_address = global_address;
  for (unsigned i = 0; i < rank; ++i) {
    e.global_dims[i] = global_dims[i];
    if (i + 1 < rank)
      e.global_strides[i] = global_strides[i];
    e.box_dims[i] = box_dims[i];
    e.element_strides[i] = element_strides[i];
  }
  e.interleave = interleave;
  e.swizzle = swizzle;
  e.l2_promotion = l2_promotion;
  e.oob_fill = oob_fill;
  last_encode = e;
  encoded = true;
  auto *bytes = static_cast<unsigned char *>(tensor_map);
  std::memcpy(bytes, &global_address, sizeof global_address);
  for (int i = sizeof global_address; i < 128; ++i)
    bytes[i] = blocc_fake_cuda::tensor_map_byte(i);
  return kSuccess;
}
CUresult cuEventCreate(void **event, unsigned) {
  COUNT_CALL();
  *event = &event_object;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuEventRecord(void *, void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuEventSynchronize(void *) {
  COUNT_CALL();
  return kSuccess;
}
// Every launch has finished at once.
CUresult cuEventQuery(void *) {
  COUNT_CALL();
  return kSuccess;
}
CUresult cuEventElapsedTime(float *milliseconds, void *, void *) {
  COUNT_CALL();
  *milliseconds = 0;
  return kSuccess;
}

/// The host address of the fault record of the module loaded last (the
/// fault record's address every module's global holds), 0 before any: a
/// test writes a fault there as a failing program would.
void *blocc_fake_cuda_fault_record() {
  return reinterpret_cast<void *>(fault_record_address);
}

/// The calls made so far: fills names[i] and calls[i] for up to `capacity`
/// entry points that were called, and returns how many were.
int blocc_fake_cuda_calls(const char **names, unsigned long long *calls,
                          int capacity) {
  int count = entry_count.load();
  if (count > kMaxEntryPoints)
    count = kMaxEntryPoints;
  for (int i = 0; i < count && i < capacity; ++i) {
    names[i] = entry_names[i];
    calls[i] = entry_calls[i].load();
  }
  return count;
}

int blocc_fake_cuda_last_tensor_map_encode(
    blocc_fake_cuda::TensorMapEncode *out) {
  if (!encoded)
    return 0;
  *out = last_encode;
  return 1;
}

void blocc_fake_cuda_record_parameters(const unsigned *sizes, int count) {
  recorded_count = count < 0 ? 0 : count > kMaxRecorded ? kMaxRecorded : count;
  for (int i = 0; i < recorded_count; ++i) {
    recorded_sizes[i] = sizes[i];
    recorded[i] = {};
  }
}

int blocc_fake_cuda_recorded_parameters(blocc_fake_cuda::LaunchParameter *out,
                                        int capacity) {
  for (int i = 0; i < recorded_count && i < capacity; ++i)
    out[i] = recorded[i];
  return recorded_count;
}

/// The start of the module image cuModuleLoadDataEx loaded last (up to 63
/// bytes, up to its first zero byte).
const char *blocc_fake_cuda_loaded_image() { return loaded_image_start; }

} // extern "C"
