// The kernel library tests/aot compiles ahead of time with blocc-compile:
// tutorial 01's vector add and tutorial 02's softmax (masked tails, a loop
// over rows, reductions), a division whose zero divisor is a run-time
// error, and an f64 axpy (64-bit integer and float scalars).
#include "01-vector-add/vector_add.h"
#include "02-fused-softmax/fused_softmax.h"

#include <blocc/blocc.h>
#include <blocc/export.h>

namespace bl = blocc;

namespace {

// out[i] = x[i] / y[i] (C++'s truncating division): a zero divisor stops
// the program with an error naming the lane.
auto divide =
    bl::kernel("divide", {"x", "y", "out", "n", "BLOCK"},
               [](bl::Ptr<int32_t> x, bl::Ptr<int32_t> y, bl::Ptr<int32_t> out,
                  bl::i32 n, bl::Const<int> BLOCK) {
                 auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
                 auto mask = i < n;
                 auto q = bl::load(x + i, mask) / bl::load(y + i, mask, 1);
                 bl::store(out + i, q, mask);
               });

// out[i] = alpha * x[i] + y[i] on doubles, with a 64-bit count.
auto axpy = bl::kernel(
    "axpy", {"alpha", "x", "y", "out", "n", "BLOCK"},
    [](bl::f64 alpha, bl::Ptr<double> x, bl::Ptr<double> y, bl::Ptr<double> out,
       bl::i64 n, bl::Const<int> BLOCK) {
      auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = i < n;
      bl::store(out + i, alpha * bl::load(x + i, mask) + bl::load(y + i, mask),
                mask);
    });

} // namespace

BLOCC_EXPORT_KERNELS(blocc::tutorials::add, blocc::tutorials::softmax, divide,
                     axpy)
