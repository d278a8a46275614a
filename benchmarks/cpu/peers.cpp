// The hand-written OpenMP peers (see peers.h). This file includes no C++
// library header with inline functions that other files also instantiate:
// it is compiled with -ffast-math, and the linker may otherwise pick its
// fast-math copy of a shared inline function for the whole program.
#include "peers.h"

#include <math.h>
#include <omp.h>

namespace bench::peer {

void vector_add(const float *x, const float *y, float *out, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] + y[i];
}

void vector_add_serial(const float *x, const float *y, float *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] + y[i];
}

void softmax(const float *in, float *out, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float *x = in + int64_t{r} * cols;
    float *y = out + int64_t{r} * cols;
    float row_max = -INFINITY;
#pragma omp simd reduction(max : row_max)
    for (int c = 0; c < cols; ++c)
      row_max = x[c] > row_max ? x[c] : row_max;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < cols; ++c) {
      float e = expf(x[c] - row_max);
      y[c] = e;
      sum += e;
    }
    const float scale = 1.0f / sum;
#pragma omp simd
    for (int c = 0; c < cols; ++c)
      y[c] *= scale;
  }
}

void layer_norm(const float *x, float *y, const float *w, const float *b,
                float *mean, float *rstd, int rows, int cols, float eps) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float *xr = x + int64_t{r} * cols;
    float *yr = y + int64_t{r} * cols;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < cols; ++c)
      sum += xr[c];
    const float mu = sum / cols;
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int c = 0; c < cols; ++c) {
      float d = xr[c] - mu;
      squares += d * d;
    }
    const float inv = 1.0f / sqrtf(squares / cols + eps);
    mean[r] = mu;
    rstd[r] = inv;
#pragma omp simd
    for (int c = 0; c < cols; ++c)
      yr[c] = (xr[c] - mu) * inv * w[c] + b[c];
  }
}

namespace {

// A tile of C of kRows x kCols: 4 x 64 floats are 16 AVX-512 registers
// (32 AVX2 ones), loaded once, updated for every k, stored once.
constexpr int kRows = 4, kCols = 64;

void full_tile(const float *a, const float *b, float *c, int n, int k) {
  float acc[kRows][kCols];
  for (int r = 0; r < kRows; ++r)
#pragma omp simd
    for (int j = 0; j < kCols; ++j)
      acc[r][j] = 0;
  for (int q = 0; q < k; ++q) {
    const float *brow = b + int64_t{q} * n;
    for (int r = 0; r < kRows; ++r) {
      const float av = a[int64_t{r} * k + q];
#pragma omp simd
      for (int j = 0; j < kCols; ++j)
        acc[r][j] += av * brow[j];
    }
  }
  for (int r = 0; r < kRows; ++r)
#pragma omp simd
    for (int j = 0; j < kCols; ++j)
      c[int64_t{r} * n + j] = acc[r][j];
}

} // namespace

void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
  // The tiles of C in column-block-major order: the threads share each
  // column block of B while it is in cache. Edges fall back to plain loops.
  const int tiles_m = m / kRows, tiles_n = n / kCols;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < tiles_m * tiles_n; ++t) {
    const int i0 = (t % tiles_m) * kRows, j0 = (t / tiles_m) * kCols;
    full_tile(a + int64_t{i0} * k, b + j0, c + int64_t{i0} * n + j0, n, k);
  }
#pragma omp parallel for schedule(static)
  for (int i = 0; i < m; ++i) {
    const int j_start = i < tiles_m * kRows ? tiles_n * kCols : 0;
    for (int j = j_start; j < n; ++j) {
      float sum = 0;
      for (int q = 0; q < k; ++q)
        sum += a[int64_t{i} * k + q] * b[int64_t{q} * n + j];
      c[int64_t{i} * n + j] = sum;
    }
  }
}

namespace {

/// out = f(x) over n elements, one loop GCC vectorizes with libmvec's
/// variant of f.
template <typename F>
void elementwise(const float *x, float *out, int64_t n, F f) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(x[i]);
}

} // namespace

void math(MathFunction f, const float *x, float *out, int64_t n) {
  switch (f) {
  case MathFunction::Exp:
    return elementwise(x, out, n, [](float v) { return expf(v); });
  case MathFunction::Log:
    return elementwise(x, out, n, [](float v) { return logf(v); });
  case MathFunction::Sin:
    return elementwise(x, out, n, [](float v) { return sinf(v); });
  case MathFunction::Tanh:
    return elementwise(x, out, n, [](float v) { return tanhf(v); });
  case MathFunction::Erf:
    return elementwise(x, out, n, [](float v) { return erff(v); });
  case MathFunction::Sigmoid:
    return elementwise(x, out, n, [](float v) { return 1 / (1 + expf(-v)); });
  }
}

void gelu(const float *x, float *out, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    out[i] =
        0.5f * v * (1 + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

float scaled_sum(const float *x, int64_t n, float scale) {
  float sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += x[i];
  return sum * scale;
}

void rope(float *q, const float *cos, const float *sin, int rows, int seq,
          int heads, int dim) {
  const int half = dim / 2;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float *c = cos + int64_t{r % seq} * half;
    const float *s = sin + int64_t{r % seq} * half;
    for (int h = 0; h < heads; ++h) {
      float *x = q + (int64_t{r} * heads + h) * dim;
#pragma omp simd
      for (int i = 0; i < half; ++i) {
        const float x1 = x[i], x2 = x[i + half];
        x[i] = x1 * c[i] - x2 * s[i];
        x[i + half] = x2 * c[i] + x1 * s[i];
      }
    }
  }
}

void layer_norm_backward(const float *x, const float *dy, const float *w,
                         const float *mean, const float *rstd, float *dx,
                         float *dw, float *db, int rows, int cols) {
  const int threads = omp_get_max_threads();
  // One partial dw and db row per thread: no atomics, then a sum.
  float *partial = new float[2 * int64_t{threads} * cols]();
#pragma omp parallel num_threads(threads)
  {
    float *pdw = partial + 2 * int64_t{omp_get_thread_num()} * cols;
    float *pdb = pdw + cols;
#pragma omp for schedule(static)
    for (int r = 0; r < rows; ++r) {
      const float *xr = x + int64_t{r} * cols, *dyr = dy + int64_t{r} * cols;
      float *dxr = dx + int64_t{r} * cols;
      const float mu = mean[r], rs = rstd[r];
      float c1 = 0, c2 = 0;
#pragma omp simd reduction(+ : c1, c2)
      for (int c = 0; c < cols; ++c) {
        const float wdy = w[c] * dyr[c];
        c1 += (xr[c] - mu) * rs * wdy;
        c2 += wdy;
      }
      c1 /= cols;
      c2 /= cols;
#pragma omp simd
      for (int c = 0; c < cols; ++c) {
        const float xhat = (xr[c] - mu) * rs;
        dxr[c] = (w[c] * dyr[c] - (xhat * c1 + c2)) * rs;
        pdw[c] += dyr[c] * xhat;
        pdb[c] += dyr[c];
      }
    }
  }
#pragma omp parallel for simd schedule(static)
  for (int c = 0; c < cols; ++c) {
    float sw = 0, sb = 0;
    for (int t = 0; t < threads; ++t) {
      sw += partial[2 * int64_t{t} * cols + c];
      sb += partial[(2 * int64_t{t} + 1) * cols + c];
    }
    dw[c] = sw;
    db[c] = sb;
  }
  delete[] partial;
}

void attention(const float *q, const float *k, const float *v, float *out,
               int heads, int seq, int dim, float scale) {
#pragma omp parallel
  {
    float *scores = new float[seq];
#pragma omp for collapse(2) schedule(static)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < seq; ++i) {
        const int64_t base = int64_t{h} * seq * dim;
        const float *qi = q + base + int64_t{i} * dim;
        float row_max = -INFINITY;
        for (int j = 0; j < seq; ++j) {
          const float *kj = k + base + int64_t{j} * dim;
          float dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int d = 0; d < dim; ++d)
            dot += qi[d] * kj[d];
          scores[j] = dot * scale;
          row_max = scores[j] > row_max ? scores[j] : row_max;
        }
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < seq; ++j) {
          scores[j] = expf(scores[j] - row_max);
          sum += scores[j];
        }
        float *oi = out + base + int64_t{i} * dim;
#pragma omp simd
        for (int d = 0; d < dim; ++d)
          oi[d] = 0;
        for (int j = 0; j < seq; ++j) {
          const float p = scores[j] / sum;
          const float *vj = v + base + int64_t{j} * dim;
#pragma omp simd
          for (int d = 0; d < dim; ++d)
            oi[d] += p * vj[d];
        }
      }
    delete[] scores;
  }
}

} // namespace bench::peer
