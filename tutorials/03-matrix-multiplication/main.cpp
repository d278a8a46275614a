// Tutorial 03: matrix multiplication. The kernels are in matmul.h (Python
// calls them as blocc.kernels.matmul, matmul_bf16, matmul_persistent,
// matmul_persistent_bf16, matmul_tma, matmul_tma_bf16, matmul_tma_ws and
// matmul_fp8); this
// program checks them against a float64 product on every backend, for half,
// bfloat16 and fp8 (e4m3, scaled per tensor) inputs and shapes that are not
// multiples of the tiles, the persistent kernels on a grid of one program per
// processor, and times them, each shape with the tile configuration
// blocc::autotune measured fastest.
#include "common/tutorial.h"
#include "matmul.h"

#include <algorithm>
#include <cstdint>

namespace bl = blocc;
namespace tutorial = blocc::tutorial;

/// The rows of C checked: all of small products, else every 31st and the
/// last (the float64 reference costs n * k per row on the host).
std::vector<int> checked_rows(int m) {
  std::vector<int> rows;
  for (int i = 0; i < m; i += m <= 256 ? 1 : 31)
    rows.push_back(i);
  if (rows.back() != m - 1)
    rows.push_back(m - 1);
  return rows;
}

/// `rows` of C = A @ B in float64, and each element's error scale
/// sum_k |a_ik b_kj|, row after row.
template <typename T>
void float64_matmul(const std::vector<T> &a, const std::vector<T> &b, int n,
                    int k, const std::vector<int> &rows, std::vector<double> &c,
                    std::vector<double> &scale) {
  c.assign(rows.size() * n, 0);
  scale.assign(rows.size() * n, 0);
  for (size_t r = 0; r < rows.size(); ++r)
    for (int q = 0; q < k; ++q) {
      double x = float(a[size_t(rows[r]) * k + q]);
      for (int j = 0; j < n; ++j) {
        double product = x * double(float(b[size_t(q) * n + j]));
        c[r * n + j] += product;
        scale[r * n + j] += std::fabs(product);
      }
    }
}

/// The tile configurations autotuning chooses from, per kind of backend:
/// on the GPU a tile's threads share it (4 or 8 warps; the K loop in 3 or
/// 4 stages of shared memory, its next tiles' copies in flight while one
/// is multiplied), on the CPU one
/// thread's vector registers and cache hold it. Each is measured at the
/// first launch of a new (M, N, K) and the fastest kept (blocc::autotune).
std::vector<bl::Config> tile_configs(bool gpu) {
  using C = bl::Config;
  if (gpu)
    return {
        C({{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}},
          4, 3),
        C({{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}},
          4, 4),
        C({{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, {"GROUP_M", 8}},
          4, 3),
        C({{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"GROUP_M", 8}},
          8, 3)};
  return {
      C({{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"GROUP_M", 8}}),
      C({{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}}),
      C({{"BLOCK_M", 32}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"GROUP_M", 8}})};
}

struct Shape {
  int m, n, k;
};

/// The products checked: odd sizes, and a large one where it runs in well
/// under a second (not on the element-by-element interpreter).
template <typename Backend> std::vector<Shape> shapes(const Backend &on) {
  std::vector<Shape> all = {
      {1, 1, 1}, {17, 31, 13}, {97, 130, 67}, {256, 256, 256}};
  if (on.is_gpu())
    all.push_back({2048, 2048, 2048});
  else if (on.description().starts_with("CPU"))
    all.push_back({512, 512, 512});
  return all;
}

std::string shape_text(Shape s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

/// The rows of C a check reads back from the whole of it.
std::vector<float> rows_of(const std::vector<float> &c, int n,
                           const std::vector<int> &rows) {
  std::vector<float> got;
  for (int i : rows)
    got.insert(got.end(), c.begin() + size_t(i) * n,
               c.begin() + size_t(i + 1) * n);
  return got;
}

/// How many programs a launch runs for C's tiles: one per tile, or for
/// the persistent kernels one per processor (SM, or hardware thread on
/// the host), each walking every programs-th tile (but no more programs
/// than tiles).
enum class Programs { PerTile, PerProcessor };

template <typename T, typename Kernel, typename Backend>
void check_matmul(Backend &on, Kernel &kernel, const std::string &dtype,
                  Programs programs = Programs::PerTile) {
  auto tuned = bl::autotune(kernel, tile_configs(on.is_gpu()), {"M", "N", "K"});
  for (Shape s : shapes(on)) {
    auto a = tutorial::random_uniform<T>(size_t(s.m) * s.k, -1, 1);
    auto b = tutorial::random_uniform<T>(size_t(s.k) * s.n, -1, 1);
    const std::vector<int> rows = checked_rows(s.m);
    std::vector<double> want, scale;
    float64_matmul(a, b, s.n, s.k, rows, want, scale);
    auto a_on = on.copy(a), b_on = on.copy(b);
    auto c = on.copy(tutorial::poisoned<float>(size_t(s.m) * s.n));
    // The tiles of the configuration being launched.
    auto grid = [&](const bl::Config &c) {
      const int tiles =
          bl::cdiv(s.m, int(c["BLOCK_M"])) * bl::cdiv(s.n, int(c["BLOCK_N"]));
      return bl::Grid(programs == Programs::PerTile
                          ? tiles
                          : std::min(tiles, on.processors()));
    };
    on.row(
        dtype + " " + shape_text(s),
        tutorial::Work::flops(2.0 * s.m * s.n * s.k),
        [&] {
          tuned[grid](a_on, b_on, c, s.m, s.n, s.k, s.k, 1, s.n, 1, s.n, 1);
        },
        [&](tutorial::Check &check) {
          // The inputs are exact in float32, and so are their products;
          // K + 1 float32 roundings of partial sums bound the error by
          // (K + 1) 2^-24 sum_k |a_ik b_kj|, whatever the order of the sum.
          double largest_scale = *std::max_element(scale.begin(), scale.end());
          check("c", rows_of(on.read(c), s.n, rows), want,
                {0, (s.k + 1) * 0x1p-24 * largest_scale});
        });
  }
  std::printf("the configurations autotuning chose (%s):\n", dtype.c_str());
  for (const auto &[key, config] : tuned.chosen())
    std::printf("  %-40s %s\n", key.c_str(), config.str().c_str());
}

// ------------------------------------------------------------------ fp8
// e4m3 has 1 sign bit, 4 exponent bits (bias 7) and 3 mantissa bits, no
// infinities (S.1111.111 is NaN), and no host type: its values travel as
// bytes.

/// The value of an e4m3 byte: (8 + m) 2^(e - 10), or m 2^-9 for e = 0.
double e4m3_value(uint8_t byte) {
  int e = (byte >> 3) & 15, m = byte & 7;
  double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return byte & 0x80 ? -v : v;
}

/// The e4m3 byte nearest x, ties to an even mantissa, saturated at 448
/// (the largest finite value), as fp8 quantizers round.
uint8_t to_e4m3(double x) {
  // Bytes 0 to 0x7e are the non-negative numbers in increasing order: find
  // the first at or above |x|, then take the one below where it is nearer.
  const double magnitude = std::min(std::fabs(x), 448.0);
  int code = 0, last = 0x7e;
  while (code < last) {
    int mid = (code + last) / 2;
    if (e4m3_value(uint8_t(mid)) < magnitude)
      code = mid + 1;
    else
      last = mid;
  }
  if (code > 0) {
    double below = magnitude - e4m3_value(uint8_t(code - 1)),
           above = e4m3_value(uint8_t(code)) - magnitude;
    if (below < above || (below == above && (code - 1) % 2 == 0))
      code -= 1;
  }
  return uint8_t(code | (std::signbit(x) ? 0x80 : 0));
}

/// A tensor quantized to e4m3 with one float32 scale for all of it, as
/// torch._scaled_mm takes them: x ~ scale * e4m3_value(bytes[i]), with
/// scale = amax / 448 so that the largest |x| lands on e4m3's largest
/// value and the rest keep as many of its exponents as they can.
struct Fp8Tensor {
  std::vector<uint8_t> bytes;
  float scale = 1;
  std::vector<double> values; // e4m3_value(bytes[i]), unscaled
};

Fp8Tensor quantize_e4m3(const std::vector<float> &x) {
  double amax = 0;
  for (float v : x)
    amax = std::max(amax, double(std::fabs(v)));
  Fp8Tensor q;
  q.scale = amax > 0 ? float(amax / 448) : 1.f;
  for (float v : x) {
    q.bytes.push_back(to_e4m3(v / double(q.scale)));
    q.values.push_back(e4m3_value(q.bytes.back()));
  }
  return q;
}

/// `rows` of the bound on |x^ y^ - x y| summed over k, where x^ and y^
/// are x and y rounded to e4m3 with their scales: |x^ - x| <= 2^-4 |x| for
/// |x| / scale down to e4m3's smallest normal 2^-6 (3 mantissa bits: half
/// a unit in the last place), 2^-10 scale below it (subnormals' spacing
/// 2^-9), and |x^ y^ - x y| <= ex |y| + |x| ey + ex ey.
std::vector<double> quantization_bound(const std::vector<float> &x, float sx,
                                       const std::vector<float> &y, float sy,
                                       int n, int k,
                                       const std::vector<int> &rows) {
  auto error = [](double v, double scale) {
    return std::max(0x1p-4 * std::fabs(v), 0x1p-10 * scale);
  };
  std::vector<double> bound(rows.size() * n, 0);
  for (size_t r = 0; r < rows.size(); ++r)
    for (int q = 0; q < k; ++q) {
      double xv = x[size_t(rows[r]) * k + q], ex = error(xv, sx);
      for (int j = 0; j < n; ++j) {
        double yv = y[size_t(q) * n + j], ey = error(yv, sy);
        bound[r * n + j] += ex * std::fabs(yv) + std::fabs(xv) * ey + ex * ey;
      }
    }
  return bound;
}

/// C = (scale_a scale_b) (A @ B) with A and B quantized to e4m3 from
/// random float32 values of different ranges (so that each scale counts),
/// checked twice: against the float64 product of the quantized inputs
/// (the table's row: only the float32 sums' rounding remains) and, on a
/// line of its own, against the float64 product of the inputs before
/// quantization, within e4m3's 2^-4 per input.
template <typename Backend> void check_matmul_fp8(Backend &on) {
  auto tuned = bl::autotune(blocc::tutorials::matmul_fp8,
                            tile_configs(on.is_gpu()), {"M", "N", "K"});
  for (Shape s : shapes(on)) {
    auto x = tutorial::random_uniform<float>(size_t(s.m) * s.k, -4, 4);
    auto y =
        tutorial::random_uniform<float>(size_t(s.k) * s.n, -0.0625, 0.0625);
    const Fp8Tensor a = quantize_e4m3(x), b = quantize_e4m3(y);
    const double scale = double(a.scale) * double(b.scale);
    const std::vector<int> rows = checked_rows(s.m);
    std::vector<double> want, magnitude, want_x, unused;
    float64_matmul(a.values, b.values, s.n, s.k, rows, want, magnitude);
    for (double &v : want)
      v *= scale;
    float64_matmul(x, y, s.n, s.k, rows, want_x, unused);
    auto a_on = on.copy(a.bytes), b_on = on.copy(b.bytes);
    auto c = on.copy(tutorial::poisoned<float>(size_t(s.m) * s.n));
    auto grid = [&](const bl::Config &c) {
      return bl::Grid(bl::cdiv(s.m, int(c["BLOCK_M"])) *
                      bl::cdiv(s.n, int(c["BLOCK_N"])));
    };
    // The products of two e4m3 values (4 significant bits each) are exact
    // in float32, so the sums are within (K + 1) float32 roundings of
    // sum_k |a_ik b_kj| (the bound for half inputs above), and the scales
    // add two more (scale_a scale_b, and its product with the sums):
    // (K + 3) 2^-24 to first order, which (K + 4) 2^-24 covers for K below
    // 2^11. On the GPU, fp8 dots run on tensor cores from sm_89 on, which
    // add each instruction's products keeping about 14 bits rather than
    // float32's 24: there the unit is 2^-13, as the GPU backend's dot
    // tests bound them ((K + 2) 2^-13), and the scales' roundings fit in
    // the rest.
    const double unit = on.is_gpu() ? 0x1p-13 : 0x1p-24;
    const double rounding =
        (s.k + 4) * unit * scale *
        *std::max_element(magnitude.begin(), magnitude.end());
    std::vector<float> got;
    on.row(
        "e4m3 " + shape_text(s), tutorial::Work::flops(2.0 * s.m * s.n * s.k),
        [&] {
          tuned[grid](a_on, b_on, c, a.scale, b.scale, s.m, s.n, s.k, s.k, 1,
                      s.n, 1, s.n, 1);
        },
        [&](tutorial::Check &check) {
          got = rows_of(on.read(c), s.n, rows);
          check("c", got, want, {0, rounding});
        });
    // Against the unquantized inputs: the quantization's bound plus the
    // rounding above.
    std::vector<double> bound =
        quantization_bound(x, a.scale, y, b.scale, s.n, s.k, rows);
    tutorial::Check unquantized;
    unquantized("c", got, want_x,
                {0, rounding + *std::max_element(bound.begin(), bound.end())});
    std::printf("  %s against the float64 product of the unquantized inputs: "
                "max |err| %.3g, bound %.3g (2^-4 per input) %s\n",
                shape_text(s).c_str(), unquantized.max_error(),
                rounding + *std::max_element(bound.begin(), bound.end()),
                unquantized.ok() ? "ok" : "MISMATCH");
    if (!unquantized.ok()) {
      std::printf("  first mismatch: %s\n", unquantized.mismatch().c_str());
      on.fail();
    }
  }
  std::printf("the configurations autotuning chose (e4m3):\n");
  for (const auto &[key, config] : tuned.chosen())
    std::printf("  %-40s %s\n", key.c_str(), config.str().c_str());
}

int main() {
  tutorial::Tutorial t("03-matrix-multiplication");
  t.run([&](auto &on) {
    check_matmul<bl::half>(on, blocc::tutorials::matmul, "f16");
    check_matmul<bl::bfloat16_t>(on, blocc::tutorials::matmul_bf16, "bf16");
    check_matmul<bl::half>(on, blocc::tutorials::matmul_persistent,
                           "f16 persistent", Programs::PerProcessor);
    check_matmul<bl::bfloat16_t>(on, blocc::tutorials::matmul_persistent_bf16,
                                 "bf16 persistent", Programs::PerProcessor);
    check_matmul<bl::half>(on, blocc::tutorials::matmul_tma, "f16 TMA");
    check_matmul<bl::bfloat16_t>(on, blocc::tutorials::matmul_tma_bf16,
                                 "bf16 TMA");
    check_matmul<bl::half>(on, blocc::tutorials::matmul_tma_ws,
                           "f16 TMA, warp-specialized");
    check_matmul<bl::half>(on, blocc::tutorials::matmul_persistent_tma,
                           "f16 persistent TMA", Programs::PerProcessor);
    check_matmul_fp8(on);
  });
  return t.finish();
}
