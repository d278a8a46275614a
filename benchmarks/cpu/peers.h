// The hand-written peers: what a performance engineer writes in plain C++
// for each benchmark kernel, an OpenMP parallel loop over rows or chunks
// with `#pragma omp simd` inner loops. peers.cpp alone is compiled with
// -O3 -march=native -ffast-math (benchmarks/CMakeLists.txt), so that GCC
// vectorizes the reductions and calls glibc's vector math (libmvec) for
// expf. Every function runs on omp_get_max_threads() threads, which
// main.cpp sets to blocc's thread count.
#pragma once

#include <cstdint>

namespace bench::peer {

/// out = x + y, n elements, the threads splitting the range statically.
void vector_add(const float *x, const float *y, float *out, int64_t n);
/// The same on the calling thread only (the relaunch row's direct call).
void vector_add_serial(const float *x, const float *y, float *out, int64_t n);

/// Row softmax of a rows x cols row-major matrix (max, exp and sum, scale).
void softmax(const float *in, float *out, int rows, int cols);

/// Layer norm forward, row by row (two-pass mean and variance):
/// y = (x - mean) * rstd * w + b, and each row's mean and rstd.
void layer_norm(const float *x, float *y, const float *w, const float *b,
                float *mean, float *rstd, int rows, int cols, float eps);

/// C = A B for row-major float matrices, blocked over tiles of C whose
/// accumulators the compiler keeps in vector registers.
void matmul(const float *a, const float *b, float *c, int m, int n, int k);

// The tutorials' other kernels (benchmarks/tutorials/cpu_sweep.py calls
// these through peers_abi.cpp's C functions).

/// The math functions of the math rows: both sides compute one of them
/// elementwise.
enum class MathFunction { Exp, Log, Sin, Tanh, Erf, Sigmoid };

/// out = f(x), n elements: libmvec's vector expf, logf, sinf, tanhf and
/// erff under -ffast-math (sigmoid through expf), the threads splitting
/// the range statically.
void math(MathFunction f, const float *x, float *out, int64_t n);

/// GeLU, tanh approximation: out = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715
/// x^3))).
void gelu(const float *x, float *out, int64_t n);

/// The sum of x times `scale` (the mean with scale = 1/n).
float scaled_sum(const float *x, int64_t n, float scale);

/// Rotates q [rows, heads, dim] in place, rows = batch * seq: the halves
/// (x1, x2) of each head become (x1 cos - x2 sin, x2 cos + x1 sin), with
/// cos and sin [seq, dim / 2].
void rope(float *q, const float *cos, const float *sin, int rows, int seq,
          int heads, int dim);

/// Layer norm backward given the forward's mean and rstd: dx row by row,
/// dw and db summed over rows (one partial row per thread, then added).
void layer_norm_backward(const float *x, const float *dy, const float *w,
                         const float *mean, const float *rstd, float *dx,
                         float *dw, float *db, int rows, int cols);

/// Attention out = softmax(q k^T scale) v per head, q, k, v, out
/// [heads, seq, dim]: one query row at a time, its scores in a row buffer.
void attention(const float *q, const float *k, const float *v, float *out,
               int heads, int seq, int dim, float scale);

} // namespace bench::peer
