// GPUs as blocc sees them: whether a CUDA driver and GPU are present, which
// device new buffers go to, and waiting for the device. No CUDA types here
// (the driver is loaded at run time, see driver_api.h), so this header
// compiles anywhere.
//
// Contexts: a thread that has made a CUDA context current (the runtime
// API, PyTorch, its own cuCtxCreate) has its context used for work on that
// context's device; otherwise blocc uses the device's primary context (the
// one the CUDA runtime API shares), retained on first use and never
// released, and makes it current only for the duration of each call, so
// the caller's current context is never changed.
#pragma once

#include <cstddef>
#include <string>

namespace blocc::cuda {

/// True when the CUDA driver loads and initializes and sees at least one
/// GPU. Never throws.
bool is_available();

/// Why `is_available()` is false ("" when it is true).
std::string unavailable_reason();

/// Number of GPUs (0 without a driver).
int device_count();

/// The GPU this thread's new device buffers go to: the one `set_device`
/// chose, else the device of the thread's current CUDA context, else 0.
int current_device();

/// Chooses the GPU for this thread's new device buffers. Throws
/// blocc::Error for an ordinal no device has.
void set_device(int ordinal);

struct DeviceProperties {
  std::string name;           // "NVIDIA H100 80GB HBM3"
  int compute_capability = 0; // major * 10 + minor: 90 for sm_90
  int multiprocessors = 0;
};

/// Name and capabilities of GPU `ordinal`.
DeviceProperties properties(int ordinal);

/// Waits until all work blocc queued on GPU `ordinal` (default: the current
/// device) has finished; reports a fault of an earlier asynchronous launch
/// as a blocc::Error.
void synchronize(int ordinal = -1);

/// The GPU whose memory `pointer` addresses (a pointer another library
/// allocated: PyTorch's, CuPy's). Throws blocc::Error when there is no
/// CUDA driver, or the pointer is not memory the driver knows.
int device_of_pointer(const void *pointer);

/// Waits until all work queued on `stream` (a CUstream or cudaStream_t, as
/// an opaque handle; nullptr: the current context's default stream) has
/// finished; reports a fault of an earlier launch as a blocc::Error.
void synchronize_stream(void *stream);

/// Copies `bytes` of GPU `ordinal`'s memory at `device_pointer` to host
/// memory, and back; each waits until the copy is done (autotuning saves
/// and restores the buffers a kernel updates in place with these).
void copy_to_host(void *host, const void *device_pointer, size_t bytes,
                  int ordinal);
void copy_from_host(void *device_pointer, const void *host, size_t bytes,
                    int ordinal);

} // namespace blocc::cuda
