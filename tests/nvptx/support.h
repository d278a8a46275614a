// Support for the GPU backend's tests: fresh random inputs, NaN-poisoned
// outputs, comparisons of GPU results with the CPU backend's, and
// expect_ptx_assembles: the PTX of a kernel specialization assembled by
// ptxas (where it is on PATH) for sm_80 and sm_90 (ptxas.h), so that PTX
// the driver would reject fails here even on a machine without a GPU.
#pragma once

#include "backends/nvptx/gpu_backend.h"
#include "ir/error.h"
#include "runtime/cuda/device.h"
#include <blocc/blocc.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nvptx/ptxas.h"
#include "poison.h"
#include "test_seed.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace blocc::gpu_testing {

// What the tests name without qualification.
using ::blocc::Backend;
using ::blocc::DeviceBuffer;
using ::blocc::KernelArg;
using ::blocc::LaunchOptions;
namespace cuda = ::blocc::cuda;
namespace ir = ::blocc::ir;
namespace nvptx = ::blocc::nvptx;

inline LaunchOptions on(Backend backend, int num_warps = 4) {
  LaunchOptions options;
  options.backend = backend;
  options.num_warps = num_warps;
  return options;
}
inline const LaunchOptions kGpu = on(Backend::Gpu);
inline const LaunchOptions kCpu = on(Backend::Cpu);

/// Skips (reported as skipped, with the reason) where no GPU is present.
#define BLOCC_REQUIRE_GPU()                                                    \
  do {                                                                         \
    if (!::blocc::cuda::is_available())                                        \
      GTEST_SKIP() << "no GPU: " << ::blocc::cuda::unavailable_reason();       \
  } while (0)

using test_seed::rng;
using test_seed::seed;

template <typename T>
std::vector<T> random_values(size_t n, double lo, double hi) {
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(lo),
                                             static_cast<int64_t>(hi));
    for (auto &x : v)
      x = static_cast<T>(d(rng()));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto &x : v)
      x = static_cast<T>(static_cast<float>(d(rng())));
  }
  return v;
}

// NaN for floats, a fixed odd pattern for integers.
using poison::nan::poison;
using poison::nan::poisoned;
/// A device buffer of n poisoned elements.
template <typename T> DeviceBuffer<T> poisoned_on_gpu(size_t n) {
  DeviceBuffer<T> b(n);
  b.fill(poison<T>());
  return b;
}

/// A kernel argument naming `buffer` (device memory of its device), for
/// launches through nvptx::run.
template <typename T> KernelArg device_arg(DeviceBuffer<T> &buffer) {
  KernelArg arg =
      KernelArg::of_pointer(buffer.data(), buffer.size() * sizeof(T));
  arg.device = buffer.device();
  return arg;
}

template <typename T> double as_double(T x) {
  return static_cast<double>(static_cast<float>(x));
}
inline double as_double(double x) { return x; }

/// Bit-for-bit equality of the GPU's and the CPU backend's results.
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T> &gpu,
                                     const std::vector<T> &cpu) {
  if (gpu.size() != cpu.size())
    return ::testing::AssertionFailure()
           << "sizes differ: gpu " << gpu.size() << ", cpu " << cpu.size();
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) == 0)
      continue;
    if constexpr (std::is_integral_v<T>)
      return ::testing::AssertionFailure()
             << "element " << i << " of " << gpu.size() << ": gpu " << +gpu[i]
             << ", cpu " << +cpu[i];
    else
      return ::testing::AssertionFailure()
             << "element " << i << " of " << gpu.size() << ": gpu "
             << as_double(gpu[i]) << ", cpu " << as_double(cpu[i]);
  }
  return ::testing::AssertionSuccess();
}

/// No element is the poison (checks that every element was written).
template <typename T>
::testing::AssertionResult all_written(const std::vector<T> &v) {
  T p = poison<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    bool unwritten;
    if constexpr (std::is_integral_v<T>)
      unwritten = std::memcmp(&v[i], &p, sizeof(T)) == 0;
    else
      unwritten = std::isnan(as_double(v[i]));
    if (unwritten)
      return ::testing::AssertionFailure()
             << "element " << i << " of " << v.size() << " was not written";
  }
  return ::testing::AssertionSuccess();
}

/// The message of the blocc::Error `f` throws ("" and a failure if none).
template <typename F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const blocc::Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a blocc::Error";
  return {};
}

/// Compiles `function` for sm_80 and sm_90 and, where ptxas is on PATH,
/// checks that ptxas accepts both.
inline void expect_ptx_assembles(const ir::Function &function,
                                 int num_warps = 4) {
  EXPECT_EQ(ptx_assembly_errors(function, num_warps), "");
}

/// A driver entry point blocc does not load itself (cuCtxCreate_v2, ...),
/// for tests that set up what a user's program would; nullptr without a
/// driver.
inline void *test_driver_entry(const char *symbol) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return library ? dlsym(library, symbol) : nullptr;
}

/// The traced specialization of `kernel` for these launch arguments.
template <typename K, typename... A>
const ir::Function &specialization(K &kernel, A &&...args) {
  return kernel.specialize({detail::to_arg(std::forward<A>(args))...});
}

} // namespace blocc::gpu_testing
