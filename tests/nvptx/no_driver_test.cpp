// Without a CUDA driver (or GPU), blocc still loads and runs on the host,
// and everything that needs the GPU says why it cannot run. On a machine
// with a GPU these tests run through CTest's `nvptx_without_driver`, which
// points BLOCC_CUDA_DRIVER at a library that does not exist.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto fill = bl::kernel(
    "fill", [](bl::Ptr<float> x, bl::f32 value, bl::Const<int> BLOCK) {
      bl::store(x + bl::arange(0, BLOCK), value);
    });

auto constant = bl::kernel("constant", [](bl::i32 n) {});

TEST(NoDriver, GpuWorkSaysThereIsNoGpuAndHostWorkRuns) {
  if (cuda::is_available())
    GTEST_SKIP() << "a GPU is present; CTest's nvptx_without_driver runs "
                    "this test with BLOCC_CUDA_DRIVER=/nonexistent";
  EXPECT_EQ(cuda::device_count(), 0);
  std::string reason = cuda::unavailable_reason();
  EXPECT_FALSE(reason.empty());
  std::string message = error_of([] { DeviceBuffer<float> b(16); });
  EXPECT_THAT(message, ::testing::HasSubstr("no GPU: " + reason));
  if (const char *path = std::getenv("BLOCC_CUDA_DRIVER")) {
    EXPECT_THAT(message,
                ::testing::HasSubstr(std::string("the CUDA driver library ") +
                                     path + " could not be loaded"));
  }
  EXPECT_THAT(error_of([] { constant[{1}].with(kGpu)(3); }),
              ::testing::HasSubstr("no GPU: "));
  // The host still runs kernels, and PTX is still generated.
  std::vector<float> x(64, 0.0f);
  fill[{1}].with(kCpu)(x, 2.5f, 64);
  EXPECT_EQ(x, std::vector<float>(64, 2.5f));
  expect_ptx_assembles(specialization(fill, x, 2.5f, 64));
}

} // namespace
