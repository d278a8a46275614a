// How many driver calls a cached GPU launch makes, counted by the fake
// driver (fake_cuda_driver.cpp; CTest runs this binary with
// BLOCC_CUDA_DRIVER naming it). Each real driver call costs the host
// ~0.1-0.5 us, so these counts are most of a launch's cost beyond
// cuLaunchKernel: launches on blocc::DeviceBuffers take the buffers'
// context from the buffers (no cuPointerGetAttribute), the primary
// context's id is kept (no cuCtxGetId), and the context is pushed only
// when another is current. Deterministic: no timing.
#include "backends/nvptx/gpu_backend.h"
#include "blocc/blocc.h"
#include "fake_cuda/fake_cuda_driver.h"
#include "ir/parser.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/driver_api.h"
#include "runtime/cuda/fault_record.h"
#include "runtime/cuda/tensor_map.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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

// A kernel that can fail (an integer division by a run-time divisor).
int divide_line = 0;
auto divide = bl::kernel("divide", [](bl::Ptr<int32_t> x, bl::i32 divisor,
                                      bl::i32 n, bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  divide_line = __LINE__ + 1;
  bl::store(x + offsets, bl::load(x + offsets, mask) / divisor, mask);
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

/// BLOCC_BACKEND=gpu for one scope: launches on host memory stage their
/// buffers on the GPU.
struct StagingRequested {
  StagingRequested() { setenv("BLOCC_BACKEND", "gpu", 1); }
  ~StagingRequested() { unsetenv("BLOCC_BACKEND"); }
};

// A launch on host buffers under BLOCC_BACKEND=gpu copies each distinct
// buffer to the GPU once, launches, waits, and copies back only what the
// kernel writes; the fake driver runs no kernel, so `out` comes back as it
// went (its poison), which shows the copy back is the staged buffer's.
TEST(StagedLaunch, CopiesEachHostBufferInOnceAndTheWrittenOnesBack) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  StagingRequested staging;
  const int n = 1000;
  std::vector<float> x(n, 1.f), y(n, 2.f), out(n, -7.f);
  add[{bl::cdiv(n, 256)}](x, y, out, n, 256); // compiles
  Calls launch = calls_of([&] { add[{bl::cdiv(n, 256)}](x, y, out, n, 256); });
  std::printf("a staged launch: %llu driver calls\n%s", launch.total,
              launch.text().c_str());
  EXPECT_EQ(launch.per_entry["cuMemAlloc_v2"], 3u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuMemcpyHtoD_v2"], 3u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuLaunchKernel"], 1u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuMemcpyDtoH_v2"], 1u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuMemFree_v2"], 3u) << launch.text();
  EXPECT_EQ(out, std::vector<float>(n, -7.f));
  EXPECT_EQ(x, std::vector<float>(n, 1.f));

  // One buffer passed twice is staged once (x read, written in place).
  Calls in_place = calls_of([&] { add[{bl::cdiv(n, 256)}](x, y, x, n, 256); });
  EXPECT_EQ(in_place.per_entry["cuMemAlloc_v2"], 2u) << in_place.text();
  EXPECT_EQ(in_place.per_entry["cuMemcpyHtoD_v2"], 2u) << in_place.text();
  EXPECT_EQ(in_place.per_entry["cuMemcpyDtoH_v2"], 1u) << in_place.text();
}

// A host buffer beside a device buffer: the host one is staged on the
// device buffer's GPU; an empty host buffer is neither allocated nor
// copied.
TEST(StagedLaunch, StagesHostBuffersBesideDeviceOnesAndSkipsEmptyOnes) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  StagingRequested staging;
  const int n = 1000;
  bl::DeviceBuffer<float> y(n);
  std::vector<float> x(n, 1.f), out(n, -7.f);
  add[{bl::cdiv(n, 256)}](x, y, out, n, 256);
  Calls mixed = calls_of([&] { add[{bl::cdiv(n, 256)}](x, y, out, n, 256); });
  EXPECT_EQ(mixed.per_entry["cuMemAlloc_v2"], 2u) << mixed.text();
  EXPECT_EQ(mixed.per_entry["cuMemcpyHtoD_v2"], 2u) << mixed.text();
  EXPECT_EQ(mixed.per_entry["cuMemcpyDtoH_v2"], 1u) << mixed.text();

  std::vector<float> none;
  Calls empty = calls_of([&] { add[{1}](none, none, none, 0, 256); });
  EXPECT_EQ(empty.per_entry["cuMemAlloc_v2"], 0u) << empty.text();
  EXPECT_EQ(empty.per_entry["cuMemcpyHtoD_v2"], 0u) << empty.text();
  EXPECT_EQ(empty.per_entry["cuLaunchKernel"], 1u) << empty.text();
}

// Without staging, host memory on a GPU launch is an error naming the
// argument, raised before anything is allocated or launched.
TEST(StagedLaunch, HostMemoryOnAGpuLaunchWithoutStagingNamesTheArgument) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  const int n = 1000;
  bl::DeviceBuffer<float> x(n), y(n);
  std::vector<float> out(n, -7.f);
  bl::LaunchOptions on_gpu;
  on_gpu.backend = bl::Backend::Gpu;
  Calls failed = calls_of([&] {
    const int line = __LINE__ + 2;
    try {
      add[{bl::cdiv(n, 256)}].with(on_gpu)(x, y, out, n, 256);
      ADD_FAILURE() << "no error";
    } catch (const bl::Error &e) {
      EXPECT_NE(std::string(e.what()).find("launch_calls_test.cpp:" +
                                           std::to_string(line) + ": error"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("argument 3 (bl::Ptr<f32>)"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("is host memory"), std::string::npos)
          << e.what();
    }
  });
  EXPECT_EQ(failed.per_entry["cuMemAlloc_v2"], 0u) << failed.text();
  EXPECT_EQ(failed.per_entry["cuLaunchKernel"], 0u) << failed.text();
  EXPECT_EQ(out, std::vector<float>(n, -7.f));
}

/// The fault record of the module the fake driver loaded last.
blocc::cuda::FaultRecord *last_fault_record() {
  void *library =
      dlopen(std::getenv("BLOCC_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  using Query = void *(*)();
  auto query =
      reinterpret_cast<Query>(dlsym(library, "blocc_fake_cuda_fault_record"));
  return query ? static_cast<blocc::cuda::FaultRecord *>(query()) : nullptr;
}

// A kernel that can fail launches as asynchronously as one that cannot:
// it records an event, and nothing waits for the GPU or copies from it
// (the fault record is mapped host memory, read when the event is done).
TEST(LaunchDriverCalls, AKernelThatCanFailDoesNotWaitForTheGpu) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  const int n = 1000;
  bl::DeviceBuffer<int32_t> x(n);
  divide[{bl::cdiv(n, 256)}](x, 3, n, 256);
  Calls launch = calls_of([&] { divide[{bl::cdiv(n, 256)}](x, 3, n, 256); });
  std::printf("a cached launch of a kernel that can fail: %llu driver "
              "calls\n%s",
              launch.total, launch.text().c_str());
  EXPECT_EQ(launch.per_entry["cuLaunchKernel"], 1u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuEventRecord"], 1u) << launch.text();
  for (const char *wait : {"cuCtxSynchronize", "cuStreamSynchronize",
                           "cuEventSynchronize", "cuMemcpyDtoH_v2"})
    EXPECT_EQ(launch.per_entry[wait], 0u) << wait << "\n" << launch.text();
  EXPECT_LE(launch.total, 4u) << launch.text();
}

// A fault the GPU wrote into the record surfaces at the next call that
// checks (here: synchronize, a copy to the host, a later launch), with the
// message of the CPU backend, once.
TEST(LaunchFaults, ARecordedFaultIsReportedOnceByTheNextCheckingCall) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  const int n = 1000;
  bl::DeviceBuffer<int32_t> x(n);
  auto fail_program_2 = [&] {
    divide[{bl::cdiv(n, 256)}](x, 0, n, 256);
    blocc::cuda::FaultRecord *record = last_fault_record();
    ASSERT_NE(record, nullptr);
    record->site = 1;
    record->program = 2;
    record->pid[0] = 2;
    record->lane = 5;
  };
  const std::string want = "kernel 'divide', program (2, 0, 0), div at "
                           "launch_calls_test.cpp:" +
                           std::to_string(divide_line) +
                           ": lane 5: integer division by zero";
  auto error_of = [](auto &&call) -> std::string {
    try {
      call();
    } catch (const blocc::Error &e) {
      return e.what();
    }
    return "";
  };
  fail_program_2();
  EXPECT_EQ(error_of([] { bl::cuda::synchronize(); }), want);
  EXPECT_EQ(error_of([] { bl::cuda::synchronize(); }), "") << "reported twice";
  fail_program_2();
  EXPECT_EQ(error_of([&] { x.to_host(); }), want);
  fail_program_2();
  bl::DeviceBuffer<float> a(4), b(4), sum(4);
  EXPECT_EQ(error_of([&] { add[{1}](a, b, sum, 4, 256); }), want);
  EXPECT_EQ(error_of([&] { x.to_host(); }), "");
}

// BLOCC_LAUNCH_BLOCKING=1: the launch waits for its stream and reports its
// own fault.
TEST(LaunchFaults, UnderLaunchBlockingTheLaunchReportsItsFault) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  const int n = 1000;
  bl::DeviceBuffer<int32_t> x(n);
  divide[{bl::cdiv(n, 256)}](x, 3, n, 256);
  bl::cuda::synchronize();
  // The fake GPU runs nothing: the fault is in the record before the
  // launch, as if the launch had written it.
  blocc::cuda::FaultRecord *record = last_fault_record();
  ASSERT_NE(record, nullptr);
  record->site = 1;
  record->pid[0] = 3;
  record->program = 3;
  record->lane = 0;
  ::setenv("BLOCC_LAUNCH_BLOCKING", "1", 1);
  std::string error;
  Calls launch = calls_of([&] {
    try {
      divide[{bl::cdiv(n, 256)}](x, 0, n, 256);
    } catch (const blocc::Error &e) {
      error = e.what();
    }
  });
  ::unsetenv("BLOCC_LAUNCH_BLOCKING");
  EXPECT_EQ(error, "kernel 'divide', program (3, 0, 0), div at "
                   "launch_calls_test.cpp:" +
                       std::to_string(divide_line) +
                       ": lane 0: integer division by zero");
  EXPECT_EQ(launch.per_entry["cuStreamSynchronize"], 1u) << launch.text();
  EXPECT_EQ(launch.per_entry["cuEventRecord"], 0u) << launch.text();
}

} // namespace

/// The start of the module image the fake driver loaded last.
std::string last_loaded_image() {
  void *library =
      dlopen(std::getenv("BLOCC_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  using Query = const char *(*)();
  auto query =
      reinterpret_cast<Query>(dlsym(library, "blocc_fake_cuda_loaded_image"));
  return query ? query() : "";
}

auto negate =
    bl::kernel("negate", [](bl::Ptr<float> x, bl::i32 n, bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      bl::store(x + offsets, -bl::load(x + offsets, mask), mask);
    });

// The driver loads the kernel's PTX (its JIT assembles it), or, when
// BLOCC_PTXAS names a PTX assembler, the cubin that assembler made of it
// for the PTX's architecture. CTest runs this test both ways: as part of
// `launch_driver_calls`, and as `launch_with_ptx_assembler` with
// BLOCC_PTXAS naming tests/fake_cuda/fake_ptxas.
TEST(ModuleImage, IsThePtxOrTheCubinOfTheNamedAssembler) {
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  const int n = 100;
  bl::DeviceBuffer<float> x(n);
  negate[{1}](x, n, 128);
  std::string image = last_loaded_image();
  const char *assembler = std::getenv("BLOCC_PTXAS");
  if (assembler && *assembler)
    EXPECT_EQ(image.rfind("FAKE CUBIN sm_", 0), 0u) << image;
  else
    EXPECT_NE(image.find(".version"), std::string::npos) << image;
}

namespace {

/// An entry point of the fake driver's own (fake_cuda_driver.h).
template <typename F> F fake_driver_entry(const char *symbol) {
  void *library =
      dlopen(std::getenv("BLOCC_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  return library ? reinterpret_cast<F>(dlsym(library, symbol)) : nullptr;
}

// A kernel taking a row-major f16 [M, K] array and a second array of its
// shape; what it does does not matter (the fake GPU runs nothing).
constexpr const char *kTwoArrays = R"(
func @two_arrays(%a: ptr<f16> {divisibility = 16}, %m: i32, %k: i32,
                 %stride_am: i32, %b: ptr<f16> {divisibility = 16}) {
  %range = arange {end = 4, start = 0} : tensor<4xi32>
  %ms = splat %m : tensor<4xi32>
  %mask = cmp %range, %ms {predicate = "lt"} : tensor<4xi1>
  %pa = splat %a : tensor<4xptr<f16>>
  %qa = addptr %pa, %range : tensor<4xptr<f16>>
  %v = load %qa, %mask : tensor<4xf16>
  %pb = splat %b : tensor<4xptr<f16>>
  %qb = addptr %pb, %range : tensor<4xptr<f16>>
  store %qb, %v, %mask
}
)";

// The launch path of a kernel that copies with TMA (no compiled kernel
// asks for tensor maps yet: the test adds the requests to a compiled
// one): after the user's five parameters, each in its slot, come the two
// maps, encoded from the launch's arguments, each 128 bytes at a 64-byte
// aligned address, as the PTX's `.param .align 64 .b8 [128]` takes them.
TEST(TensorMapLaunch, MapsFollowTheUserParameters64ByteAligned) {
  auto record = fake_driver_entry<blocc_fake_cuda::RecordParameters>(
      "blocc_fake_cuda_record_parameters");
  auto recorded = fake_driver_entry<blocc_fake_cuda::RecordedParameters>(
      "blocc_fake_cuda_recorded_parameters");
  ASSERT_TRUE(record && recorded) << "BLOCC_CUDA_DRIVER is not the fake driver";
  bl::cuda::ContextScope current(bl::cuda::context_for_device(0));
  auto function = blocc::ir::parse_function(kTwoArrays);
  blocc::nvptx::CompileOptions options;
  options.arch = blocc::nvptx::GpuArch::parse("sm_90a");
  auto compiled = blocc::nvptx::compile(*function, options);

  namespace cuda = blocc::cuda;
  cuda::TensorMapRequest ra;
  ra.element = cuda::TensorMapElement::F16;
  ra.address_argument = 0;
  ra.global_dims = {cuda::TensorMapValue::of_argument(2),
                    cuda::TensorMapValue::of_argument(1)};
  ra.global_strides = {cuda::TensorMapValue::of_argument(3)};
  ra.box_dims = {64, 128};
  cuda::TensorMapRequest rb = ra;
  rb.address_argument = 4;
  auto kernel = blocc::nvptx::with_tensor_maps_for_testing(*compiled, {ra, rb});

  const int m = 256, k = 192;
  bl::DeviceBuffer<uint16_t> a(m * k), b(m * k);
  auto pointer = [](const bl::DeviceBuffer<uint16_t> &buffer) {
    blocc::KernelArg arg = blocc::KernelArg::of_pointer(buffer.data());
    arg.device = buffer.device();
    arg.context = buffer.context();
    return arg;
  };
  std::vector<blocc::KernelArg> args = {
      pointer(a), blocc::KernelArg::of_int(m), blocc::KernelArg::of_int(k),
      blocc::KernelArg::of_int(k), pointer(b)};
  const unsigned sizes[] = {8, 4, 4, 4, 8, 128, 128};
  record(sizes, 7);
  blocc::nvptx::run(*kernel, blocc::Grid(1), args);
  blocc_fake_cuda::LaunchParameter p[7];
  ASSERT_EQ(recorded(p, 7), 7);
  record(nullptr, 0);

  EXPECT_EQ(blocc_fake_cuda::first_word(p[0]),
            reinterpret_cast<uintptr_t>(a.data()));
  EXPECT_EQ(blocc_fake_cuda::first_word(p[1]), uint64_t{m});
  EXPECT_EQ(blocc_fake_cuda::first_word(p[2]), uint64_t{k});
  EXPECT_EQ(blocc_fake_cuda::first_word(p[3]), uint64_t{k});
  EXPECT_EQ(blocc_fake_cuda::first_word(p[4]),
            reinterpret_cast<uintptr_t>(b.data()));
  for (int i = 5; i < 7; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p[i].address) % 64, 0u)
        << "tensor map " << i - 5 << " at " << p[i].address;
    // The fake driver writes the global address first, then its pattern.
    EXPECT_EQ(blocc_fake_cuda::first_word(p[i]),
              reinterpret_cast<uintptr_t>(i == 5 ? a.data() : b.data()));
    for (int j = 8; j < 128; ++j)
      ASSERT_EQ(p[i].bytes[j], blocc_fake_cuda::tensor_map_byte(j))
          << "tensor map " << i - 5 << ", byte " << j;
  }

  // The last map the driver encoded is b's, from the launch's arguments.
  auto last_encode = fake_driver_entry<blocc_fake_cuda::LastTensorMapEncode>(
      "blocc_fake_cuda_last_tensor_map_encode");
  blocc_fake_cuda::TensorMapEncode e;
  ASSERT_TRUE(last_encode && last_encode(&e));
  EXPECT_EQ(e.global_address, b.data());
  EXPECT_EQ(e.global_dims[0], unsigned{k});
  EXPECT_EQ(e.global_dims[1], unsigned{m});
  EXPECT_EQ(e.global_strides[0], 2u * k);

  // A launch whose arguments TMA cannot copy names the kernel and the map.
  args[3] = blocc::KernelArg::of_int(k + 1);
  try {
    blocc::nvptx::run(*kernel, blocc::Grid(1), args);
    ADD_FAILURE() << "a stride of 193 f16 launched";
  } catch (const blocc::Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("kernel 'two_arrays', tensor map 0: runtime "
                        "argument 3 (the stride of dimension 1"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
