// What the GPU backend does not lower yet fails to compile with a message
// naming the op, its source line and what to do; it never compiles to
// something wrong. Also the compile options it rejects.
#include "nvptx/support.h"

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

/// The message compiling `function` for the GPU throws.
std::string gpu_compile_error(const ir::Function &function) {
  return error_of([&] { ptx_for(function); });
}

std::string at_line(int line) {
  return "unsupported_ops_test.cpp:" + std::to_string(line);
}

int atomic_line = 0;
auto counting = bl::kernel("counting", [](bl::Ptr<int32_t> counter) {
  atomic_line = __LINE__ + 1;
  bl::atomic_add(counter, 1);
});

TEST(UnsupportedOps, AtomicsNameTheOpAndLine) {
  std::vector<int32_t> counter(1);
  std::string message = gpu_compile_error(specialization(counting, counter));
  EXPECT_THAT(message,
              ::testing::HasSubstr("atomic_rmw at " + at_line(atomic_line)));
}

int divide_line = 0;
auto divide = bl::kernel(
    "divide", [](bl::Ptr<int32_t> x, bl::i32 d, bl::Const<int> BLOCK) {
      auto offsets = bl::arange(0, BLOCK);
      divide_line = __LINE__ + 1;
      bl::store(x + offsets, bl::load(x + offsets) / d);
    });

auto divide_by_constant = bl::kernel(
    "divide_by_constant", [](bl::Ptr<int32_t> x, bl::Const<int> BLOCK) {
      auto offsets = bl::arange(0, BLOCK);
      bl::store(x + offsets,
                bl::load(x + offsets) / 7 + bl::load(x + offsets) % 3);
    });

TEST(UnsupportedOps, IntegerDivisionOnlyByConstants) {
  std::vector<int32_t> x(64);
  std::string message = gpu_compile_error(specialization(divide, x, 5, 64));
  EXPECT_THAT(message, ::testing::HasSubstr("div at " + at_line(divide_line)));
  EXPECT_THAT(message, ::testing::HasSubstr("divide by a constant"));
  // Constant divisors cannot be zero: those compile.
  expect_ptx_assembles(specialization(divide_by_constant, x, 64));
}

// A loaded value needed as a row of 64 (one layout) and broadcast over a
// 16 x 64 tile (another): converted through shared memory.
auto two_layouts =
    bl::kernel("two_layouts",
               [](bl::Ptr<float> x, bl::Ptr<float> row, bl::Ptr<float> tile) {
                 auto cols = bl::arange(0, 64);
                 auto v = bl::load(x + cols);
                 bl::store(row + cols, v);
                 auto r = bl::expand_dims(bl::arange(0, 16), 1);
                 bl::store(tile + r * 64 + bl::expand_dims(cols, 0),
                           bl::broadcast_to(bl::expand_dims(v, 0), {16, 64}));
               });

TEST(LayoutConversions, GoThroughSharedMemory) {
  std::vector<float> x(64), row(64), tile(16 * 64);
  const ir::Function &f = specialization(two_layouts, x, row, tile);
  expect_ptx_assembles(f);
  std::string ptx = ptx_for(f);
  EXPECT_THAT(ptx, ::testing::HasSubstr("st.shared"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("ld.shared"));
}

TEST(LayoutConversions, ConvertedValuesMatchTheCpuBackend) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto x = random_values<float>(64, -10, 10);
  DeviceBuffer<float> dx(x);
  auto drow = poisoned_on_gpu<float>(64), dtile = poisoned_on_gpu<float>(1024);
  two_layouts[{1}](dx, drow, dtile);
  std::vector<float> row = poisoned<float>(64), tile = poisoned<float>(1024);
  two_layouts[{1}].with(kCpu)(x, row, tile);
  EXPECT_TRUE(same_bits(drow.to_host(), row));
  EXPECT_TRUE(same_bits(dtile.to_host(), tile));
}

TEST(GpuOptions, ArchitecturesOutsideTheListAreRejected) {
  for (const char *bad : {"sm_75", "sm_100", "sm_80a", "compute_90", ""}) {
    std::string message = error_of([&] { nvptx::GpuArch::parse(bad); });
    EXPECT_THAT(message,
                ::testing::HasSubstr("expected one of sm_80, sm_86, sm_89, "
                                     "sm_90, sm_90a"))
        << bad;
  }
  EXPECT_EQ(nvptx::GpuArch::parse("sm_90a").name(), "sm_90a");
  EXPECT_EQ(nvptx::GpuArch::parse("86").name(), "sm_86");
  EXPECT_EQ(nvptx::GpuArch::for_compute_capability(87).name(), "sm_86");
  EXPECT_EQ(nvptx::GpuArch::for_compute_capability(100).name(), "sm_90");
  EXPECT_THAT(error_of([] { nvptx::GpuArch::for_compute_capability(75); }),
              ::testing::HasSubstr("compute capability 7.5"));
}

TEST(GpuOptions, NumWarpsBeyondACta) {
  std::vector<int32_t> x(64);
  std::string message = error_of(
      [&] { ptx_for(specialization(divide_by_constant, x, 64), "sm_90", 64); });
  EXPECT_THAT(message,
              ::testing::HasSubstr("num_warps must be a power of two from 1 "
                                   "to 32 on the GPU, got 64"));
}

} // namespace
