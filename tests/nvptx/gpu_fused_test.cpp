// Fused kernels on the GPU: row softmax (a loop over rows, the row max and
// sum reduced across warps), layer norm forward (carried block
// accumulators over column blocks, then normalized), and control flow
// (bl::range loops carrying blocks and scalars, bl::if_ with results on
// arguments, on loaded scalars and on the induction variable). Compared
// with the CPU backend within float tolerance (the GPU sums in a tree) and
// with a float64 host reference; odd shapes, poisoned outputs. Skipped
// (reported as skipped) where no GPU is present; the PTX is
// ptxas-assembled everywhere.
#include "branches_kernel.h"
#include "nvptx/support.h"

#include "05-layer-norm/layer_norm.h"

#include <algorithm>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

auto softmax = bl::kernel("softmax", [](bl::Ptr<float> out, bl::Ptr<float> in,
                                        bl::i32 in_stride, bl::i32 out_stride,
                                        bl::i32 n_rows, bl::i32 n_cols,
                                        bl::Const<int> BLOCK) {
  for (auto row : bl::range(bl::program_id(0), n_rows, bl::num_programs(0))) {
    auto cols = bl::arange(0, BLOCK);
    auto mask = cols < n_cols;
    auto x = bl::load(in + row * in_stride + cols, mask, -INFINITY);
    auto numerator = bl::exp(x - bl::max(x, 0));
    bl::store(out + row * out_stride + cols, numerator / bl::sum(numerator, 0),
              mask);
  }
});

struct SoftmaxCase {
  int rows, cols, programs, warps;
};

class GpuSoftmax : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(GpuSoftmax, MatchesTheCpuBackendAndFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto [rows, cols, programs, warps] = GetParam();
  const int block = next_power_of_two(cols);
  const int stride = cols + 3;
  auto x = random_values<float>(size_t(rows) * stride, -80, 80);
  DeviceBuffer<float> dx(x);
  auto dout = poisoned_on_gpu<float>(size_t(rows) * cols);
  softmax[{programs}].with(on(Backend::Gpu, warps))(dout, dx, stride, cols,
                                                    rows, cols, block);
  auto cpu = poisoned<float>(size_t(rows) * cols);
  softmax[{programs}].with(kCpu)(cpu, x, stride, cols, rows, cols, block);
  std::vector<float> gpu = dout.to_host();
  EXPECT_TRUE(all_written(gpu));
  double tolerance = 2e-6 + 1e-7 * std::log2(block);
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c)
      m = std::max(m, double(x[size_t(r) * stride + c]));
    for (int c = 0; c < cols; ++c)
      s += std::exp(x[size_t(r) * stride + c] - m);
    for (int c = 0; c < cols; ++c) {
      size_t at = size_t(r) * cols + c;
      double want = std::exp(x[size_t(r) * stride + c] - m) / s;
      ASSERT_NEAR(gpu[at], want, tolerance * std::max(want, 1e-30) + 1e-30)
          << "row " << r << " col " << c;
      ASSERT_NEAR(gpu[at], cpu[at], tolerance * std::max(want, 1e-30) + 1e-30)
          << "row " << r << " col " << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuSoftmax,
    ::testing::Values(SoftmaxCase{1, 1, 1, 4}, SoftmaxCase{5, 3, 2, 4},
                      SoftmaxCase{7, 97, 3, 4}, SoftmaxCase{13, 1000, 4, 4},
                      SoftmaxCase{3, 4093, 2, 8}, SoftmaxCase{2, 8191, 1, 16}));

// Tutorial 05's forward kernel (blocc.kernels.layer_norm_fwd).
using blocc::tutorials::layer_norm_fwd;

struct NormCase {
  int rows, cols, block;
};

class GpuLayerNorm : public ::testing::TestWithParam<NormCase> {};

TEST_P(GpuLayerNorm, MatchesTheCpuBackendAndFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  auto [rows, cols, block] = GetParam();
  const float eps = 1e-5f;
  auto x = random_values<float>(size_t(rows) * cols, -4, 6);
  auto w = random_values<float>(cols, 0.5, 1.5);
  auto b = random_values<float>(cols, -1, 1);
  DeviceBuffer<float> dx(x), dw(w), db(b);
  auto dy = poisoned_on_gpu<float>(x.size());
  auto dmean = poisoned_on_gpu<float>(rows),
       drstd = poisoned_on_gpu<float>(rows);
  layer_norm_fwd[{rows}](dx, dy, dw, db, dmean, drstd, cols, cols, eps, block);
  auto y = poisoned<float>(x.size());
  auto mean = poisoned<float>(rows), rstd = poisoned<float>(rows);
  layer_norm_fwd[{rows}].with(kCpu)(x, y, w, b, mean, rstd, cols, cols, eps,
                                    block);
  std::vector<float> gy = dy.to_host(), gmean = dmean.to_host(),
                     grstd = drstd.to_host();
  EXPECT_TRUE(all_written(gy));
  for (int r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * cols];
    double m = 0, var = 0;
    for (int c = 0; c < cols; ++c)
      m += row[c];
    m /= cols;
    for (int c = 0; c < cols; ++c)
      var += (row[c] - m) * (row[c] - m);
    var /= cols;
    double rs = 1 / std::sqrt(var + eps);
    EXPECT_NEAR(gmean[r], m, 1e-5);
    EXPECT_NEAR(gmean[r], mean[r], 1e-5);
    EXPECT_NEAR(grstd[r], rs, 1e-5 * rs);
    EXPECT_NEAR(grstd[r], rstd[r], 1e-5 * rs);
    for (int c = 0; c < cols; ++c) {
      size_t at = size_t(r) * cols + c;
      double want = (row[c] - m) * rs * w[c] + b[c];
      ASSERT_NEAR(gy[at], want, 1e-4 * (1 + std::abs(want))) << r << "," << c;
      ASSERT_NEAR(gy[at], y[at], 1e-4 * (1 + std::abs(want))) << r << "," << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuLayerNorm,
                         ::testing::Values(NormCase{1, 1, 16},
                                           NormCase{3, 7, 4},
                                           NormCase{5, 1021, 256},
                                           NormCase{4, 4099, 1024},
                                           NormCase{2, 257, 2048}));

// bl::if_ on an argument, on a loaded scalar and on the induction variable
// (tests/branches_kernel.h).
using blocc::testing::branches;

TEST(GpuControlFlow, BranchesAndLoopsMatchTheCpuBackendBitForBit) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const int block = 64;
  for (int n : {1, 150, 1009}) {
    for (int mode : {1, 2, 3}) {
      for (int steps : {0, 1, 7}) {
        SCOPED_TRACE("n " + std::to_string(n) + " mode " +
                     std::to_string(mode) + " steps " + std::to_string(steps));
        const int programs = bl::cdiv(n, block);
        auto x = random_values<float>(n, -5, 5);
        auto flags = random_values<float>(programs, 0, 1);
        DeviceBuffer<float> dx(x), dflags(flags);
        auto dout = poisoned_on_gpu<float>(n);
        auto dtaken = poisoned_on_gpu<int32_t>(programs);
        branches[{programs}](dx, dflags, dout, dtaken, n, mode, steps, block);
        auto out = poisoned<float>(n);
        auto taken = poisoned<int32_t>(programs);
        branches[{programs}].with(kCpu)(x, flags, out, taken, n, mode, steps,
                                        block);
        std::vector<float> gout = dout.to_host();
        std::vector<int32_t> gtaken = dtaken.to_host();
        EXPECT_TRUE(all_written(gout));
        EXPECT_TRUE(same_bits(gout, out));
        EXPECT_TRUE(same_bits(gtaken, taken));
      }
    }
  }
}

// A loop that counts down (negative step) and one that never runs.
auto countdown = bl::kernel("countdown", [](bl::Ptr<int32_t> out, bl::i32 hi,
                                            bl::i32 lo, bl::i32 step) {
  auto acc = bl::zeros({32}, bl::int32);
  auto lanes = bl::arange(0, 32);
  for (auto i : bl::range(hi, lo, step))
    acc = acc * 3 + i + lanes;
  bl::store(out + lanes, acc);
});

TEST(GpuControlFlow, LoopsRunTheInterpretersTripCounts) {
  BLOCC_REQUIRE_GPU();
  for (auto [hi, lo, step] : {std::tuple{10, 0, -3}, std::tuple{0, 10, 3},
                              std::tuple{5, 5, 1}, std::tuple{7, 2, 1}}) {
    SCOPED_TRACE(std::to_string(hi) + " " + std::to_string(lo) + " " +
                 std::to_string(step));
    auto dout = poisoned_on_gpu<int32_t>(32);
    countdown[{1}](dout, hi, lo, step);
    auto cpu = poisoned<int32_t>(32);
    countdown[{1}].with(kCpu)(cpu, hi, lo, step);
    EXPECT_TRUE(same_bits(dout.to_host(), cpu));
  }
}

TEST(GpuFusedPtx, SoftmaxLayerNormAndBranchesAssemble) {
  std::vector<float> f;
  std::vector<int32_t> i;
  for (int warps : {4, 8, 16})
    expect_ptx_assembles(
        specialization(softmax, f, f, 4099, 4096, 7, 4096, 4096), warps);
  expect_ptx_assembles(specialization(softmax, f, f, 4, 3, 5, 3, 4));
  expect_ptx_assembles(specialization(layer_norm_fwd, f, f, f, f, f, f, 4099,
                                      4099, 1e-5f, 1024));
  expect_ptx_assembles(specialization(branches, f, f, f, i, 150, 1, 7, 64));
  expect_ptx_assembles(specialization(countdown, i, 10, 0, -3));
  // The row max and the row sum: butterflies, then four warps' partials
  // through shared memory; the row stays in registers (no local memory).
  std::string ptx =
      ptx_for(specialization(softmax, f, f, 4096, 4096, 7, 4096, 4096));
  EXPECT_THAT(ptx, ::testing::HasSubstr("shfl.sync.bfly.b32"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("ld.global.v4.f32"));
  EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".local")));
}

} // namespace
