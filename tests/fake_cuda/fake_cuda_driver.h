// What the fake driver (fake_cuda_driver.cpp) records for tests to read
// back: the arguments of its last cuTensorMapEncodeTiled and the
// parameters of its last cuLaunchKernel. Plain C layouts, shared by the
// driver and the tests that dlopen it; no blocc or CUDA types.
#pragma once

#include <cstring>

namespace blocc_fake_cuda {

/// The arguments of a cuTensorMapEncodeTiled call, arrays up to its rank.
struct TensorMapEncode {
  const void *tensor_map = nullptr; // where the map was written
  int data_type = -1;
  unsigned rank = 0;
  const void *global_address = nullptr;
  unsigned long long global_dims[5] = {};
  unsigned long long global_strides[4] = {}; // rank - 1 of them
  unsigned box_dims[5] = {};
  unsigned element_strides[5] = {};
  int interleave = -1, swizzle = -1, l2_promotion = -1, oob_fill = -1;
};

/// Byte `i` of every map the fake driver encodes, past its first 8 bytes,
/// which hold the global address (so that a test tells maps apart).
inline unsigned char tensor_map_byte(int i) {
  return static_cast<unsigned char>(0x80 | i);
}

/// One parameter of a launch, as cuLaunchKernel received it.
struct LaunchParameter {
  const void *address = nullptr; // the pointer the launch passed for it
  unsigned size = 0;
  unsigned char bytes[128] = {}; // its first `size` bytes (up to 128)
};

/// The first (up to) 8 bytes of a recorded parameter as an integer: a
/// pointer or integer argument, or a tensor map's global address (which
/// the fake driver writes first).
inline unsigned long long first_word(const LaunchParameter &p) {
  unsigned long long v = 0;
  std::memcpy(&v, p.bytes, p.size < 8 ? p.size : 8);
  return v;
}

// The entry points a test resolves with dlsym (extern "C"):
//   int blocc_fake_cuda_last_tensor_map_encode(TensorMapEncode *out):
//     0 before any call, else 1 and *out filled.
//   void blocc_fake_cuda_record_parameters(const unsigned *sizes, int n):
//     later launches record n parameters of these sizes (n = 0: none);
//     the driver cannot know the kernel's parameters, so the test says.
//   int blocc_fake_cuda_recorded_parameters(LaunchParameter *out, int cap):
//     the parameters of the last launch recorded, how many.
using LastTensorMapEncode = int (*)(TensorMapEncode *);
using RecordParameters = void (*)(const unsigned *, int);
using RecordedParameters = int (*)(LaunchParameter *, int);

} // namespace blocc_fake_cuda
