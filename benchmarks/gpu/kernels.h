// The kernels more than one GPU benchmark program times, with their
// float64 host checks: vector add and row softmax (one row per program,
// the row in one block, as Triton's tutorial writes it; triton_fused.py
// holds the same kernel in Triton).
#pragma once

#include <blocc/blocc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace gpu_bench {

namespace bl = blocc;

inline auto vector_add =
    bl::kernel("add", [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> out,
                         bl::i32 n, bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      bl::store(out + offsets,
                bl::load(x + offsets, mask) + bl::load(y + offsets, mask),
                mask);
    });

inline auto softmax =
    bl::kernel("softmax", [](bl::Ptr<float> out, bl::Ptr<float> in, bl::i32 n,
                             bl::Const<int> BLOCK) {
      auto row = bl::program_id(0);
      auto cols = bl::arange(0, BLOCK);
      auto mask = cols < n;
      auto x = bl::load(in + row * n + cols, mask, -INFINITY);
      auto numerator = bl::exp(x - bl::max(x, 0));
      bl::store(out + row * n + cols, numerator / bl::sum(numerator, 0), mask);
    });

/// Rows checked against float64: every 97th and the last.
inline std::vector<int> checked_rows(int rows) {
  std::vector<int> out;
  for (int r = 0; r < rows; r += 97)
    out.push_back(r);
  out.push_back(rows - 1);
  return out;
}

/// Whether `y` is the row softmax of `x` (rows x n) within 1e-5 relative,
/// on a sample of rows; prints the first wrong element.
inline bool softmax_is_right(const std::vector<float> &x,
                             const std::vector<float> &y, int rows, int n) {
  for (int r : checked_rows(rows)) {
    const float *row = &x[size_t(r) * n];
    double m = -INFINITY, s = 0;
    for (int c = 0; c < n; ++c)
      m = std::max(m, double(row[c]));
    for (int c = 0; c < n; ++c)
      s += std::exp(row[c] - m);
    for (int c = 0; c < n; ++c) {
      double want = std::exp(row[c] - m) / s;
      double got = y[size_t(r) * n + c];
      if (!(std::abs(got - want) <= 1e-5 * want + 1e-12)) {
        std::fprintf(stderr, "softmax wrong at row %d col %d: %g != %g\n", r, c,
                     got, want);
        return false;
      }
    }
  }
  return true;
}

} // namespace gpu_bench
