// Layer norm forward (Triton's tutorial 05): one program per row; the row is
// longer than a block, so the mean and the variance are accumulated over a
// bl::range loop of column blocks into carried block accumulators, reduced
// with bl::sum, and a third loop normalizes, scales and shifts. The kernel
// also stores each row's mean and 1/std, as the backward pass needs them.
#include "e2e/support.h"

#include "05-layer-norm/layer_norm.h"

namespace bl = blocc;
using namespace blocc::testing;

namespace {

// The kernel is tutorial 05's (also blocc.kernels.layer_norm_fwd).
using blocc::tutorials::layer_norm_fwd;
auto layer_norm_fwd_f16 =
    blocc::tutorials::make_layer_norm_fwd<bl::half>("layer_norm_fwd_f16");

struct Case {
  int rows, cols, block;
};

struct Reference {
  std::vector<double> y, mean, rstd;
};

Reference reference(const std::vector<double> &x, const std::vector<double> &w,
                    const std::vector<double> &b, int rows, int cols,
                    double eps) {
  Reference r{std::vector<double>(x.size()), std::vector<double>(rows),
              std::vector<double>(rows)};
  for (int i = 0; i < rows; ++i) {
    const double *row = &x[size_t(i) * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c)
      mean += row[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c)
      var += (row[c] - mean) * (row[c] - mean);
    var /= cols;
    r.mean[i] = mean;
    r.rstd[i] = 1 / std::sqrt(var + eps);
    for (int c = 0; c < cols; ++c)
      r.y[size_t(i) * cols + c] = (row[c] - mean) * r.rstd[i] * w[c] + b[c];
  }
  return r;
}

class LayerNormF32 : public ::testing::TestWithParam<Case> {};

TEST_P(LayerNormF32, MatchesFloat64) {
  auto [rows, cols, block] = GetParam();
  const float eps = 1e-5f;
  // An offset mean (3.0) makes the two-pass variance matter.
  auto x = random_floats(size_t(rows) * cols, 2, 4);
  auto w = random_floats(cols, 0.5f, 1.5f);
  auto b = random_floats(cols, -1, 1);
  auto y = poisoned(x.size()), mean = poisoned(rows), rstd = poisoned(rows);
  layer_norm_fwd[{rows}](x, y, w, b, mean, rstd, cols, cols, eps, block);
  auto want = reference({x.begin(), x.end()}, {w.begin(), w.end()},
                        {b.begin(), b.end()}, rows, cols, eps);
  // Sums of up to a few thousand f32 terms of similar size: a relative error
  // of about cols * 2^-24 at worst, far less in practice.
  const double rtol = 1e-6 * (1 + cols / 64.0);
  EXPECT_TRUE(all_close(mean, want.mean, rtol, 0));
  EXPECT_TRUE(all_close(rstd, want.rstd, 10 * rtol, 0));
  // y = (x - mean) * rstd * w + b: the error of rstd scales |y - b|.
  EXPECT_TRUE(all_close(y, want.y, 10 * rtol, 10 * rtol * 4));
}

INSTANTIATE_TEST_SUITE_P(OddShapes, LayerNormF32,
                         ::testing::Values(Case{1, 1, 16}, Case{3, 7, 4},
                                           Case{2, 16, 16}, Case{5, 1000, 256},
                                           Case{4, 1021, 128},
                                           Case{2, 4096, 1024}));

TEST(LayerNormF16, HalfStorageFloatStatistics) {
  const int rows = 6, cols = 777, block = 256;
  const float eps = 1e-5f;
  auto xf = random_floats(size_t(rows) * cols, -2, 2);
  auto wf = random_floats(cols, 0.5f, 1.5f), bf = random_floats(cols, -1, 1);
  auto to_half = [](const std::vector<float> &v) {
    std::vector<bl::half> h(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      h[i] = bl::half(v[i]);
    return h;
  };
  auto to_double = [](const std::vector<bl::half> &v) {
    std::vector<double> d(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      d[i] = float(v[i]);
    return d;
  };
  auto x = to_half(xf), w = to_half(wf), b = to_half(bf);
  std::vector<bl::half> y(x.size(), bl::half(NAN));
  auto mean = poisoned(rows), rstd = poisoned(rows);
  layer_norm_fwd_f16[{rows}](x, y, w, b, mean, rstd, cols, cols, eps, block);
  auto want =
      reference(to_double(x), to_double(w), to_double(b), rows, cols, eps);
  EXPECT_TRUE(all_close(mean, want.mean, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(rstd, want.rstd, 1e-5, 0));
  std::vector<double> got = to_double(y);
  std::vector<float> got_f(got.begin(), got.end());
  // One f16 rounding of |y| <= ~6: 2^-11 relative, plus an absolute term
  // near zero.
  EXPECT_TRUE(all_close(got_f, want.y, 1e-3, 1e-3));
}

} // namespace
