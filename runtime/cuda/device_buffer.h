// Memory on a GPU, owned by a C++ object. Kernels launched on device
// buffers run on the GPU the buffers live on (Backend::Auto picks the GPU
// backend for them):
//
//   blocc::DeviceBuffer<float> x(host_x), out(n);   // copies host_x over
//   add[{blocc::cdiv(n, 1024)}](x, x, out, n, 1024);
//   std::vector<float> result = out.to_host();
//
// No CUDA types here; the driver is loaded on first use (driver_api.h), so
// code using this header builds without CUDA, and constructing a buffer
// where there is no GPU throws blocc::Error saying so.
//
// Copies are synchronous with respect to the host: `to_host` returns after
// every kernel queued before it on the device has finished and its results
// are in host memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace blocc {

/// Untyped owning device memory (what DeviceBuffer<T> is made of).
class DeviceAllocation {
public:
  DeviceAllocation() = default;
  /// `bytes` of uninitialized memory on GPU `device` (-1: the current
  /// device, see cuda::current_device()).
  explicit DeviceAllocation(size_t bytes, int device = -1);
  ~DeviceAllocation();
  DeviceAllocation(DeviceAllocation &&other) noexcept;
  DeviceAllocation &operator=(DeviceAllocation &&other) noexcept;
  DeviceAllocation(const DeviceAllocation &) = delete;
  DeviceAllocation &operator=(const DeviceAllocation &) = delete;

  /// The device address (never dereference it on the host).
  uint64_t address() const { return address_; }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  /// The CUcontext it was allocated in (launches on it run there without
  /// asking the driver where the memory lives).
  void *context() const { return context_; }

  /// Copies `bytes` between host memory and this allocation at `offset`
  /// bytes; throws blocc::Error when the range exceeds the allocation.
  void copy_from_host(const void *source, size_t bytes, size_t offset = 0);
  void copy_to_host(void *destination, size_t bytes, size_t offset = 0) const;
  /// Copies all of `source` (no larger than this) to the start of this.
  void copy_from_device(const DeviceAllocation &source);

private:
  void release() noexcept;
  void check_range(size_t bytes, size_t offset, const char *what) const;

  uint64_t address_ = 0;
  size_t bytes_ = 0;
  int device_ = -1;
  void *context_ = nullptr; // the CUcontext it was allocated in
};

/// `size()` elements of T on a GPU.
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// `count` uninitialized elements on GPU `device` (-1: current device).
  explicit DeviceBuffer(size_t count, int device = -1)
      : memory_(count * sizeof(T), device), size_(count) {}
  /// A copy of `host` on GPU `device`.
  explicit DeviceBuffer(std::span<const T> host, int device = -1)
      : DeviceBuffer(host.size(), device) {
    copy_from(host);
  }
  explicit DeviceBuffer(const std::vector<T> &host, int device = -1)
      : DeviceBuffer(std::span<const T>(host), device) {}

  size_t size() const { return size_; }
  int device() const { return memory_.device(); }
  /// The CUcontext it was allocated in.
  void *context() const { return memory_.context(); }
  /// The device address as a T* (for kernel arguments and device APIs;
  /// never dereference it on the host).
  T *data() const {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(memory_.address()));
  }

  /// Copies host elements to the start of the buffer (at most size()).
  void copy_from(std::span<const T> host) {
    memory_.copy_from_host(host.data(), host.size() * sizeof(T));
  }
  /// Copies the start of the buffer into `host` (at most size()).
  void copy_to(std::span<T> host) const {
    memory_.copy_to_host(host.data(), host.size() * sizeof(T));
  }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    copy_to(host);
    return host;
  }
  /// Copies another device buffer of at most this size (device to device).
  void copy_from(const DeviceBuffer &source) {
    memory_.copy_from_device(source.memory_);
  }
  /// Every element set to `value` (for poisoning outputs in tests).
  void fill(const T &value) {
    std::unique_ptr<T[]> host(new T[size_]);
    std::fill_n(host.get(), size_, value);
    copy_from(std::span<const T>(host.get(), size_));
  }

private:
  DeviceAllocation memory_;
  size_t size_ = 0;
};

} // namespace blocc
