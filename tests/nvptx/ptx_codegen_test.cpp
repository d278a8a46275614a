// The PTX the GPU backend generates, without a GPU: the codegen decisions
// that matter for bandwidth (16-byte vector accesses wherever axis info
// proves them contiguous and aligned, a single predicate for masks that
// are uniform over a vector, a masked tail otherwise), launch bounds, and
// targets. Every PTX here is also assembled by ptxas for sm_80 and sm_90
// where ptxas is on PATH.
#include "nvptx/support.h"

#include <regex>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

int count(const std::string &text, const std::string &pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                    std::sregex_iterator()));
}

template <typename T>
auto add_kernel = bl::kernel("add", [](bl::Ptr<T> x, bl::Ptr<T> y,
                                       bl::Ptr<T> out, bl::i32 n,
                                       bl::Const<int> BLOCK) {
  auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  auto mask = offsets < n;
  bl::store(out + offsets,
            bl::load(x + offsets, mask) + bl::load(y + offsets, mask), mask);
});

TEST(Ptxas, IsOnPath) {
  if (!ptxas())
    GTEST_SKIP() << "ptxas is not on PATH: the PTX of these tests is not "
                    "assembled here (install the CUDA toolkit to check it)";
  // A PTX ptxas must reject, so that a broken ptxas call cannot pass.
  EXPECT_NE(ptxas_errors(".version 7.8\n.target sm_90\nnot ptx\n", "sm_90"),
            "");
}

TEST(PtxCodegen, VectorAddMovesSixteenBytesPerThreadAccess) {
  // n divisible by 16: the mask is uniform over each 4-lane group, so
  // every access is a vector access under one predicate.
  std::vector<float> x(4096), y(4096), out(4096);
  const ir::Function &f =
      specialization(add_kernel<float>, x, y, out, 4096, 1024);
  std::string ptx = ptx_for(f);
  // 1024 elements on 128 threads: two 4-float groups per thread per array.
  EXPECT_EQ(count(ptx, R"(ld\.global\.v4\.f32)"), 4) << ptx;
  EXPECT_EQ(count(ptx, R"(st\.global\.v4\.f32)"), 2) << ptx;
  EXPECT_EQ(count(ptx, R"(ld\.global\.f32)"), 0) << ptx;
  EXPECT_EQ(count(ptx, R"(st\.global\.f32)"), 0) << ptx;
  EXPECT_THAT(ptx, ::testing::HasSubstr(".visible .entry add("));
  EXPECT_THAT(ptx, ::testing::HasSubstr(".maxntid 128, 1, 1"));
  EXPECT_THAT(ptx, ::testing::HasSubstr(".target sm_90"));
  expect_ptx_assembles(f);
}

TEST(PtxCodegen, OddSizesKeepVectorAccessesAndAddAMaskedTail) {
  // n not divisible by 16: a group straddling n takes per-lane accesses;
  // whole groups still take one vector access.
  std::vector<float> x(1001), y(1001), out(1001);
  const ir::Function &f =
      specialization(add_kernel<float>, x, y, out, 1001, 1024);
  std::string ptx = ptx_for(f);
  EXPECT_EQ(count(ptx, R"(ld\.global\.v4\.f32)"), 4) << ptx;
  EXPECT_EQ(count(ptx, R"(st\.global\.v4\.f32)"), 2) << ptx;
  EXPECT_GT(count(ptx, R"(ld\.global\.f32)"), 0) << ptx;
  EXPECT_GT(count(ptx, R"(st\.global\.f32)"), 0) << ptx;
  expect_ptx_assembles(f);
}

TEST(PtxCodegen, NarrowAndWideElementsStillMoveSixteenBytes) {
  std::vector<bl::half> hx(4096), hy(4096), hout(4096);
  std::string half_ptx =
      ptx_for(specialization(add_kernel<bl::half>, hx, hy, hout, 4096, 1024));
  // 8 halves per thread: one 16-byte access of four 32-bit words.
  EXPECT_EQ(count(half_ptx, R"(ld\.global\.v4\.(b|u)32)"), 2) << half_ptx;
  EXPECT_EQ(count(half_ptx, R"(st\.global\.v4\.(b|u)32)"), 1) << half_ptx;
  expect_ptx_assembles(
      specialization(add_kernel<bl::half>, hx, hy, hout, 4096, 1024));

  std::vector<double> dx(4096), dy(4096), dout(4096);
  std::string double_ptx =
      ptx_for(specialization(add_kernel<double>, dx, dy, dout, 4096, 1024));
  EXPECT_EQ(count(double_ptx, R"(ld\.global\.v2\.f64)"), 8) << double_ptx;
  EXPECT_EQ(count(double_ptx, R"(st\.global\.v2\.f64)"), 4) << double_ptx;
  expect_ptx_assembles(
      specialization(add_kernel<double>, dx, dy, dout, 4096, 1024));

  std::vector<int8_t> bx(4096), by(4096), bout(4096);
  std::string byte_ptx =
      ptx_for(specialization(add_kernel<int8_t>, bx, by, bout, 4096, 2048));
  // 16 bytes per thread per access, never byte by byte.
  EXPECT_EQ(count(byte_ptx, R"(ld\.global\.v4\.(b|u)32)"), 2) << byte_ptx;
  EXPECT_EQ(count(byte_ptx, R"(ld\.global\.(u|s|b)8)"), 0) << byte_ptx;
  expect_ptx_assembles(
      specialization(add_kernel<int8_t>, bx, by, bout, 4096, 2048));
}

auto shifted_copy =
    bl::kernel("shifted_copy", [](bl::Ptr<float> x, bl::Ptr<float> out,
                                  bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      // x + 1 is only 4-byte aligned: its loads cannot be 16-byte vectors.
      bl::store(out + offsets, bl::load(x + 1 + offsets));
    });

TEST(PtxCodegen, UnalignedAddressesFallBackToScalarAccesses) {
  std::vector<float> x(1025), out(1024);
  const ir::Function &f = specialization(shifted_copy, x, out, 1024);
  std::string ptx = ptx_for(f);
  EXPECT_EQ(count(ptx, R"(ld\.global\.v\d)"), 0) << ptx;
  EXPECT_EQ(count(ptx, R"(ld\.global\.f32)"), 8) << ptx;
  EXPECT_EQ(count(ptx, R"(st\.global\.v4\.f32)"), 2) << ptx;
  expect_ptx_assembles(f);
}

TEST(PtxCodegen, NumWarpsSetsTheLaunchBounds) {
  std::vector<float> x(4096), y(4096), out(4096);
  const ir::Function &f =
      specialization(add_kernel<float>, x, y, out, 4096, 4096);
  for (int warps : {1, 2, 8, 32}) {
    std::string ptx = ptx_for(f, "sm_90", warps);
    EXPECT_THAT(ptx, ::testing::HasSubstr(
                         ".maxntid " + std::to_string(32 * warps) + ", 1, 1"));
    expect_ptx_assembles(f, warps);
  }
}

TEST(PtxCodegen, EveryArchitectureIsATarget) {
  std::vector<float> x(4096), y(4096), out(4096);
  const ir::Function &f =
      specialization(add_kernel<float>, x, y, out, 4096, 1024);
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    std::string ptx = ptx_for(f, arch);
    EXPECT_THAT(ptx, ::testing::HasSubstr(std::string(".target ") + arch));
    if (ptxas()) {
      EXPECT_EQ(ptxas_errors(ptx, arch), "") << ptx;
    }
  }
}

auto outer_sum = bl::kernel("outer_sum", [](bl::Ptr<float> a, bl::Ptr<float> b,
                                            bl::Ptr<float> out, bl::i32 m,
                                            bl::i32 n, bl::Const<int> BM,
                                            bl::Const<int> BN) {
  auto rows = bl::program_id(0) * BM + bl::arange(0, BM);
  auto cols = bl::program_id(1) * BN + bl::arange(0, BN);
  auto av = bl::load(a + rows, rows < m);
  auto bv = bl::load(b + cols, cols < n);
  auto r = bl::expand_dims(rows, 1), c = bl::expand_dims(cols, 0);
  bl::store(out + r * n + c, bl::expand_dims(av, 1) + bl::expand_dims(bv, 0),
            (r < m) && (c < n));
});

TEST(PtxCodegen, TwoDimensionalBlocksFromBroadcastRowsAndColumns) {
  std::vector<float> a(64), b(128), out(64 * 128);
  const ir::Function &f = specialization(outer_sum, a, b, out, 64, 128, 16, 64);
  std::string ptx = ptx_for(f);
  // n divisible by 16: rows of the output are 16-byte aligned runs, and the
  // column vector b is loaded 4 floats at a time.
  EXPECT_GT(count(ptx, R"(st\.global\.v4\.f32)"), 0) << ptx;
  EXPECT_GT(count(ptx, R"(ld\.global\.v4\.f32)"), 0) << ptx;
  expect_ptx_assembles(f);
}

} // namespace
