#include "runtime/cuda/device_buffer.h"

#include "ir/error.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/fault_record.h"

#include <string>
#include <utility>

namespace blocc {

using namespace cuda::driver;

namespace {

std::string buffer_name(size_t bytes, int device) {
  return "a device buffer of " + std::to_string(bytes) + " bytes on GPU " +
         std::to_string(device);
}

} // namespace

DeviceAllocation::DeviceAllocation(size_t bytes, int device) {
  if (device < 0)
    device = cuda::current_device();
  CUcontext context = cuda::context_for_device(device);
  cuda::ContextScope scope(context);
  CUdeviceptr address = 0;
  // cuMemAlloc rejects 0 bytes; an empty buffer owns nothing.
  if (bytes)
    check(api().cuMemAlloc(&address, bytes), "cuMemAlloc",
          "allocating " + buffer_name(bytes, device));
  address_ = address;
  bytes_ = bytes;
  device_ = device;
  context_ = context;
}

DeviceAllocation::~DeviceAllocation() { release(); }

DeviceAllocation::DeviceAllocation(DeviceAllocation &&other) noexcept
    : address_(std::exchange(other.address_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      device_(std::exchange(other.device_, -1)),
      context_(std::exchange(other.context_, nullptr)) {}

DeviceAllocation &
DeviceAllocation::operator=(DeviceAllocation &&other) noexcept {
  if (this != &other) {
    release();
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = std::exchange(other.device_, -1);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void DeviceAllocation::release() noexcept {
  if (!address_)
    return;
  try {
    cuda::ContextScope scope(static_cast<CUcontext>(context_));
    // A failure here (a context destroyed under the buffer) cannot be
    // reported from a destructor; the memory went with the context.
    api().cuMemFree(address_);
  } catch (...) {
  }
  address_ = 0;
}

void DeviceAllocation::check_range(size_t bytes, size_t offset,
                                   const char *what) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw Error(std::string(what) + " of " + std::to_string(bytes) +
                " bytes at offset " + std::to_string(offset) + " exceeds " +
                buffer_name(bytes_, device_));
}

void DeviceAllocation::copy_from_host(const void *source, size_t bytes,
                                      size_t offset) {
  check_range(bytes, offset, "a copy from the host");
  if (!bytes)
    return;
  cuda::ContextScope scope(static_cast<CUcontext>(context_));
  check(api().cuMemcpyHtoD(address_ + offset, source, bytes), "cuMemcpyHtoD",
        "copying to " + buffer_name(bytes_, device_));
}

void DeviceAllocation::copy_to_host(void *destination, size_t bytes,
                                    size_t offset) const {
  check_range(bytes, offset, "a copy to the host");
  if (!bytes)
    return;
  cuda::ContextScope scope(static_cast<CUcontext>(context_));
  check(api().cuMemcpyDtoH(destination, address_ + offset, bytes),
        "cuMemcpyDtoH",
        "copying from " + buffer_name(bytes_, device_) +
            " (a fault here may come from an earlier kernel launch)");
  // The copy waited for the launches queued before it: report their faults.
  cuda::report_finished_faults();
}

void DeviceAllocation::copy_from_device(const DeviceAllocation &source) {
  check_range(source.bytes_, 0, "a device-to-device copy");
  if (!source.bytes_)
    return;
  cuda::ContextScope scope(static_cast<CUcontext>(context_));
  check(api().cuMemcpyDtoD(address_, source.address_, source.bytes_),
        "cuMemcpyDtoD", "copying to " + buffer_name(bytes_, device_));
}

} // namespace blocc
