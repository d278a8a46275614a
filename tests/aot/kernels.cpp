// The kernel library tests/aot compiles ahead of time with blocc-compile:
// tutorial 01's vector add and tutorial 02's softmax (masked tails, a loop
// over rows, reductions), a division whose zero divisor is a run-time
// error, an f64 axpy (64-bit integer and float scalars), and a matmul
// through tensor descriptors (whose tiles sm_90a would copy with TMA,
// which ahead-of-time kernels refuse).
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

// C = A @ B, tiles read through tensor descriptors.
auto descriptor_matmul = bl::kernel(
    "descriptor_matmul", {"a", "b", "c", "M", "N", "K", "BM", "BN", "BK"},
    [](bl::Ptr<bl::half> a, bl::Ptr<bl::half> b, bl::Ptr<float> c, bl::i32 M,
       bl::i32 N, bl::i32 K, bl::Const<int> BM, bl::Const<int> BN,
       bl::Const<int> BK) {
      auto row = bl::program_id(0) * BM, col = bl::program_id(1) * BN;
      auto a_tiles = bl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
      auto b_tiles = bl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
      auto acc = bl::zeros({BM, BN}, bl::float32);
      for (auto k : bl::range(0, K, BK))
        acc = bl::dot(bl::load(a_tiles, {row, k}), bl::load(b_tiles, {k, col}),
                      acc);
      auto c_tiles = bl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
      bl::store(c_tiles, {row, col}, acc);
    });

} // namespace

BLOCC_EXPORT_KERNELS(blocc::tutorials::add, blocc::tutorials::softmax, divide,
                     axpy, descriptor_matmul)
