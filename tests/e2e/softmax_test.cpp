// Fused row softmax (Triton's tutorial 02): each program instance walks rows
// pid, pid + num_programs, ... and normalizes one whole row held in a block,
// subtracting the row maximum first so that exp cannot overflow. Checked
// against a float64 softmax at odd shapes, with the grid smaller than the
// row count so that the row loop runs more than once.
#include "e2e/support.h"

#include <algorithm>

namespace bl = blocc;
using namespace blocc::testing;

namespace {

template <typename T> auto make_softmax(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> out, bl::Ptr<T> in, bl::i32 in_stride,
                             bl::i32 out_stride, bl::i32 n_rows, bl::i32 n_cols,
                             bl::Const<int> BLOCK) {
    auto first = bl::program_id(0);
    auto step = bl::num_programs(0);
    for (auto row : bl::range(first, n_rows, step)) {
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n_cols;
      // Masked-off lanes read -inf: they do not change the max, and exp
      // turns them into zeros that do not change the sum.
      auto x = bl::load(in + row * in_stride + cols, mask, -INFINITY)
                   .to(bl::float32);
      auto shifted = x - bl::max(x, 0);
      auto numerator = bl::exp(shifted);
      auto denominator = bl::sum(numerator, 0);
      bl::store(out + row * out_stride + cols, numerator / denominator, mask);
    }
  });
}

auto softmax_f32 = make_softmax<float>("softmax_f32");
auto softmax_f16 = make_softmax<bl::half>("softmax_f16");

int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

// Row-wise float64 softmax of the values the kernel actually read.
std::vector<double> reference(const std::vector<double> &x, int rows, int cols,
                              int stride) {
  std::vector<double> y(size_t(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c)
      m = std::max(m, x[size_t(r) * stride + c]);
    for (int c = 0; c < cols; ++c)
      s += std::exp(x[size_t(r) * stride + c] - m);
    for (int c = 0; c < cols; ++c)
      y[size_t(r) * cols + c] = std::exp(x[size_t(r) * stride + c] - m) / s;
  }
  return y;
}

struct Shape {
  int rows, cols;
};

class SoftmaxF32 : public ::testing::TestWithParam<Shape> {};

TEST_P(SoftmaxF32, MatchesFloat64) {
  auto [rows, cols] = GetParam();
  const int block = next_power_of_two(cols);
  const int in_stride = cols + 3; // a padded input: stride != row length
  // Values up to +-80: exp without the max shift would overflow f32.
  auto x = random_floats(size_t(rows) * in_stride, -80, 80);
  auto out = poisoned(size_t(rows) * cols);
  const int programs = std::min(rows, 4);
  softmax_f32[{programs}](out, x, in_stride, cols, rows, cols, block);
  std::vector<double> xd(x.begin(), x.end());
  auto want = reference(xd, rows, cols, in_stride);
  // exp is within a few ulp, and the sum adds at most log2(cols) roundings.
  EXPECT_TRUE(all_close(out, want, 2e-6 + 1e-7 * std::log2(block), 1e-30))
      << rows << "x" << cols;
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int c = 0; c < cols; ++c)
      s += out[size_t(r) * cols + c];
    EXPECT_NEAR(s, 1.0, 1e-5) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(OddShapes, SoftmaxF32,
                         ::testing::Values(Shape{1, 1}, Shape{1, 2},
                                           Shape{7, 13}, Shape{5, 128},
                                           Shape{3, 129}, Shape{17, 1000},
                                           Shape{2, 3001}));

// Half storage, float arithmetic: the result is one f16 rounding away from
// the float64 softmax of the rounded inputs.
TEST(SoftmaxF16, HalfStorageFloatArithmetic) {
  for (Shape s : {Shape{1, 1}, Shape{9, 31}, Shape{4, 257}}) {
    const int block = next_power_of_two(s.cols);
    auto xf = random_floats(size_t(s.rows) * s.cols, -8, 8);
    std::vector<bl::half> x(xf.size()), out(xf.size());
    for (size_t i = 0; i < xf.size(); ++i)
      x[i] = bl::half(xf[i]);
    for (auto &o : out)
      o = bl::half(NAN);
    softmax_f16[{2}](out, x, s.cols, s.cols, s.rows, s.cols, block);
    std::vector<double> xd(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      xd[i] = float(x[i]);
    auto want = reference(xd, s.rows, s.cols, s.cols);
    std::vector<float> got(out.size());
    for (size_t i = 0; i < out.size(); ++i)
      got[i] = float(out[i]);
    // f16 keeps 11 significant bits: half an ulp is 2^-11 relative, and
    // results below f16's normal range keep only an absolute 2^-25.
    EXPECT_TRUE(all_close(got, want, 1e-3, 3e-8)) << s.rows << "x" << s.cols;
  }
}

// A row of equal values (and one of the largest finite floats) must give
// the uniform distribution, not NaN: the shift makes every exponent 0.
TEST(SoftmaxF32, ConstantAndHugeRows) {
  const int rows = 2, cols = 37, block = 64;
  std::vector<float> x(size_t(rows) * cols, 3.25f);
  for (int c = 0; c < cols; ++c)
    x[cols + c] = std::numeric_limits<float>::max();
  auto out = poisoned(x.size());
  softmax_f32[{1}](out, x, cols, cols, rows, cols, block);
  for (float v : out)
    ASSERT_NEAR(v, 1.0 / cols, 1e-7);
}

} // namespace
