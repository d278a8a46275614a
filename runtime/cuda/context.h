// Which CUDA context work on a device runs in (see device.h for the rule),
// and making it current for the span of one call. Internal to runtime/ and
// backends/.
#pragma once

#include "runtime/cuda/driver_api.h"

namespace blocc::cuda {

/// The driver's handle of GPU `ordinal`; throws blocc::Error naming the
/// ordinal and the number of GPUs when there is no such device.
driver::CUdevice device_handle(int ordinal);

/// The context for work on GPU `ordinal`: the calling thread's current
/// context when it belongs to that device, else the device's primary
/// context (retained once per process).
driver::CUcontext context_for_device(int ordinal);

/// What identifies `context` for caches of per-context state (modules):
/// the driver's unique id of the context (cuCtxGetId) where it has one,
/// since a context destroyed and another created may reuse the handle's
/// address, else the handle. The primary contexts blocc retained are never
/// destroyed while it runs, so their ids are kept and a launch in one
/// costs no driver call (resetting a primary context that holds blocc's
/// kernels, cuDevicePrimaryCtxReset or cudaDeviceReset, is not supported).
unsigned long long context_key(driver::CUcontext context);

/// Makes `context` current for the lifetime of the scope when it is not
/// already, and restores the caller's context afterwards.
class ContextScope {
public:
  explicit ContextScope(driver::CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  bool pushed_ = false;
};

} // namespace blocc::cuda
