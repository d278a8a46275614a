// How many driver calls a cached GPU launch makes, counted by the fake
// driver (fake_cuda_driver.cpp; CTest runs this binary with
// BLOCC_CUDA_DRIVER naming it). Each real driver call costs the host
// ~0.1-0.5 us, so these counts are most of a launch's cost beyond
// cuLaunchKernel: launches on blocc::DeviceBuffers take the buffers'
// context from the buffers (no cuPointerGetAttribute), the primary
// context's id is kept (no cuCtxGetId), and the context is pushed only
// when another is current. Deterministic: no timing.
#include "blocc/blocc.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/driver_api.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace bl = blocc;
namespace driver = blocc::cuda::driver;

namespace {

auto add = bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                bl::Ptr<float> out, bl::i32 n,
                                bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

using CallCounts = std::map<std::string, unsigned long long>;

/// The fake driver's call counts so far, per entry point.
CallCounts driver_calls() {
  const char *path = std::getenv("BLOCC_CUDA_DRIVER");
  void *library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  using Query = int (*)(const char **, unsigned long long *, int);
  auto query =
      library ? reinterpret_cast<Query>(dlsym(library, "blocc_fake_cuda_calls"))
              : nullptr;
  if (!query)
    throw std::runtime_error("BLOCC_CUDA_DRIVER does not name the fake "
                             "driver of tests/fake_cuda (loaded)");
  const char *names[64];
  unsigned long long calls[64];
  int count = query(names, calls, 64);
  CallCounts counts;
  for (int i = 0; i < count && i < 64; ++i)
    counts[names[i]] = calls[i];
  return counts;
}

/// The calls `action` makes, per entry point (those it does not call left
/// out), and their total.
struct Calls {
  CallCounts per_entry;
  unsigned long long total = 0;
  std::string text() const {
    std::ostringstream os;
    for (const auto &[name, calls] : per_entry)
      os << "  " << name << " x" << calls << "\n";
    return os.str();
  }
};

template <typename F> Calls calls_of(F action) {
  CallCounts before = driver_calls();
  action();
  Calls made;
  for (const auto &[name, calls] : driver_calls()) {
    unsigned long long delta = calls - before[name];
    if (delta) {
      made.per_entry[name] = delta;
      made.total += delta;
    }
  }
  return made;
}

/// Warms up, then counts one cached launch of `add` on three buffers on
/// the default stream and one on a user stream, each against its bound.
void expect_cached_launch_calls(unsigned long long default_stream_bound,
                                unsigned long long user_stream_bound) {
  const int n = 1000;
  bl::DeviceBuffer<float> x(n), y(n), out(n);
  driver::CUstream stream = nullptr;
  ASSERT_EQ(driver::api().cuStreamCreate(&stream, 0), driver::CUDA_SUCCESS);
  bl::LaunchOptions on_stream;
  on_stream.stream = stream;
  add[{bl::cdiv(n, 256)}](x, y, out, n, 256);
  add[{bl::cdiv(n, 256)}].with(on_stream)(x, y, out, n, 256);

  Calls on_default =
      calls_of([&] { add[{bl::cdiv(n, 256)}](x, y, out, n, 256); });
  std::printf("a cached launch on the default stream: %llu driver calls\n%s",
              on_default.total, on_default.text().c_str());
  EXPECT_LE(on_default.total, default_stream_bound) << on_default.text();
  EXPECT_EQ(on_default.per_entry["cuLaunchKernel"], 1u) << on_default.text();

  Calls on_user_stream = calls_of(
      [&] { add[{bl::cdiv(n, 256)}].with(on_stream)(x, y, out, n, 256); });
  std::printf("a cached launch on a user stream: %llu driver calls\n%s",
              on_user_stream.total, on_user_stream.text().c_str());
  EXPECT_LE(on_user_stream.total, user_stream_bound) << on_user_stream.text();
  EXPECT_EQ(on_user_stream.per_entry["cuLaunchKernel"], 1u)
      << on_user_stream.text();
  driver::api().cuStreamDestroy(stream);
}

// The usual case of a program that uses CUDA itself (PyTorch, the runtime
// API): the buffers' context is current. cuCtxGetCurrent and
// cuLaunchKernel, plus cuStreamGetCtx on a user stream.
TEST(LaunchDriverCalls, WithTheBuffersContextCurrent) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  expect_cached_launch_calls(2, 3);
}

// A thread with no current context: the context is pushed for the launch
// and popped after it, so that nothing is current afterwards.
TEST(LaunchDriverCalls, WithNoContextCurrent) {
  std::thread([] {
    driver::CUcontext current = nullptr;
    ASSERT_EQ(driver::api().cuCtxGetCurrent(&current), driver::CUDA_SUCCESS);
    ASSERT_EQ(current, nullptr);
    expect_cached_launch_calls(4, 5);
    ASSERT_EQ(driver::api().cuCtxGetCurrent(&current), driver::CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr);
  }).join();
}

} // namespace
