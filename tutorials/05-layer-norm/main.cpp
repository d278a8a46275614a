// Tutorial 05: layer norm, forward and backward. The kernels are in
// layer_norm.h (Python calls them as blocc.kernels.layer_norm_fwd,
// layer_norm_fwd_row, layer_norm_bwd_dx and layer_norm_bwd_dwdb); this
// program checks y, mean and rstd of both forward kernels, and dx, dw and
// db, against float64 on every backend at several shapes, and times the
// forward and the backward pass.
#include "common/tutorial.h"
#include "layer_norm.h"

#include <algorithm>
#include <bit>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using namespace blocc::tutorials;

struct Reference {
  std::vector<double> y, mean, rstd, dx, dw, db;
};

Reference float64_layer_norm(const std::vector<float> &x,
                             const std::vector<float> &w,
                             const std::vector<float> &b,
                             const std::vector<float> &dy, int rows, int n,
                             double eps) {
  Reference r{std::vector<double>(x.size()), std::vector<double>(rows),
              std::vector<double>(rows),     std::vector<double>(x.size()),
              std::vector<double>(n),        std::vector<double>(n)};
  std::vector<double> xhat(n), wdy(n);
  for (int i = 0; i < rows; ++i) {
    const size_t at = size_t(i) * n;
    double mean = 0, var = 0;
    for (int c = 0; c < n; ++c)
      mean += x[at + c];
    mean /= n;
    for (int c = 0; c < n; ++c)
      var += (x[at + c] - mean) * (x[at + c] - mean);
    double rstd = 1 / std::sqrt(var / n + eps);
    r.mean[i] = mean;
    r.rstd[i] = rstd;
    double c1 = 0, c2 = 0;
    for (int c = 0; c < n; ++c) {
      xhat[c] = (x[at + c] - mean) * rstd;
      wdy[c] = double(w[c]) * dy[at + c];
      r.y[at + c] = xhat[c] * w[c] + b[c];
      c1 += xhat[c] * wdy[c] / n;
      c2 += wdy[c] / n;
      r.dw[c] += dy[at + c] * xhat[c];
      r.db[c] += dy[at + c];
    }
    for (int c = 0; c < n; ++c)
      r.dx[at + c] = (wdy[c] - (xhat[c] * c1 + c2)) * rstd;
  }
  return r;
}

int main() {
  tutorial::Tutorial t("05-layer-norm");
  t.run([&](auto &on) {
    struct Shape {
      int rows, n;
    };
    for (Shape s : {Shape{1, 1}, Shape{7, 13}, Shape{64, 781}, Shape{31, 3001},
                    Shape{4096, 1024}}) {
      const int rows = s.rows, n = s.n;
      const float eps = 1e-5f;
      const size_t size = size_t(rows) * n;
      // An offset mean (3) makes the two-pass variance matter.
      auto x = tutorial::random_uniform(size, 2, 4);
      auto w = tutorial::random_uniform(n, 0.5, 1.5);
      auto b = tutorial::random_uniform(n, -1, 1);
      auto dy = tutorial::random_uniform(size, -1, 1);
      auto want = float64_layer_norm(x, w, b, dy, rows, n, eps);
      auto x_on = on.copy(x), w_on = on.copy(w), b_on = on.copy(b);
      auto dy_on = on.copy(dy);
      auto y = on.copy(tutorial::poisoned<float>(size));
      auto mean = on.copy(tutorial::poisoned<float>(rows));
      auto rstd = on.copy(tutorial::poisoned<float>(rows));
      auto dx = on.copy(tutorial::poisoned<float>(size));
      // The backward pass's programs, each owning a row of partial sums.
      const int programs = std::min(rows, 4 * on.processors());
      auto partial_dw =
          on.copy(tutorial::poisoned<float>(size_t(programs) * n));
      auto partial_db =
          on.copy(tutorial::poisoned<float>(size_t(programs) * n));
      auto dw = on.copy(tutorial::poisoned<float>(n));
      auto db = on.copy(tutorial::poisoned<float>(n));

      // A float32 sum of k terms is off by about 8 sqrt(k) 2^-24 times the
      // size of its running sums (rounding errors of random sign; see
      // tutorial 09). The statistics sum n positive terms and round a few
      // more times (the division, sqrt: 2^-20 covers them); y and dx carry
      // their errors times |xhat w| and |w dy| (<= 3 here). dw and db sum
      // the rows' terms (<= 2 in size) of random sign, whose running sums
      // are about sqrt(rows) terms in size, and the rows' errors with them.
      auto sum_error = [](int k) { return 8 * std::sqrt(k) * 0x1p-24; };
      const double row_error = sum_error(n) + 0x1p-20;
      const double column_error =
          (2 * sum_error(rows) + 3 * row_error) * std::sqrt(rows);
      const std::string shape = std::to_string(rows) + "x" + std::to_string(n);

      // Forward: whole rows in one block up to 1024 columns, else a loop.
      const int block = std::min(int(std::bit_ceil(unsigned(n))), 1024);
      on.row(
          shape + " fwd", 2.0 * size * sizeof(float),
          [&] {
            layer_norm_fwd[{rows}](x_on, y, w_on, b_on, mean, rstd, n, n, eps,
                                   block);
          },
          [&](tutorial::Check &check) {
            check("mean", on.read(mean), want.mean, {row_error, 0});
            check("rstd", on.read(rstd), want.rstd, {row_error, 0});
            check("y", on.read(y), want.y, {0, 3 * row_error});
          });
      // The whole row is one block in the one-row forward kernel and in the
      // backward one: on the GPU, more warps share a long row (num_warps,
      // as Triton's tutorial picks it; host backends ignore it).
      const int row_block = int(std::bit_ceil(unsigned(n)));
      bl::LaunchOptions row_options;
      row_options.num_warps = std::clamp(row_block / 256, 1, 8);
      auto y_row = on.copy(tutorial::poisoned<float>(size));
      auto mean_row = on.copy(tutorial::poisoned<float>(rows));
      auto rstd_row = on.copy(tutorial::poisoned<float>(rows));
      on.row(
          shape + " fwd row", 2.0 * size * sizeof(float),
          [&] {
            layer_norm_fwd_row[{rows}].with(row_options)(
                x_on, y_row, w_on, b_on, mean_row, rstd_row, n, n, eps,
                row_block);
          },
          [&](tutorial::Check &check) {
            check("mean", on.read(mean_row), want.mean, {row_error, 0});
            check("rstd", on.read(rstd_row), want.rstd, {row_error, 0});
            check("y", on.read(y_row), want.y, {0, 3 * row_error});
          });
      // Backward: dx and the partial sums, then dw and db from those.
      on.row(
          shape + " bwd", (3.0 * size + 4.0 * programs * n) * sizeof(float),
          [&] {
            layer_norm_bwd_dx[{programs}].with(row_options)(
                dx, dy_on, partial_dw, partial_db, x_on, w_on, mean, rstd, n,
                rows, n, row_block);
            layer_norm_bwd_dwdb[{bl::cdiv(n, 128)}](partial_dw, partial_db, dw,
                                                    db, programs, n, 32, 128);
          },
          [&](tutorial::Check &check) {
            check("dx", on.read(dx), want.dx, {0, 3 * row_error});
            check("dw", on.read(dw), want.dw, {0, column_error});
            check("db", on.read(db), want.db, {0, column_error});
          });
    }
  });
  return t.finish();
}
