// Tutorial 02: fused softmax. The kernel is in fused_softmax.h (Python
// calls the same kernel as blocc.kernels.softmax); this program checks it
// against a float64 softmax at several shapes and prints its IR.
#include "fused_softmax.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace bl = blocc;

using blocc::tutorials::softmax;

int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

int main() {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-50, 50);
  bool all_ok = true;
  // Host buffers run on the CPU backend (the interpreter where blocc was
  // built without it); BLOCC_BACKEND=interpreter picks the interpreter.
  std::printf("Running on the %s.\n\n", bl::host_backend_description().c_str());
  std::printf("%-7s %-7s %-6s %-8s %-12s %s\n", "rows", "cols", "BLOCK",
              "programs", "max rel err", "time");
  struct Shape {
    int rows, cols;
  };
  for (Shape s : {Shape{1, 1}, Shape{7, 13}, Shape{64, 781}, Shape{256, 1024},
                  Shape{31, 3001}}) {
    std::vector<float> x(size_t(s.rows) * s.cols), y(x.size(), NAN);
    for (float &v : x)
      v = dist(rng);
    const int block = next_power_of_two(s.cols);
    const int programs = std::min(s.rows, 32);
    auto start = std::chrono::steady_clock::now();
    softmax[{programs}](y, x, s.cols, s.cols, s.rows, s.cols, block);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    // Check every row against a float64 softmax.
    double worst = 0;
    for (int r = 0; r < s.rows; ++r) {
      const float *row = &x[size_t(r) * s.cols];
      double m = *std::max_element(row, row + s.cols), sum = 0;
      for (int c = 0; c < s.cols; ++c)
        sum += std::exp(double(row[c]) - m);
      for (int c = 0; c < s.cols; ++c) {
        double want = std::exp(double(row[c]) - m) / sum;
        double got = y[size_t(r) * s.cols + c];
        worst = std::max(worst, std::fabs(got - want) / std::max(want, 1e-30));
      }
    }
    bool ok = worst <= 1e-5;
    all_ok &= ok;
    std::printf("%-7d %-7d %-6d %-8d %-12.3g %.2f ms %s\n", s.rows, s.cols,
                block, programs, worst, ms, ok ? "ok" : "MISMATCH");
  }
  std::printf("\nThe kernel's IR for 781 columns (BLOCK = 1024):\n%s",
              softmax
                  .ir_for(static_cast<float *>(nullptr),
                          static_cast<float *>(nullptr), 781, 781, 64, 781,
                          1024)
                  .c_str());
  std::printf("02-fused-softmax: %s\n", all_ok ? "PASSED" : "FAILED");
  return all_ok ? 0 : 1;
}
