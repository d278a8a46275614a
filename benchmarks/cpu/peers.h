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

} // namespace bench::peer
