// Tutorial 03: matrix multiplication. The kernel is in matmul.h (Python
// calls it as blocc.kernels.matmul); this program checks it against a
// float64 product on every backend, for half and bfloat16 inputs and
// shapes that are not multiples of the tiles, and times it, each shape
// with the tile configuration blocc::autotune measured fastest.
#include "common/tutorial.h"
#include "matmul.h"

#include <algorithm>

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

template <typename T, typename Kernel, typename Backend>
void check_matmul(Backend &on, Kernel &kernel, const char *dtype) {
  auto tuned = bl::autotune(kernel, tile_configs(on.is_gpu()), {"M", "N", "K"});
  struct Shape {
    int m, n, k;
  };
  std::vector<Shape> shapes = {
      {1, 1, 1}, {17, 31, 13}, {97, 130, 67}, {256, 256, 256}};
  // A large one where it runs in well under a second (not on the
  // element-by-element interpreter).
  if (on.is_gpu())
    shapes.push_back({2048, 2048, 2048});
  else if (on.description().starts_with("CPU"))
    shapes.push_back({512, 512, 512});
  for (Shape s : shapes) {
    auto a = tutorial::random_uniform<T>(size_t(s.m) * s.k, -1, 1);
    auto b = tutorial::random_uniform<T>(size_t(s.k) * s.n, -1, 1);
    const std::vector<int> rows = checked_rows(s.m);
    std::vector<double> want, scale;
    float64_matmul(a, b, s.n, s.k, rows, want, scale);
    auto a_on = on.copy(a), b_on = on.copy(b);
    auto c = on.copy(tutorial::poisoned<float>(size_t(s.m) * s.n));
    // One program per tile of the configuration being launched.
    auto grid = [&](const bl::Config &c) {
      return bl::Grid(bl::cdiv(s.m, int(c["BLOCK_M"])) *
                      bl::cdiv(s.n, int(c["BLOCK_N"])));
    };
    on.row(
        std::string(dtype) + " " + std::to_string(s.m) + "x" +
            std::to_string(s.n) + "x" + std::to_string(s.k),
        tutorial::Work::flops(2.0 * s.m * s.n * s.k),
        [&] {
          tuned[grid](a_on, b_on, c, s.m, s.n, s.k, s.k, 1, s.n, 1, s.n, 1);
        },
        [&](tutorial::Check &check) {
          // The inputs are exact in float32, and so are their products;
          // K + 1 float32 roundings of partial sums bound the error by
          // (K + 1) 2^-24 sum_k |a_ik b_kj|, whatever the order of the sum.
          double largest_scale = *std::max_element(scale.begin(), scale.end());
          std::vector<float> all = on.read(c), got;
          for (int i : rows)
            got.insert(got.end(), all.begin() + size_t(i) * s.n,
                       all.begin() + size_t(i + 1) * s.n);
          check("c", got, want, {0, (s.k + 1) * 0x1p-24 * largest_scale});
        });
  }
  std::printf("the configurations autotuning chose (%s):\n", dtype);
  for (const auto &[key, config] : tuned.chosen())
    std::printf("  %-40s %s\n", key.c_str(), config.str().c_str());
}

int main() {
  tutorial::Tutorial t("03-matrix-multiplication");
  t.run([&](auto &on) {
    check_matmul<bl::half>(on, blocc::tutorials::matmul, "f16");
    check_matmul<bl::bfloat16_t>(on, blocc::tutorials::matmul_bf16, "bf16");
  });
  return t.finish();
}
