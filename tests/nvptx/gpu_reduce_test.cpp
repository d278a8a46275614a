// Reductions on the GPU against the CPU backend and a float64 host
// reference: sum, max, min, prod, xor_sum, argmax/argmin (ties pick the
// smaller index), a custom combine and a two-operand combine, along each
// axis of 2-D blocks whose shapes put the reduced dimension in one thread,
// across lanes, and across warps (with replicas where the block is smaller
// than the CTA's tile). Sizes are odd (1, primes, not multiples of the
// block); masked-off lanes hold the reduction's identity. Float sums may
// differ from the CPU backend's in the last bits (the GPU combines in a
// tree), so floats compare within a tolerance; integers, max/min and
// indices exactly. Skipped (reported as skipped) where no GPU is present;
// the PTX is ptxas-assembled everywhere.
#include "nvptx/support.h"

#include <algorithm>

namespace bl = blocc;
using namespace blocc::gpu_testing;

namespace {

// Every reduction of an m x n matrix held in one [R, C] block, along AXIS;
// L = C for AXIS 0, R for AXIS 1 (the result's length).
auto reductions = bl::kernel(
    "reductions",
    [](bl::Ptr<float> x, bl::Ptr<int32_t> k, bl::Ptr<float> f_out,
       bl::Ptr<int32_t> i_out, bl::i32 m, bl::i32 n, bl::Const<int> AXIS,
       bl::Const<int> R, bl::Const<int> C, bl::Const<int> L) {
      auto r = bl::expand_dims(bl::arange(0, R), 1);
      auto c = bl::expand_dims(bl::arange(0, C), 0);
      auto mask = (r < m) && (c < n);
      auto v = bl::load(x + r * n + c, mask, 0.f);
      auto kv = bl::load(k + r * n + c, mask, 0);
      auto low = bl::where(mask, v, INFINITY);
      auto high = bl::where(mask, v, -INFINITY);
      auto near_one = bl::where(mask, 1.f + v * 0.01f, 1.f);
      auto k_high = bl::where(mask, kv, -1000000);
      int axis = AXIS;
      auto out = bl::arange(0, L);
      auto in_range = out < (axis == 0 ? n : m);
      auto squares = bl::reduce(
          v * v, axis, [](bl::Tensor a, bl::Tensor b) { return a + b; });
      // max |v| and the k beside it (ties: the larger k), two operands.
      auto pair = bl::reduce(
          {bl::abs(v), k_high}, axis,
          [](const std::vector<bl::Tensor> &a,
             const std::vector<bl::Tensor> &b) {
            auto take_b = (b[0] > a[0]) || ((b[0] == a[0]) && (b[1] > a[1]));
            return std::vector<bl::Tensor>{bl::where(take_b, b[0], a[0]),
                                           bl::where(take_b, b[1], a[1])};
          });
      bl::store(f_out + out, bl::sum(v, axis), in_range);
      bl::store(f_out + L + out, bl::max(high, axis), in_range);
      bl::store(f_out + 2 * L + out, bl::min(low, axis), in_range);
      bl::store(f_out + 3 * L + out, bl::prod(near_one, axis), in_range);
      bl::store(f_out + 4 * L + out, squares, in_range);
      bl::store(f_out + 5 * L + out, pair[0], in_range);
      bl::store(i_out + out, bl::xor_sum(kv, axis), in_range);
      bl::store(i_out + L + out, bl::argmax(high, axis), in_range);
      bl::store(i_out + 2 * L + out, bl::argmin(low, axis), in_range);
      bl::store(i_out + 3 * L + out, bl::argmax(k_high, axis), in_range);
      bl::store(i_out + 4 * L + out, bl::sum(kv, axis), in_range);
      bl::store(i_out + 5 * L + out, pair[1], in_range);
    });

struct Case {
  int m, n, axis, rows, cols, warps;
};

std::string name(const ::testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return "m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_axis" +
         std::to_string(c.axis) + "_block" + std::to_string(c.rows) + "x" +
         std::to_string(c.cols) + "_warps" + std::to_string(c.warps);
}

class GpuReduce : public ::testing::TestWithParam<Case> {};

TEST_P(GpuReduce, EveryKindMatchesTheCpuBackendAndFloat64) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  const Case c = GetParam();
  const int len = c.axis == 0 ? c.cols : c.rows;
  const int outs = c.axis == 0 ? c.n : c.m;
  const size_t size = size_t(c.m) * c.n;
  auto x = random_values<float>(size, -10, 10);
  // Few distinct integers: argmax of k meets ties.
  auto k = random_values<int32_t>(size, -20, 20);
  DeviceBuffer<float> dx(x);
  DeviceBuffer<int32_t> dk(k);
  auto df = poisoned_on_gpu<float>(6 * len);
  auto di = poisoned_on_gpu<int32_t>(6 * len);
  reductions[{1}].with(on(Backend::Gpu, c.warps))(dx, dk, df, di, c.m, c.n,
                                                  c.axis, c.rows, c.cols, len);
  auto f = poisoned<float>(6 * len);
  auto i = poisoned<int32_t>(6 * len);
  reductions[{1}].with(kCpu)(x, k, f, i, c.m, c.n, c.axis, c.rows, c.cols, len);
  std::vector<float> gf = df.to_host();
  std::vector<int32_t> gi = di.to_host();
  auto at = [&](int line, int j) {
    return c.axis == 0 ? size_t(j) * c.n + line : size_t(line) * c.n + j;
  };
  const int along = c.axis == 0 ? c.m : c.n;
  for (int o = 0; o < outs; ++o) {
    SCOPED_TRACE("output " + std::to_string(o));
    double sum = 0, squares = 0, prod = 1, hi = -INFINITY, lo = INFINITY;
    int arg_hi = 0, arg_lo = 0, arg_k = 0, xor_k = 0, sum_k = 0;
    for (int j = 0; j < along; ++j) {
      double v = x[at(o, j)];
      int kv = k[at(o, j)];
      sum += v;
      squares += v * v;
      prod *= double(1.f + float(v) * 0.01f);
      if (v > hi)
        hi = v, arg_hi = j;
      if (v < lo)
        lo = v, arg_lo = j;
      if (kv > k[at(o, arg_k)])
        arg_k = j;
      xor_k ^= kv;
      sum_k += kv;
    }
    double tolerance = 1e-5 * (1 + along);
    EXPECT_NEAR(gf[o], sum, tolerance * 10);
    EXPECT_EQ(gf[len + o], float(hi));
    EXPECT_EQ(gf[2 * len + o], float(lo));
    EXPECT_NEAR(gf[3 * len + o], prod, 1e-5 * along * std::abs(prod));
    EXPECT_EQ(gf[5 * len + o], f[5 * len + o]);
    EXPECT_EQ(gi[o], xor_k);
    EXPECT_EQ(gi[len + o], arg_hi);
    EXPECT_EQ(gi[2 * len + o], arg_lo);
    EXPECT_EQ(gi[3 * len + o], arg_k);
    EXPECT_EQ(gi[4 * len + o], sum_k);
    EXPECT_EQ(gi[5 * len + o], i[5 * len + o]);
    EXPECT_NEAR(gf[4 * len + o], squares, tolerance * 100);
    for (int kind = 0; kind < 6; ++kind)
      EXPECT_EQ(gi[kind * len + o], i[kind * len + o]) << "kind " << kind;
    for (int kind = 0; kind < 6; ++kind)
      EXPECT_NEAR(gf[kind * len + o], f[kind * len + o],
                  tolerance * (kind == 4 ? 100 : 10))
          << "kind " << kind;
  }
  // Unwritten tails stay poisoned on both.
  for (int o = outs; o < len; ++o) {
    EXPECT_TRUE(std::isnan(gf[o]));
    EXPECT_EQ(gi[o], poison<int32_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuReduce,
    ::testing::Values(
        // one element; a whole 1 x 1 block
        Case{1, 1, 1, 1, 1, 1}, Case{1, 1, 0, 1, 1, 4},
        // rows across lanes and warps, axis 1 (a row per output)
        Case{3, 1021, 1, 4, 1024, 4}, Case{7, 257, 1, 8, 512, 8},
        Case{5, 61, 1, 8, 64, 4},
        // columns: the reduced dimension across warps (axis 0)
        Case{131, 3, 0, 256, 4, 4}, Case{67, 29, 0, 128, 32, 4},
        Case{17, 33, 0, 32, 64, 2},
        // a block smaller than the CTA's tile: replicas must not count twice
        Case{2, 3, 1, 2, 4, 4}, Case{3, 2, 0, 4, 2, 8}),
    name);

// A custom combine reducing each row to a scalar that every thread holds.
auto row_norms =
    bl::kernel("row_norms", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                               bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto v = bl::load(x + row * n + cols, cols < n, 0.f);
      auto total = bl::reduce(v * v, 0,
                              [](bl::Tensor a, bl::Tensor b) { return a + b; });
      bl::store(out + row, bl::sqrt(total));
    });

TEST(GpuReduce, CustomCombineToAScalarPerRow) {
  BLOCC_REQUIRE_GPU();
  BLOCC_SEED_TRACE();
  for (int n : {1, 31, 1000, 4093}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    int rows = 37, block = 1;
    while (block < n)
      block *= 2;
    auto x = random_values<float>(size_t(rows) * n, -3, 3);
    DeviceBuffer<float> dx(x);
    auto dout = poisoned_on_gpu<float>(rows);
    row_norms[{rows}](dx, dout, n, block);
    auto cpu = poisoned<float>(rows);
    row_norms[{rows}].with(kCpu)(x, cpu, n, block);
    std::vector<float> gpu = dout.to_host();
    for (int r = 0; r < rows; ++r) {
      double s = 0;
      for (int j = 0; j < n; ++j)
        s += double(x[size_t(r) * n + j]) * x[size_t(r) * n + j];
      EXPECT_NEAR(gpu[r], std::sqrt(s), 1e-6 * std::sqrt(s) * 4 + 1e-7);
      EXPECT_NEAR(gpu[r], cpu[r], 1e-6 * std::sqrt(s) * 4 + 1e-7);
    }
  }
}

TEST(GpuReducePtx, AssemblesAndShufflesAcrossLanes) {
  std::vector<float> f;
  std::vector<int32_t> i;
  for (const Case &c : {Case{3, 1021, 1, 4, 1024, 4},
                        Case{67, 29, 0, 128, 32, 4}, Case{2, 3, 1, 2, 4, 4}}) {
    int len = c.axis == 0 ? c.cols : c.rows;
    const ir::Function &fn = specialization(reductions, f, i, f, i, c.m, c.n,
                                            c.axis, c.rows, c.cols, len);
    expect_ptx_assembles(fn, c.warps);
    std::string ptx = ptx_for(fn, "sm_90", c.warps);
    // Along rows, lanes share a row: butterflies. Down the columns of the
    // 128 x 32 block each lane owns a column and the warps split the
    // rows: no shuffle, the warps' partials meet in shared memory.
    if (c.axis == 1)
      EXPECT_THAT(ptx, ::testing::HasSubstr("shfl.sync.bfly.b32"));
    else
      EXPECT_THAT(ptx, ::testing::AllOf(
                           ::testing::Not(::testing::HasSubstr("shfl.sync")),
                           ::testing::HasSubstr("st.shared")));
    EXPECT_THAT(ptx, ::testing::Not(::testing::HasSubstr(".local")));
  }
  const ir::Function &norms = specialization(row_norms, f, f, 4093, 4096);
  expect_ptx_assembles(norms);
  // Four warps: the row's partial sums meet in shared memory.
  std::string ptx = ptx_for(norms);
  EXPECT_THAT(ptx, ::testing::HasSubstr("st.shared"));
  EXPECT_THAT(ptx, ::testing::HasSubstr("bar.sync"));
}

} // namespace
