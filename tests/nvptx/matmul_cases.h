// The matmul cases of the GPU tests of pipelined tensor-core loops
// (gpu_pipelined_dot_test.cpp, gpu_tma_test.cpp): a shape, its tiles, warps
// and stages, f16 or bf16 inputs; every shape in 1 to 4 stages in both
// types; and the check of a float32 product against float64.
#pragma once

#include "nvptx/support.h"

#include <string>
#include <vector>

namespace blocc::gpu_testing {

struct MatmulCase {
  int m, n, k, bm, bn, bk, warps, stages;
  bool bf16;
};

inline std::string
matmul_case_name(const ::testing::TestParamInfo<MatmulCase> &info) {
  const MatmulCase &c = info.param;
  return std::string(c.bf16 ? "bf16_" : "f16_") + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k) + "_tile" +
         std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" +
         std::to_string(c.bk) + "_warps" + std::to_string(c.warps) + "_stages" +
         std::to_string(c.stages);
}

/// The shapes of the matmuls whose tiles TMA copies: many iterations;
/// tails of M, N and K (N and K multiples of 16: rows of a multiple of 16
/// bytes, as TMA needs); fewer iterations than stages; none; 8 warps on
/// 128 x 256 tiles; rows of 64 bytes (BK = 32); K = 100, whose rows TMA
/// cannot copy (through pointers instead).
/// The body of a matmul C = A B whose tiles are read and C written
/// through tensor descriptors, its K loop compiled as `options` says.
template <typename T>
void descriptor_matmul_body(Ptr<T> a, Ptr<T> b, Ptr<float> c, i32 M, i32 N,
                            i32 K, int BM, int BN, int BK,
                            LoopOptions options = {}) {
  auto pid_m = program_id(0), pid_n = program_id(1);
  auto a_desc = make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
  auto b_desc = make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
  auto acc = zeros({BM, BN}, float32);
  for (auto k : range(0, K, BK, options))
    acc =
        dot(load(a_desc, {pid_m * BM, k}), load(b_desc, {k, pid_n * BN}), acc);
  auto c_desc = make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
  store(c_desc, {pid_m * BM, pid_n * BN}, acc);
}

inline std::vector<MatmulCase> tma_matmul_shapes() {
  return {{256, 256, 256, 128, 128, 64, 4, 0, false},
          {300, 208, 144, 128, 128, 64, 4, 0, false},
          {128, 128, 48, 128, 128, 64, 4, 0, false},
          {128, 128, 0, 128, 128, 64, 4, 0, false},
          {200, 272, 336, 128, 256, 64, 8, 0, false},
          {100, 96, 80, 64, 64, 32, 4, 0, false},
          {130, 150, 100, 128, 128, 64, 4, 0, false}};
}

/// Each shape in f16 and bf16, in 1 to 4 stages.
inline std::vector<MatmulCase>
in_every_stage_count(const std::vector<MatmulCase> &shapes) {
  std::vector<MatmulCase> out;
  for (bool bf16 : {false, true})
    for (int stages = 1; stages <= 4; ++stages)
      for (MatmulCase c : shapes) {
        c.stages = stages;
        c.bf16 = bf16;
        out.push_back(c);
      }
  return out;
}

/// got = a [m, k] @ b [k, n] within float32's rounding: exact products,
/// K + 1 roundings of f32 sums in any order.
template <typename T>
void expect_matmul_matches_float64(const std::vector<T> &a,
                                   const std::vector<T> &b,
                                   const std::vector<float> &got,
                                   const MatmulCase &c) {
  ASSERT_TRUE(all_written(got));
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      double want = 0, scale = 0;
      for (int q = 0; q < c.k; ++q) {
        double product = as_double(a[size_t(i) * c.k + q]) *
                         as_double(b[size_t(q) * c.n + j]);
        want += product;
        scale += std::abs(product);
      }
      double value = got[size_t(i) * c.n + j];
      ASSERT_LE(std::abs(value - want), (c.k + 1) * 0x1p-24 * scale)
          << "element (" << i << ", " << j << "): got " << value << ", want "
          << want;
    }
}

/// Launches `kernel(a, b, c, M, N, K, BM, BN, BK)` (c = a @ b, one tile of
/// BM x BN a program) on the GPU for case `c` in T (half or bfloat16) on
/// fresh random inputs, c poisoned first, and checks it against float64.
template <typename T, typename Kernel>
void expect_gpu_matmul_matches_float64(Kernel &kernel, const MatmulCase &c) {
  auto a = random_values<T>(size_t(c.m) * c.k, -2, 2);
  auto b = random_values<T>(size_t(c.k) * c.n, -2, 2);
  DeviceBuffer<T> da(a), db(b);
  auto dc = poisoned_on_gpu<float>(size_t(c.m) * c.n);
  LaunchOptions options = on(Backend::Gpu, c.warps);
  options.num_stages = c.stages;
  ::blocc::Grid grid{::blocc::cdiv(c.m, c.bm), ::blocc::cdiv(c.n, c.bn)};
  kernel[grid].with(options)(da, db, dc, c.m, c.n, c.k, c.bm, c.bn, c.bk);
  expect_matmul_matches_float64(a, b, dc.to_host(), c);
}

/// The check above for case `c` in its input type: `kernel_of(T{})` is
/// the kernel for inputs of type T (half, or bfloat16 where c.bf16).
/// Skipped without a GPU.
template <typename KernelOf>
void expect_gpu_matmul_in_its_type_matches_float64(KernelOf kernel_of,
                                                   const MatmulCase &c) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  if (c.bf16)
    expect_gpu_matmul_matches_float64<::blocc::bfloat16_t>(
        kernel_of(::blocc::bfloat16_t{}), c);
  else
    expect_gpu_matmul_matches_float64<::blocc::half>(kernel_of(::blocc::half{}),
                                                     c);
}

} // namespace blocc::gpu_testing
