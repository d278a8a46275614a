// Shared memory beyond 48 KB: a kernel whose shared buffer outgrows the
// static limit gets it as dynamic shared memory (`.extern .shared`),
// requested by every launch and enabled per function up to the device's
// opt-in limit; beyond the architecture's limit compiling is an error
// naming the op and both sizes, beyond the device's loading is one naming
// the kernel. PTX checks run everywhere; launches skip without a GPU.
#include "nvptx/support.h"

#include "runtime/cuda/context.h"
#include "runtime/cuda/loaded_kernel.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

// v is needed as a row (one layout) and as the column of a BLOCK x 2 tile
// (another, whose threads run down the column: v's elements change warps),
// so the load converts through shared memory a buffer of the whole block
// (padded one element in 32).
template <typename T> auto make_two_layouts(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> row, bl::Ptr<T> tile,
                             bl::Const<int> BLOCK) {
    auto cols = bl::arange(0, BLOCK);
    auto v = bl::load(x + cols);
    bl::store(row + cols, v);
    auto pair = bl::expand_dims(bl::arange(0, 2), 0);
    bl::store(tile + bl::expand_dims(cols, 1) * 2 + pair,
              bl::broadcast_to(bl::expand_dims(v, 1), {BLOCK, 2}));
  });
}
auto two_layouts_f32 = make_two_layouts<float>("two_layouts_f32");
auto two_layouts_f64 = make_two_layouts<double>("two_layouts_f64");

template <typename T> int64_t conversion_bytes(int64_t block) {
  return (block + block / 32) * static_cast<int64_t>(sizeof(T));
}

nvptx::CompileOptions for_arch(const char *arch, int num_warps = 8) {
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(arch);
  options.num_warps = num_warps;
  return options;
}

TEST(SharedMemory, UpTo48KBTheBufferIsStatic) {
  std::vector<float> x(2048), row(2048), tile(2 * 2048);
  const ir::Function &f = specialization(two_layouts_f32, x, row, tile, 2048);
  auto kernel = nvptx::compile(f, for_arch("sm_90"));
  EXPECT_EQ(nvptx::dynamic_shared_bytes(*kernel), 0);
  const std::string &ptx = nvptx::ptx_of(*kernel);
  EXPECT_THAT(ptx, ::testing::HasSubstr(
                       ".shared .align 16 .b8 blocc_shared[" +
                       std::to_string(conversion_bytes<float>(2048)) + "]"));
  EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".extern")));
}

TEST(SharedMemory, Beyond48KBTheBufferIsDynamic) {
  std::vector<float> x(16384), row(16384), tile(2 * 16384);
  const ir::Function &f = specialization(two_layouts_f32, x, row, tile, 16384);
  for (const char *arch : {"sm_80", "sm_86", "sm_90"}) {
    auto kernel = nvptx::compile(f, for_arch(arch));
    EXPECT_EQ(nvptx::dynamic_shared_bytes(*kernel),
              conversion_bytes<float>(16384))
        << arch;
    const std::string &ptx = nvptx::ptx_of(*kernel);
    EXPECT_THAT(ptx, ::testing::HasSubstr(
                         ".extern .shared .align 16 .b8 blocc_shared[]"));
    if (ptxas()) {
      EXPECT_EQ(ptxas_errors(ptx, arch), "") << arch;
    }
  }
}

TEST(SharedMemory, BeyondTheArchitecturesLimitIsAnErrorNamingBothSizes) {
  // 16384 f64: 135168 bytes, within sm_80's 163 KB and sm_90's 227 KB but
  // not sm_86's 99 KB.
  std::vector<double> x(16384), row(16384), tile(2 * 16384);
  const ir::Function &f = specialization(two_layouts_f64, x, row, tile, 16384);
  EXPECT_EQ(nvptx::dynamic_shared_bytes(*nvptx::compile(f, for_arch("sm_80"))),
            conversion_bytes<double>(16384));
  std::string message = error_of([&] { nvptx::compile(f, for_arch("sm_86")); });
  // The conversion of the load (a convert_layout at the load's line).
  EXPECT_THAT(message, ::testing::HasSubstr("convert_layout at "));
  EXPECT_THAT(message,
              ::testing::HasSubstr(
                  "needs " + std::to_string(conversion_bytes<double>(16384)) +
                  " bytes of shared memory per program, more than the 101376 "
                  "bytes sm_86 allows a CTA; use a smaller block"));
  // 65536 f64 is beyond every architecture.
  std::vector<double> big(65536), big_tile(2 * 65536);
  const ir::Function &g =
      specialization(two_layouts_f64, big, big, big_tile, 65536);
  EXPECT_THAT(error_of([&] { nvptx::compile(g, for_arch("sm_90", 32)); }),
              ::testing::HasSubstr("more than the 232448 bytes sm_90 allows"));
}

template <typename T, typename K> void expect_like_the_cpu(K &kernel) {
  constexpr int kBlock = 16384;
  auto x = random_values<T>(kBlock, -100, 100);
  DeviceBuffer<T> dx(x);
  auto drow = poisoned_on_gpu<T>(kBlock);
  auto dtile = poisoned_on_gpu<T>(2 * kBlock);
  kernel[{1}].with(on(Backend::Gpu, 8))(dx, drow, dtile, kBlock);
  std::vector<T> row = poisoned<T>(kBlock), tile = poisoned<T>(2 * kBlock);
  kernel[{1}].with(kCpu)(x, row, tile, kBlock);
  EXPECT_TRUE(same_bits(drow.to_host(), row));
  EXPECT_TRUE(same_bits(dtile.to_host(), tile));
  EXPECT_TRUE(all_written(drow.to_host()));
}

TEST(SharedMemory, DynamicSharedMemoryKernelsRunLikeTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  expect_like_the_cpu<float>(two_layouts_f32); // 67584 bytes
  if (cuda::properties(0).compute_capability == 80 ||
      cuda::properties(0).compute_capability >= 90)
    expect_like_the_cpu<double>(two_layouts_f64); // 135168 bytes
}

TEST(SharedMemory, BeyondTheDevicesLimitLoadingIsAnErrorNamingTheKernel) {
  BLOCC_REQUIRE_GPU();
  std::vector<float> x(16384), row(16384), tile(2 * 16384);
  auto compiled =
      nvptx::compile(specialization(two_layouts_f32, x, row, tile, 16384),
                     for_arch(nvptx::arch_for_device(0).name().c_str()));
  // The same PTX, claiming a buffer larger than any GPU's.
  cuda::LoadedKernel loaded("too_much_shared", nvptx::ptx_of(*compiled),
                            nvptx::ptx_entry(*compiled), 4u << 20);
  cuda::ContextScope scope(cuda::context_for_device(0));
  std::string message =
      error_of([&] { loaded.function_in(cuda::context_for_device(0)); });
  EXPECT_THAT(message,
              ::testing::HasSubstr("kernel 'too_much_shared' needs 4194304 "
                                   "bytes of shared memory per program, more "
                                   "than the "));
  EXPECT_THAT(message, ::testing::HasSubstr("allows a block"));
}

} // namespace
