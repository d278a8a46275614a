// Launches on a user's CUDA stream (LaunchOptions::stream, an opaque
// CUstream): queued on that stream and asynchronous (no hidden wait: the
// stream is still busy when the launch returns), ordered among themselves,
// results equal to the CPU backend's once the stream is waited for; a
// stream of another context than the buffers' is an error. Skipped
// (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

#include "runtime/cuda/context.h"
#include "runtime/cuda/driver_api.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;
namespace driver = blocc::cuda::driver;

namespace {

// Busy for about `iterations` dependent multiply-adds per thread.
auto spin = bl::kernel(
    "spin", [](bl::Ptr<float> out, bl::i32 iterations, bl::Const<int> BLOCK) {
      auto acc = bl::zeros({BLOCK}, bl::float32);
      for (auto i : bl::range(0, iterations, 1)) {
        (void)i;
        acc = acc * 0.5f + 1.f;
      }
      bl::store(out + bl::arange(0, BLOCK), acc);
    });

auto scale_add = bl::kernel("scale_add", [](bl::Ptr<float> x, bl::f32 scale,
                                            bl::f32 offset, bl::i32 n,
                                            bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(x + offsets, bl::load(x + offsets, mask) * scale + offset, mask);
});

// Integer division by a run-time value: a kernel that can fail, whose
// faults surface asynchronously (runtime/cuda/fault_record.h).
auto divide = bl::kernel("divide_by", [](bl::Ptr<int32_t> x, bl::i32 divisor,
                                         bl::i32 n, bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(x + offsets, bl::load(x + offsets, mask) / divisor, mask);
});

/// A non-blocking stream in the primary context of GPU 0, destroyed with
/// the object.
struct Stream {
  Stream() {
    cuda::ContextScope scope(cuda::context_for_device(0));
    driver::check(
        driver::api().cuStreamCreate(&handle, driver::CU_STREAM_NON_BLOCKING),
        "cuStreamCreate", "a test stream");
  }
  ~Stream() { driver::api().cuStreamDestroy(handle); }
  LaunchOptions options(int num_warps = 4) const {
    LaunchOptions o = on(Backend::Auto, num_warps);
    o.stream = handle;
    return o;
  }
  driver::CUstream handle = nullptr;
};

TEST(GpuStreams, TheKernelsOfTheseTestsAssemble) {
  std::vector<float> x(128);
  expect_ptx_assembles(specialization(spin, x, 5, 128));
  expect_ptx_assembles(specialization(scale_add, x, 2.0f, 1.0f, 128, 1024));
  std::vector<int32_t> i(100);
  expect_ptx_assembles(specialization(divide, i, 3, 100, 128));
}

TEST(GpuStreams, LaunchesOnAStreamReturnBeforeTheGpuFinishes) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  Stream stream;
  auto busy = poisoned_on_gpu<float>(128);
  const int n = 100003;
  auto x = random_values<float>(n, -100, 100);
  DeviceBuffer<float> dx(x);
  // Compile first, so that the timed launches only queue work.
  spin[{1}].with(stream.options())(busy, 1, 128);
  scale_add[{bl::cdiv(n, 1024)}].with(stream.options())(dx, 1.0f, 0.0f, n,
                                                        1024);
  cuda::synchronize_stream(stream.handle);
  // About 2^25 dependent steps: tens of milliseconds of GPU time.
  spin[{1}].with(stream.options())(busy, 1 << 25, 128);
  scale_add[{bl::cdiv(n, 1024)}].with(stream.options())(dx, 2.0f, 1.0f, n,
                                                        1024);
  scale_add[{bl::cdiv(n, 1024)}].with(stream.options())(dx, 0.5f, -3.0f, n,
                                                        1024);
  // Had a launch waited for the GPU, the stream would be idle by now.
  EXPECT_EQ(driver::api().cuStreamQuery(stream.handle),
            driver::CUDA_ERROR_NOT_READY);
  cuda::synchronize_stream(stream.handle);
  EXPECT_EQ(driver::api().cuStreamQuery(stream.handle), driver::CUDA_SUCCESS);
  // In order: (x * 2 + 1) * 0.5 - 3, as the CPU backend computes it.
  std::vector<float> want = x;
  scale_add[{bl::cdiv(n, 1024)}].with(kCpu)(want, 2.0f, 1.0f, n, 1024);
  scale_add[{bl::cdiv(n, 1024)}].with(kCpu)(want, 0.5f, -3.0f, n, 1024);
  EXPECT_TRUE(same_bits(dx.to_host(), want));
  EXPECT_EQ(busy.to_host(), std::vector<float>(128, 2.0f));
}

TEST(GpuStreams, AFaultOnABusyNonBlockingStreamIsReportedWhenItEnds) {
  // The launch records an event on its stream and returns at once; the
  // fault is read when that event is done, whatever the default stream
  // does, so synchronizing the stream reports it.
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  Stream stream;
  auto busy = poisoned_on_gpu<float>(128);
  const int n = 3000;
  auto x = random_values<int32_t>(n, -100000, 100000);
  DeviceBuffer<int32_t> dx(x);
  spin[{1}].with(stream.options())(busy, 1 << 22, 128);
  divide[{bl::cdiv(n, 512)}].with(stream.options())(dx, 7, n, 512);
  std::vector<int32_t> want = x;
  divide[{bl::cdiv(n, 512)}].with(kCpu)(want, 7, n, 512);
  cuda::synchronize_stream(stream.handle); // the copy does not wait for it
  EXPECT_TRUE(same_bits(dx.to_host(), want));
  spin[{1}].with(stream.options())(busy, 1 << 22, 128);
  EXPECT_THAT(error_of([&] {
                divide[{bl::cdiv(n, 512)}].with(stream.options())(dx, 0, n,
                                                                  512);
                cuda::synchronize_stream(stream.handle);
              }),
              ::testing::HasSubstr("integer division by zero"));
}

TEST(GpuStreams, TheNullStreamIsTheDefaultBehaviour) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int n = 4097;
  auto x = random_values<float>(n, -10, 10);
  DeviceBuffer<float> dx(x);
  LaunchOptions options = on(Backend::Auto);
  options.stream = nullptr;
  scale_add[{bl::cdiv(n, 256)}].with(options)(dx, 3.0f, 0.25f, n, 256);
  std::vector<float> want = x;
  scale_add[{bl::cdiv(n, 256)}].with(kCpu)(want, 3.0f, 0.25f, n, 256);
  EXPECT_TRUE(same_bits(dx.to_host(), want));
}

TEST(GpuStreams, StagedHostBuffersWaitForTheStream) {
  // BLOCC_BACKEND=gpu's staging copies results back on the default
  // stream: it must wait for a non-blocking user stream first.
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  Stream stream;
  const int n = 1000;
  auto x = random_values<float>(n, -10, 10);
  std::vector<float> on_gpu = x, want = x;
  setenv("BLOCC_BACKEND", "gpu", 1);
  auto busy = poisoned_on_gpu<float>(128);
  spin[{1}].with(stream.options())(busy, 1 << 22, 128);
  scale_add[{4}].with(stream.options())(on_gpu, 2.0f, -1.0f, n, 256);
  unsetenv("BLOCC_BACKEND");
  scale_add[{4}].with(kCpu)(want, 2.0f, -1.0f, n, 256);
  EXPECT_TRUE(same_bits(on_gpu, want));
}

TEST(GpuStreams, AStreamOfAnotherContextIsAnError) {
  BLOCC_REQUIRE_GPU();
  // The buffer lives in the primary context; the stream in a context of
  // its own.
  DeviceBuffer<float> x(16);
  const driver::Api &api = driver::api();
  driver::CUdevice device = 0;
  ASSERT_EQ(api.cuDeviceGet(&device, 0), driver::CUDA_SUCCESS);
  auto *create = reinterpret_cast<driver::CUresult (*)(
      driver::CUcontext *, unsigned, driver::CUdevice)>(
      test_driver_entry("cuCtxCreate_v2"));
  auto *destroy = reinterpret_cast<driver::CUresult (*)(driver::CUcontext)>(
      test_driver_entry("cuCtxDestroy_v2"));
  ASSERT_TRUE(create && destroy);
  driver::CUcontext other = nullptr;
  ASSERT_EQ(create(&other, 0, device), driver::CUDA_SUCCESS);
  driver::CUstream stream = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&stream, driver::CU_STREAM_NON_BLOCKING),
            driver::CUDA_SUCCESS);
  driver::CUcontext popped = nullptr;
  api.cuCtxPopCurrent(&popped);
  LaunchOptions options = on(Backend::Auto);
  options.stream = stream;
  EXPECT_THAT(
      error_of([&] { scale_add[{1}].with(options)(x, 1.f, 0.f, 16, 16); }),
      ::testing::HasSubstr("kernel 'scale_add': the stream belongs to "
                           "another CUDA context than the kernel's "
                           "buffers"));
  api.cuCtxPushCurrent(other);
  api.cuStreamDestroy(stream);
  api.cuCtxPopCurrent(&popped);
  destroy(other);
}

} // namespace
