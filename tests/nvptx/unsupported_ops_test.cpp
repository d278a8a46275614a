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

int combine_line = 0;
auto divide_in_combine = bl::kernel(
    "divide_in_combine", [](bl::Ptr<int32_t> x, bl::Const<int> BLOCK) {
      auto offsets = bl::arange(0, BLOCK);
      combine_line = __LINE__ + 1;
      auto divide = [](bl::Tensor a, bl::Tensor b) { return a / b; };
      bl::store(x, bl::reduce(bl::load(x + offsets), 0, divide));
    });

TEST(UnsupportedOps, IntegerDivisionByRunTimeValuesInACombineRegion) {
  // A combine runs per thread: it could not stop the program on a zero.
  std::vector<int32_t> x(64);
  std::string message =
      gpu_compile_error(specialization(divide_in_combine, x, 64));
  EXPECT_THAT(message, ::testing::HasSubstr("div at " + at_line(combine_line)));
  EXPECT_THAT(message, ::testing::HasSubstr("inside a combine region"));
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
  EXPECT_EQ(nvptx::GpuArch::for_compute_capability(90).name(), "sm_90a");
  EXPECT_EQ(nvptx::GpuArch::for_compute_capability(100).name(), "sm_90");
  EXPECT_THAT(error_of([] { nvptx::GpuArch::for_compute_capability(75); }),
              ::testing::HasSubstr("compute capability 7.5"));
}

TEST(GpuOptions, NumWarpsBeyondACta) {
  std::vector<int32_t> x(64);
  std::string message = error_of(
      [&] { ptx_for(specialization(divide_in_combine, x, 64), "sm_90", 64); });
  EXPECT_THAT(message,
              ::testing::HasSubstr("num_warps must be a power of two from 1 "
                                   "to 32 on the GPU, got 64"));
}

} // namespace
