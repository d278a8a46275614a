#include "runtime/cuda/device.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/fault_record.h"

#include "ir/error.h"

#include <atomic>
#include <map>
#include <mutex>

namespace blocc::cuda {

using namespace driver;

namespace {

/// The ordinal set_device chose on this thread (-1: none).
thread_local int selected_device = -1;

std::string gpu_name(int ordinal) { return "GPU " + std::to_string(ordinal); }

/// The primary contexts blocc retained and their keys (context_key), read
/// without a lock on every launch: the first `retained_count` entries are
/// set, each key before its handle.
struct RetainedPrimary {
  std::atomic<CUcontext> context{nullptr};
  std::atomic<unsigned long long> key{0};
};
constexpr int kMaxRetained = 64;
RetainedPrimary retained[kMaxRetained];
std::atomic<int> retained_count{0};

/// The driver's id of `context`, or its handle where the driver has no ids.
unsigned long long driver_context_key(CUcontext context) {
  const Api &a = api();
  unsigned long long id = 0;
  if (a.cuCtxGetId && a.cuCtxGetId(context, &id) == CUDA_SUCCESS)
    return id;
  return reinterpret_cast<uintptr_t>(context);
}

/// The device of the thread's current context, or -1 when none is current.
int device_of_current_context() {
  const Api &a = api();
  CUcontext current = nullptr;
  check(a.cuCtxGetCurrent(&current), "cuCtxGetCurrent",
        "the current CUDA context");
  if (!current)
    return -1;
  CUdevice device = 0;
  check(a.cuCtxGetDevice(&device), "cuCtxGetDevice",
        "the current CUDA context");
  return device;
}

} // namespace

bool is_available() {
  if (!driver::available())
    return false;
  int count = 0;
  return api().cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

std::string unavailable_reason() {
  std::string reason;
  if (!driver::available(&reason))
    return reason;
  if (device_count() == 0)
    return "the CUDA driver sees no GPU";
  return "";
}

int device_count() {
  if (!driver::available())
    return 0;
  int count = 0;
  check(api().cuDeviceGetCount(&count), "cuDeviceGetCount", "the GPUs");
  return count;
}

CUdevice device_handle(int ordinal) {
  const Api &a = api();
  int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw Error(
        "there is no GPU " + std::to_string(ordinal) +
        ": this "
        "machine has " +
        std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
        (count ? " (ordinals 0 to " + std::to_string(count - 1) + ")" : ""));
  CUdevice device = 0;
  check(a.cuDeviceGet(&device, ordinal), "cuDeviceGet", gpu_name(ordinal));
  return device;
}

int current_device() {
  if (selected_device >= 0)
    return selected_device;
  int device = device_of_current_context();
  return device >= 0 ? device : 0;
}

void set_device(int ordinal) {
  device_handle(ordinal); // checks the ordinal
  selected_device = ordinal;
}

CUcontext context_for_device(int ordinal) {
  const Api &a = api();
  CUcontext current = nullptr;
  check(a.cuCtxGetCurrent(&current), "cuCtxGetCurrent",
        "the current CUDA context");
  if (current && device_of_current_context() == ordinal)
    return current;
  static std::mutex mutex;
  static std::map<int, CUcontext> primary;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = primary.find(ordinal);
  if (it != primary.end())
    return it->second;
  CUdevice device = device_handle(ordinal);
  CUcontext context = nullptr;
  check(a.cuDevicePrimaryCtxRetain(&context, device),
        "cuDevicePrimaryCtxRetain", gpu_name(ordinal));
  primary.emplace(ordinal, context);
  // Called under the mutex: one writer at a time.
  int slot = retained_count.load(std::memory_order_relaxed);
  if (slot < kMaxRetained) {
    retained[slot].key.store(driver_context_key(context),
                             std::memory_order_relaxed);
    retained[slot].context.store(context, std::memory_order_release);
    retained_count.store(slot + 1, std::memory_order_release);
  }
  return context;
}

unsigned long long context_key(CUcontext context) {
  int count = retained_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i)
    if (retained[i].context.load(std::memory_order_acquire) == context)
      return retained[i].key.load(std::memory_order_relaxed);
  return driver_context_key(context);
}

ContextScope::ContextScope(CUcontext context) {
  const Api &a = api();
  CUcontext current = nullptr;
  check(a.cuCtxGetCurrent(&current), "cuCtxGetCurrent",
        "the current CUDA context");
  if (current != context) {
    check(a.cuCtxPushCurrent(context), "cuCtxPushCurrent", "a CUDA context");
    pushed_ = true;
  }
}

ContextScope::~ContextScope() {
  if (pushed_) {
    CUcontext popped = nullptr;
    api().cuCtxPopCurrent(&popped); // cannot fail for a context we pushed
  }
}

DeviceProperties properties(int ordinal) {
  const Api &a = api();
  CUdevice device = device_handle(ordinal);
  DeviceProperties p;
  char name[256] = {};
  check(a.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName",
        gpu_name(ordinal));
  p.name = name;
  int major = 0, minor = 0;
  check(a.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute", gpu_name(ordinal));
  check(a.cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute", gpu_name(ordinal));
  p.compute_capability = major * 10 + minor;
  check(a.cuDeviceGetAttribute(&p.multiprocessors,
                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               device),
        "cuDeviceGetAttribute", gpu_name(ordinal));
  return p;
}

void synchronize(int ordinal) {
  if (ordinal < 0)
    ordinal = current_device();
  ContextScope scope(context_for_device(ordinal));
  check(api().cuCtxSynchronize(), "cuCtxSynchronize",
        "waiting for " + gpu_name(ordinal) +
            " (a fault here comes from an earlier kernel launch)");
  report_finished_faults();
}

void synchronize_stream(void *stream) {
  check(api().cuStreamSynchronize(static_cast<CUstream>(stream)),
        "cuStreamSynchronize",
        "waiting for a stream (a fault here comes from an earlier kernel "
        "launch)");
  report_finished_faults();
}

int device_of_pointer(const void *pointer) {
  int ordinal = -1;
  check(api().cuPointerGetAttribute(
            &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer))),
        "cuPointerGetAttribute", "the GPU of a pointer");
  return ordinal;
}

void copy_to_host(void *host, const void *device_pointer, size_t bytes,
                  int ordinal) {
  ContextScope scope(context_for_device(ordinal));
  check(
      api().cuMemcpyDtoH(
          host,
          static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(device_pointer)),
          bytes),
      "cuMemcpyDtoH",
      "copying " + std::to_string(bytes) + " bytes from " + gpu_name(ordinal));
  report_finished_faults();
}

void copy_from_host(void *device_pointer, const void *host, size_t bytes,
                    int ordinal) {
  ContextScope scope(context_for_device(ordinal));
  check(api().cuMemcpyHtoD(static_cast<CUdeviceptr>(
                               reinterpret_cast<uintptr_t>(device_pointer)),
                           host, bytes),
        "cuMemcpyHtoD",
        "copying " + std::to_string(bytes) + " bytes to " + gpu_name(ordinal));
}

} // namespace blocc::cuda
