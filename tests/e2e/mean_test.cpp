// Mean reductions: the row means of an [M, N] matrix with 2-D blocks
// ([BLOCK_M, BLOCK_N] tiles, a bl::range loop over the columns, bl::sum
// along axis 1), and the mean of a whole vector over every element of a
// block (bl::sum with no axis). Integer inputs are summed in int32 exactly
// and divided in float, as torch.mean on a cast tensor would.
#include "e2e/support.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

auto row_mean =
    bl::kernel("row_mean", [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 m,
                              bl::i32 n, bl::i32 stride, bl::Const<int> BLOCK_M,
                              bl::Const<int> BLOCK_N) {
      auto rows = bl::program_id(0) * BLOCK_M + bl::arange(0, BLOCK_M);
      auto row_mask = rows < m;
      auto acc = bl::zeros({BLOCK_M, BLOCK_N}, bl::float32);
      for (auto start : bl::range(0, n, BLOCK_N)) {
        auto cols = start + bl::arange(0, BLOCK_N);
        auto r = bl::expand_dims(rows, 1), c = bl::expand_dims(cols, 0);
        auto mask = bl::expand_dims(row_mask, 1) & (c < n);
        acc += bl::load(x + r * stride + c, mask, 0.f);
      }
      auto mean = bl::sum(acc, 1) / n.to(bl::float32);
      bl::store(out + rows, mean, row_mask);
    });

// One program: the mean of n int8 values, summed as int32 (Triton promotes
// the sum of narrow integers to int32), divided as float.
auto int8_mean =
    bl::kernel("int8_mean", [](bl::Ptr<int8_t> x, bl::Ptr<float> out, bl::i32 n,
                               bl::Const<int> BLOCK) {
      auto total = bl::zeros({BLOCK}, bl::int32);
      for (auto start : bl::range(0, n, BLOCK)) {
        auto offs = start + bl::arange(0, BLOCK);
        total += bl::load(x + offs, offs < n, 0).to(bl::int32);
      }
      auto sum = bl::sum(total);
      bl::store(out, sum.to(bl::float32) / n.to(bl::float32));
    });

struct Case {
  int m, n, block_m, block_n;
};

class RowMean : public ::testing::TestWithParam<Case> {};

TEST_P(RowMean, MatchesFloat64) {
  auto [m, n, block_m, block_n] = GetParam();
  const int stride = n + 5;
  auto x = random_floats(size_t(m) * stride, -10, 10);
  auto out = poisoned(m);
  row_mean[{bl::cdiv(m, block_m)}](x, out, m, n, stride, block_m, block_n);
  std::vector<double> want(m);
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j)
      s += x[size_t(i) * stride + j];
    want[i] = s / n;
  }
  // The float sum of n terms of magnitude <= 10: an absolute error of about
  // n * 10 * 2^-24 / n per mean in the worst case.
  EXPECT_TRUE(all_close(out, want, 1e-6, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(OddShapes, RowMean,
                         ::testing::Values(Case{1, 1, 1, 16}, Case{1, 1, 16, 1},
                                           Case{7, 13, 4, 8}, Case{5, 1, 8, 4},
                                           Case{33, 97, 16, 32},
                                           Case{64, 64, 16, 64},
                                           Case{3, 5003, 2, 512}));

TEST(Int8Mean, ExactSumThenFloatDivide) {
  for (int n : {1, 2, 127, 1000, 65537}) {
    auto x = random_ints<int8_t>(n, -128, 127);
    auto out = poisoned(1);
    int8_mean[{1}](x, out, n, 256);
    int64_t sum = 0;
    for (int8_t v : x)
      sum += v;
    // Exactly the float division of the exact sum.
    EXPECT_EQ(out[0], float(sum) / float(n)) << "n = " << n;
  }
}

} // namespace
