// Vector add on the GPU, against the CPU backend (bit for bit: one f32
// rounding of the exact sum) and a float64 host reference, at sizes that
// are not multiples of the block (1, primes, one past a block), over
// NaN-poisoned outputs, for several blocks and warp counts. Skipped
// (reported as skipped) where no GPU is present.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

auto add = bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y,
                                bl::Ptr<float> out, bl::i32 n,
                                bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

struct Case {
  int n, block, num_warps;
};

class GpuVectorAdd : public ::testing::TestWithParam<Case> {};

TEST_P(GpuVectorAdd, MatchesCpuBackendAndHost) {
  auto [n, block, num_warps] = GetParam();
  {
    // Without a GPU too: the PTX of this specialization assembles.
    std::vector<float> host(n);
    expect_ptx_assembles(specialization(add, host, host, host, n, block),
                         num_warps);
  }
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto x = random_values<float>(n, -1000, 1000);
  auto y = random_values<float>(n, -1, 1);
  DeviceBuffer<float> dx(x), dy(y);
  DeviceBuffer<float> dout = poisoned_on_gpu<float>(n);
  add[{bl::cdiv(n, block)}].with(on(Backend::Auto, num_warps))(dx, dy, dout, n,
                                                               block);
  std::vector<float> gpu = dout.to_host();
  std::vector<float> cpu = poisoned<float>(n);
  add[{bl::cdiv(n, block)}].with(kCpu)(x, y, cpu, n, block);
  EXPECT_TRUE(all_written(gpu));
  EXPECT_TRUE(same_bits(gpu, cpu));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(gpu[i], static_cast<float>(double(x[i]) + double(y[i])))
        << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(
    OddSizes, GpuVectorAdd,
    ::testing::Values(Case{1, 1024, 4}, Case{2, 1024, 4}, Case{7, 128, 4},
                      Case{127, 128, 4}, Case{128, 128, 4}, Case{129, 128, 4},
                      Case{1031, 1024, 4}, Case{4096, 1024, 4},
                      Case{65537, 1024, 4}, Case{1000003, 1024, 4},
                      Case{1000003, 4096, 8}, Case{99991, 256, 1},
                      Case{99991, 2048, 2}, Case{65536, 64, 4},
                      Case{77777, 16, 4}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return "n" + std::to_string(info.param.n) + "_block" +
             std::to_string(info.param.block) + "_warps" +
             std::to_string(info.param.num_warps);
    });

TEST(GpuVectorAdd, OutputAliasingAnInputUpdatesInPlace) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  int n = 10007;
  auto x = random_values<float>(n, -1, 1), y = random_values<float>(n, -1, 1);
  DeviceBuffer<float> dx(x), dy(y);
  add[{bl::cdiv(n, 1024)}](dx, dy, dx, n, 1024);
  std::vector<float> gpu = dx.to_host();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(gpu[i], x[i] + y[i]) << "element " << i;
}

TEST(GpuVectorAdd, LaunchesAreCachedPerSpecialization) {
  BLOCC_REQUIRE_GPU();
  int n = 5000;
  auto x = random_values<float>(n, -1, 1);
  DeviceBuffer<float> dx(x), dout(n);
  add[{bl::cdiv(n, 1024)}](dx, dx, dout, n, 1024);
  size_t compiled = nvptx::num_compiled_kernels();
  for (int i = 0; i < 3; ++i)
    add[{bl::cdiv(n, 1024)}](dx, dx, dout, n, 1024);
  EXPECT_EQ(nvptx::num_compiled_kernels(), compiled);
  std::vector<float> gpu = dout.to_host();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(gpu[i], x[i] + x[i]) << "element " << i;
}

} // namespace
