// Tiles copied by the Tensor Memory Accelerator (backends/nvptx/tma.h,
// lower_tma.cpp): a matmul whose A and B tiles are read through tensor
// descriptors, on warpgroup MMAs (sm_90a), pipelined in 2 to 4 stages
// (each stage's copies complete on its mbarrier) or not at all (one copy
// waited for at once), with tails of M, N and K that TMA's zero fill pads,
// K = 0, 4 and 8 warps, f16 and bf16, against a float64 product within
// the f32 accumulator's rounding bound, outputs poisoned first. Where the
// host cannot encode a tensor map (a row stride not a multiple of 16
// bytes), the same kernel reads its tiles through pointers and gives the
// same results. C is stored through a descriptor too: on sm_90a TMA copies
// it out of shared memory, clipping the tails. On a GPU other than Hopper
// the kernel runs without TMA.
// The PTX for sm_90a issues cp.async.bulk.tensor and no cp.async, takes
// one 128-byte tensor map per descriptor, and assembles without spills;
// for sm_80 and sm_90 (no warpgroup MMAs) it copies no tensor. The same
// matmul through block pointers advanced along K (their loads and the
// store checking every dimension: descriptor accesses with 64-bit
// offsets, clamped into TMA's 32-bit coordinates) takes the same copies.
#include "nvptx/matmul_cases.h"

#include <algorithm>
#include <cmath>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

template <typename T> auto &descriptor_matmul() {
  static auto k = bl::kernel(
      "gpu_tma_matmul",
      [](bl::Ptr<T> a, bl::Ptr<T> b, bl::Ptr<float> c, bl::i32 M, bl::i32 N,
         bl::i32 K, bl::Const<int> BM, bl::Const<int> BN, bl::Const<int> BK) {
        descriptor_matmul_body(a, b, c, M, N, K, BM, BN, BK);
      });
  return k;
}

/// The matmul through block pointers: A's and B's advanced along K each
/// iteration, every access checking both dimensions.
template <typename T> auto &block_pointer_matmul() {
  static auto k = bl::kernel("gpu_tma_block_ptr_matmul", [](bl::Ptr<T> a,
                                                            bl::Ptr<T> b,
                                                            bl::Ptr<float> c,
                                                            bl::i32 M,
                                                            bl::i32 N,
                                                            bl::i32 K,
                                                            bl::Const<int> BM,
                                                            bl::Const<int> BN,
                                                            bl::Const<int> BK) {
    auto row = bl::program_id(0) * BM, col = bl::program_id(1) * BN;
    auto a_tile =
        bl::make_block_ptr(a, {M, K}, {K, 1}, {row, 0}, {BM, BK}, {1, 0});
    auto b_tile =
        bl::make_block_ptr(b, {K, N}, {N, 1}, {0, col}, {BK, BN}, {1, 0});
    auto acc = bl::zeros({BM, BN}, bl::float32);
    for (auto k : bl::range(0, K, BK)) {
      (void)k;
      acc = bl::dot(bl::load(a_tile, {0, 1}), bl::load(b_tile, {0, 1}), acc);
      a_tile = bl::advance(a_tile, {0, BK});
      b_tile = bl::advance(b_tile, {BK, 0});
    }
    bl::store(
        bl::make_block_ptr(c, {M, N}, {N, 1}, {row, col}, {BM, BN}, {1, 0}),
        acc, {0, 1});
  });
  return k;
}

std::vector<MatmulCase> cases() {
  return in_every_stage_count(tma_matmul_shapes());
}

class GpuTmaMatmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuTmaMatmul, MatchesFloat64) {
  expect_gpu_matmul_in_its_type_matches_float64(
      [](auto t) -> auto & { return descriptor_matmul<decltype(t)>(); },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stages, GpuTmaMatmul, ::testing::ValuesIn(cases()),
                         matmul_case_name);

class GpuTmaBlockPtrMatmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(GpuTmaBlockPtrMatmul, MatchesFloat64) {
  expect_gpu_matmul_in_its_type_matches_float64(
      [](auto t) -> auto & { return block_pointer_matmul<decltype(t)>(); },
      GetParam());
}

INSTANTIATE_TEST_SUITE_P(Stages, GpuTmaBlockPtrMatmul,
                         ::testing::ValuesIn(cases()), matmul_case_name);

// An empty A (M = 0) whose tiles the loop still loads: its tensor map
// reads a zero of blocc's own, never A's (empty) buffer; C's map (M = 0
// too) writes a scratch element of blocc's own, never C: the kernel runs
// without a fault and C keeps its poison.
TEST(GpuTmaMatmulEmpty, AnEmptyArrayIsReadAsZerosWithoutTouchingIt) {
  BLOCC_REQUIRE_GPU();
  const int n = 128, k = 128;
  DeviceBuffer<bl::half> da(std::vector<bl::half>{});
  DeviceBuffer<bl::half> db(random_values<bl::half>(size_t(k) * n, -2, 2));
  auto dc = poisoned_on_gpu<float>(size_t(n) * n);
  for (int stages : {1, 3}) {
    LaunchOptions options = on(Backend::Gpu, 4);
    options.num_stages = stages;
    descriptor_matmul<bl::half>()[{1, 1}].with(options)(da, db, dc, 0, n, k,
                                                        128, 128, 64);
    std::vector<float> c = dc.to_host();
    EXPECT_TRUE(
        std::all_of(c.begin(), c.end(), [](float v) { return std::isnan(v); }))
        << stages << " stages: the kernel stored rows past M = 0";
  }
}

template <typename Kernel>
std::string ptx_of(Kernel &kernel, int k, int stages, const std::string &arch,
                   int bk = 64) {
  std::vector<bl::half> none;
  std::vector<float> out;
  const ir::Function &f =
      specialization(kernel, none, none, out, 256, 256, k, 128, 128, bk);
  nvptx::CompileOptions options;
  options.arch = nvptx::GpuArch::parse(arch);
  options.num_stages = stages;
  return nvptx::ptx_of(*nvptx::compile(f, options));
}

std::string ptx_of(int k, int stages, const std::string &arch, int bk = 64) {
  return ptx_of(descriptor_matmul<bl::half>(), k, stages, arch, bk);
}

// Three descriptors, three tensor maps after the user's six parameters;
// each copy waits on its stage's mbarrier; the B tile of 128 columns (two
// 128-byte atoms) takes two boxes a copy, C's (128 floats a row) four; no
// thread copies with cp.async.
TEST(GpuTmaPtx, CopiesTilesWithTheTensorMemoryAccelerator) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  for (int stages = 1; stages <= 4; ++stages) {
    SCOPED_TRACE(std::to_string(stages) + " stages");
    std::string ptx = ptx_of(256, stages, "sm_90a");
    EXPECT_EQ(occurrences(ptx, ".param .align 64 .b8"), 3);
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.shared::cluster.global"
                               ".tile.mbarrier::complete_tx::bytes"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.try_wait.parity.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.expect_tx.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("wgmma.mma_async"));
    EXPECT_THAT(ptx, Not(HasSubstr("cp.async.cg")));
    EXPECT_THAT(ptx, Not(HasSubstr("ldmatrix")));
    // Pipelined: S - 1 iterations issued before the loop and one in it,
    // three boxes each (A, and B's two atoms); unpipelined: three; then
    // C's four.
    EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor"),
              (stages == 1 ? 3 : 3 * stages) + 4);
    EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor.2d.global.shared::cta"),
              4);
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.wait_group.read 0;"));
    if (ptxas()) {
      PtxasResult r = run_ptxas(ptx, "sm_90a", "-v");
      EXPECT_TRUE(r.ok) << r.output;
      EXPECT_THAT(r.output, HasSubstr(" 0 bytes spill stores, 0 bytes "
                                      "spill loads"));
    }
  }
  // Rows of 64 bytes: the 64-byte swizzle, one box a tile.
  std::string narrow = ptx_of(256, 3, "sm_90a", 32);
  EXPECT_EQ(occurrences(narrow, "cp.async.bulk.tensor"), 9 + 4);
  if (ptxas()) {
    EXPECT_TRUE(run_ptxas(narrow, "sm_90a").ok);
  }
}

// No warpgroup MMAs: the tiles are read through pointers, and sm_80 and
// sm_90 store through pointers too; a row stride the host cannot encode
// (A's K = 100 halves: 200 bytes) reads that operand through pointers
// while TMA still copies B and C (their maps alone).
TEST(GpuTmaPtx, PointersWhereTmaCannotCopy) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx = ptx_of(256, 3, arch);
    EXPECT_THAT(ptx, Not(HasSubstr("cp.async.bulk"))) << arch;
    EXPECT_THAT(ptx, Not(HasSubstr(".param .align 64"))) << arch;
  }
  std::string unaligned = ptx_of(100, 3, "sm_90a");
  EXPECT_EQ(occurrences(unaligned, ".param .align 64 .b8"), 2);
  EXPECT_THAT(unaligned, HasSubstr("cp.async.bulk.tensor"));
  EXPECT_THAT(unaligned, HasSubstr("wgmma.mma_async"));
  if (ptxas()) {
    EXPECT_TRUE(run_ptxas(unaligned, "sm_90a").ok);
  }
}

// Through block pointers: the same three maps and copies; each 64-bit
// offset clamped to [-2^31, 2^31 - 257] on its way to a 32-bit coordinate
// (here the offsets are program ids and iteration counts, which LLVM knows
// are not negative: only the upper clamp remains). sm_80 copies nothing
// with TMA.
TEST(GpuTmaPtx, BlockPointersCheckingEveryDimensionAreCopiedToo) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  std::string ptx = ptx_of(block_pointer_matmul<bl::half>(), 256, 3, "sm_90a");
  EXPECT_EQ(occurrences(ptx, ".param .align 64 .b8"), 3);
  EXPECT_EQ(occurrences(ptx, "cp.async.bulk.tensor"), 3 * 3 + 4);
  EXPECT_THAT(ptx, HasSubstr("2147483391;"));
  EXPECT_THAT(ptx, HasSubstr("wgmma.mma_async"));
  EXPECT_THAT(ptx, Not(HasSubstr("cp.async.cg")));
  if (ptxas()) {
    PtxasResult r = run_ptxas(ptx, "sm_90a", "-v");
    EXPECT_TRUE(r.ok) << r.output;
  }
  std::string ampere =
      ptx_of(block_pointer_matmul<bl::half>(), 256, 3, "sm_80");
  EXPECT_THAT(ampere, Not(HasSubstr("cp.async.bulk")));
  EXPECT_THAT(ampere, HasSubstr("mma.sync"));
  if (ptxas()) {
    EXPECT_TRUE(run_ptxas(ampere, "sm_80").ok);
  }
}

} // namespace
