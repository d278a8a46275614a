// Tutorial 02: fused softmax. The kernel is in fused_softmax.h (Python
// calls the same kernel as blocc.kernels.softmax); this program checks it
// against a float64 softmax on every backend at several shapes, times it,
// and prints its IR.
#include "common/tutorial.h"
#include "fused_softmax.h"

#include <algorithm>
#include <bit>
#include <cfloat>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

using blocc::tutorials::softmax;

std::vector<double> float64_softmax(const std::vector<float> &x, int rows,
                                    int cols) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * cols];
    double m = *std::max_element(row, row + cols), sum = 0;
    for (int c = 0; c < cols; ++c)
      sum += std::exp(double(row[c]) - m);
    for (int c = 0; c < cols; ++c)
      y[size_t(r) * cols + c] = std::exp(double(row[c]) - m) / sum;
  }
  return y;
}

int main() {
  tutorial::Tutorial t("02-fused-softmax");
  t.run([&](auto &on) {
    struct Shape {
      int rows, cols;
    };
    for (Shape s : {Shape{1, 1}, Shape{7, 13}, Shape{64, 781}, Shape{31, 3001},
                    Shape{4096, 1024}}) {
      auto x = tutorial::random_uniform(size_t(s.rows) * s.cols, -50, 50);
      auto want = float64_softmax(x, s.rows, s.cols);
      auto x_on = on.copy(x);
      auto y = on.copy(tutorial::poisoned<float>(x.size()));
      const int block = int(std::bit_ceil(unsigned(s.cols)));
      // Enough programs per processor to keep it busy while some wait for
      // memory (16 of 4 warps fill an H100 SM's 64 warps; on a CPU they
      // balance the threads), each striding over the rows.
      const int programs = std::min(s.rows, 16 * on.processors());
      on.row(
          std::to_string(s.rows) + "x" + std::to_string(s.cols),
          2.0 * x.size() * sizeof(float),
          [&] {
            softmax[{programs}](y, x_on, s.cols, s.cols, s.rows, s.cols, block);
          },
          [&](tutorial::Check &check) {
            // exp and the division round a few times: a few ulps relative,
            // down to float32's smallest normal number (1.2e-38); below it
            // only absolute precision is left.
            check("y", on.read(y), want, {1e-5, FLT_MIN});
          });
    }
  });
  std::printf("\nThe kernel's IR for 781 columns (BLOCK = 1024):\n%s",
              softmax
                  .ir_for(static_cast<float *>(nullptr),
                          static_cast<float *>(nullptr), 781, 781, 64, 781,
                          1024)
                  .c_str());
  return t.finish();
}
