// Tutorial 02's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.softmax, bindings/module/shipped_kernels.cpp).
//
// softmax(x)_j = exp(x_j - max(x)) / sum_k exp(x_k - max(x)), row by row.
// Written as separate passes (max, subtract, exp, sum, divide) it reads and
// writes the matrix several times; fused into one kernel each row is read
// once, kept in a block while the reductions run, and written once. The
// kernel needs a whole row in one block, so BLOCK is the row length rounded
// up to a power of two; the extra lanes are masked and read as -inf, which
// changes neither the max nor (after exp) the sum.
//
// Each program instance handles rows pid, pid + num_programs, ... so the
// grid can be sized to the machine rather than to the matrix.
#pragma once

#include <blocc/blocc.h>

#include <cmath>

namespace blocc::tutorials {

namespace bl = blocc;

inline auto softmax = bl::kernel(
    "softmax",
    {"out", "x", "x_row_stride", "out_row_stride", "n_rows", "n_cols", "BLOCK"},
    [](bl::Ptr<float> out, bl::Ptr<float> in, bl::i32 in_stride,
       bl::i32 out_stride, bl::i32 n_rows, bl::i32 n_cols,
       bl::Const<int> BLOCK) {
      auto first = bl::program_id(0);
      auto step = bl::num_programs(0);
      for (auto row : bl::range(first, n_rows, step)) {
        auto cols = bl::arange(0, BLOCK);
        auto mask = cols < n_cols;
        auto x = bl::load(in + row * in_stride + cols, mask, -INFINITY);
        auto shifted = x - bl::max(x, 0); // exp can no longer overflow
        auto numerator = bl::exp(shifted);
        auto denominator = bl::sum(numerator, 0);
        bl::store(out + row * out_stride + cols, numerator / denominator, mask);
      }
    });

} // namespace blocc::tutorials
