// The OpenMP peers as C functions, for the tutorials' CPU sweep
// (benchmarks/tutorials/cpu_sweep.py loads libblocc_bench_peers.so with
// ctypes and passes numpy arrays' addresses). Not compiled with the peers'
// fast-math flags: it only forwards.
#include "peers.h"

#include <omp.h>

extern "C" {

void blocc_peer_set_threads(int threads) { omp_set_num_threads(threads); }

void blocc_peer_vector_add(const float *x, const float *y, float *out,
                           int64_t n) {
  bench::peer::vector_add(x, y, out, n);
}
void blocc_peer_softmax(const float *in, float *out, int rows, int cols) {
  bench::peer::softmax(in, out, rows, cols);
}
void blocc_peer_layer_norm(const float *x, float *y, const float *w,
                           const float *b, float *mean, float *rstd, int rows,
                           int cols, float eps) {
  bench::peer::layer_norm(x, y, w, b, mean, rstd, rows, cols, eps);
}
void blocc_peer_matmul(const float *a, const float *b, float *c, int m, int n,
                       int k) {
  bench::peer::matmul(a, b, c, m, n, k);
}
void blocc_peer_gelu(const float *x, float *out, int64_t n) {
  bench::peer::gelu(x, out, n);
}
float blocc_peer_scaled_sum(const float *x, int64_t n, float scale) {
  return bench::peer::scaled_sum(x, n, scale);
}
void blocc_peer_rope(float *q, const float *cos, const float *sin, int rows,
                     int seq, int heads, int dim) {
  bench::peer::rope(q, cos, sin, rows, seq, heads, dim);
}
void blocc_peer_layer_norm_backward(const float *x, const float *dy,
                                    const float *w, const float *mean,
                                    const float *rstd, float *dx, float *dw,
                                    float *db, int rows, int cols) {
  bench::peer::layer_norm_backward(x, dy, w, mean, rstd, dx, dw, db, rows,
                                   cols);
}
void blocc_peer_attention(const float *q, const float *k, const float *v,
                          float *out, int heads, int seq, int dim,
                          float scale) {
  bench::peer::attention(q, k, v, out, heads, seq, dim, scale);
}

} // extern "C"
