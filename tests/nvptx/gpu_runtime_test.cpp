// The CUDA runtime under the GPU backend: device buffers and their copies,
// devices, contexts (the caller's current context is respected and left
// current), and the errors of launches that cannot run: device memory on a
// host backend, host memory on the GPU, grids beyond the device's limits,
// driver failures. Skipped (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

#include "runtime/cuda/driver_api.h"

#include <thread>

namespace bl = blocc;
using namespace blocc::gpu_testing;
namespace driver = blocc::cuda::driver;

namespace {

TEST(GpuRuntime, DeviceBuffersCopyBothWays) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1000003}}) {
    auto host = random_values<int32_t>(n, -1000000, 1000000);
    DeviceBuffer<int32_t> a(host);
    EXPECT_EQ(a.size(), n);
    EXPECT_EQ(a.to_host(), host);
    DeviceBuffer<int32_t> b(n);
    b.fill(-1);
    b.copy_from(a);
    EXPECT_EQ(b.to_host(), host);
    DeviceBuffer<int32_t> moved(std::move(b));
    EXPECT_EQ(moved.to_host(), host);
  }
}

TEST(GpuRuntime, CopiesBeyondTheBufferAreErrors) {
  BLOCC_REQUIRE_GPU();
  DeviceBuffer<float> small(4);
  std::vector<float> big(5);
  EXPECT_THAT(error_of([&] { small.copy_from(big); }),
              ::testing::HasSubstr("a copy from the host of 20 bytes at "
                                   "offset 0 exceeds a device buffer of 16 "
                                   "bytes on GPU 0"));
  EXPECT_THAT(error_of([&] { small.copy_to(big); }),
              ::testing::HasSubstr("exceeds a device buffer of 16 bytes"));
}

TEST(GpuRuntime, DevicesAndTheirProperties) {
  BLOCC_REQUIRE_GPU();
  int count = cuda::device_count();
  ASSERT_GE(count, 1);
  cuda::DeviceProperties p = cuda::properties(0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.compute_capability, 80) << p.name;
  EXPECT_GT(p.multiprocessors, 0);
  EXPECT_THAT(error_of([&] { cuda::set_device(count); }),
              ::testing::HasSubstr("there is no GPU " + std::to_string(count)));
  EXPECT_THAT(error_of([&] { DeviceBuffer<float> b(16, count + 3); }),
              ::testing::HasSubstr("there is no GPU"));
}

TEST(GpuRuntime, DriverErrorsNameTheCallAndTheResult) {
  BLOCC_REQUIRE_GPU();
  // More memory than any GPU has.
  std::string message =
      error_of([] { DeviceBuffer<char> huge(size_t{1} << 52); });
  EXPECT_THAT(message, ::testing::HasSubstr("allocating a device buffer of "));
  EXPECT_THAT(message, ::testing::HasSubstr("cuMemAlloc failed: "));
  EXPECT_THAT(message, ::testing::HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
}

auto add_one = bl::kernel(
    "add_one", [](bl::Ptr<float> x, bl::i32 n, bl::Const<int> BLOCK) {
      auto offs = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      bl::store(x + offs, bl::load(x + offs, offs < n) + 1, offs < n);
    });

TEST(GpuRuntime, TheCallersContextStaysCurrent) {
  BLOCC_REQUIRE_GPU();
  const driver::Api &api = driver::api();
  // A fresh thread has no current context: blocc uses the primary context
  // for the call only.
  std::thread([&] {
    DeviceBuffer<float> x(std::vector<float>(100, 1.0f));
    add_one[{1}](x, 100, 128);
    EXPECT_EQ(x.to_host(), std::vector<float>(100, 2.0f));
    driver::CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    EXPECT_EQ(current, nullptr);
  }).join();
  // A thread that made a context current keeps it, and blocc works in it.
  std::thread([&] {
    driver::CUdevice device = 0;
    ASSERT_EQ(api.cuDeviceGet(&device, 0), driver::CUDA_SUCCESS);
    driver::CUcontext mine = nullptr;
    ASSERT_EQ(api.cuDevicePrimaryCtxRetain(&mine, device),
              driver::CUDA_SUCCESS);
    ASSERT_EQ(api.cuCtxPushCurrent(mine), driver::CUDA_SUCCESS);
    DeviceBuffer<float> x(std::vector<float>(300, 5.0f));
    add_one[{3}](x, 300, 128);
    EXPECT_EQ(x.to_host(), std::vector<float>(300, 6.0f));
    driver::CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    EXPECT_EQ(current, mine);
    driver::CUcontext popped = nullptr;
    api.cuCtxPopCurrent(&popped);
  }).join();
}

int host_backend_line = 0;
TEST(GpuRuntime, DeviceBuffersOnAHostBackendAreErrors) {
  BLOCC_REQUIRE_GPU();
  DeviceBuffer<float> x(16);
  std::string message = error_of([&] {
    host_backend_line = __LINE__ + 1;
    add_one[{1}].with(kCpu)(x, 16, 16);
  });
  EXPECT_THAT(message, ::testing::HasSubstr("gpu_runtime_test.cpp:" +
                                            std::to_string(host_backend_line) +
                                            ": error: "));
  EXPECT_THAT(message,
              ::testing::HasSubstr("kernel 'add_one', argument 1 "
                                   "(bl::Ptr<f32>): blocc::DeviceBuffer<f32> "
                                   "lives on GPU 0, but the launch asks for "
                                   "the CPU backend"));
  EXPECT_THAT(message, ::testing::HasSubstr("to_host()"));
}

TEST(GpuRuntime, HostMemoryOnTheGpuBackendIsAnError) {
  // Checked before the driver is needed: runs without a GPU too.
  std::vector<float> x(16);
  std::string message = error_of([&] { add_one[{1}].with(kGpu)(x, 16, 16); });
  EXPECT_THAT(message, ::testing::HasSubstr(
                           "kernel 'add_one', argument 1 (bl::Ptr<f32>): "
                           "std::vector<f32> is host memory, but the launch "
                           "runs on the GPU; pass a blocc::DeviceBuffer"));
}

TEST(GpuRuntime, GridsBeyondTheDeviceLimitsAreErrors) {
  BLOCC_REQUIRE_GPU();
  DeviceBuffer<float> x(16);
  std::string message = error_of([&] { add_one[{1, 70000}](x, 16, 16); });
  EXPECT_THAT(message,
              ::testing::HasSubstr("kernel 'add_one': the grid has 70000 "
                                   "programs along y (axis 1), more than the "
                                   "GPU's limit of 65535"));
}

} // namespace
