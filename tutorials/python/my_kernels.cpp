// Your own kernels in a shared library that Python loads at run time:
//
//   lib = blocc.load_library("build/tutorials/python/libmy_kernels.so")
//   lib.saxpy[grid](x, y, out, 2.0, n, BLOCK=1024)
//
// Build: a SHARED library linking `blocc::blocc` (tutorials/python/
// CMakeLists.txt). The library carries its own copy of blocc, which traces,
// compiles and runs its kernels; Python reaches them through the C
// interface BLOCC_EXPORT_KERNELS defines (blocc/kernel_abi.h).
#include <blocc/blocc.h>
#include <blocc/export.h>

namespace bl = blocc;

// out = alpha * x + y. The names (given before the callable, since a C++
// lambda does not carry them) are the Python keywords.
auto saxpy = bl::kernel(
    "saxpy", {"x", "y", "out", "alpha", "n", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> out, bl::f32 alpha,
       bl::i32 n, bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      auto result =
          alpha * bl::load(x + offsets, mask) + bl::load(y + offsets, mask);
      bl::store(out + offsets, result, mask);
    });

// out[row] = sum of the row: one program per row, a 2-D grid of one
// column. BLOCK covers the row (a power of two >= n_cols).
auto row_sum = bl::kernel("row_sum", {"x", "out", "n_cols", "BLOCK"},
                          [](bl::Ptr<double> x, bl::Ptr<double> out,
                             bl::i32 n_cols, bl::Const<int> BLOCK) {
                            auto row = bl::program_id(0);
                            auto cols = bl::arange(0, BLOCK);
                            auto values = bl::load(x + row * n_cols + cols,
                                                   cols < n_cols, 0.0);
                            bl::store(out + row, bl::sum(values, 0));
                          });

BLOCC_EXPORT_KERNELS(saxpy, row_sum)
