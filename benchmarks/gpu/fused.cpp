// blocc_bench_gpu_fused: row softmax (f32) and layer norm forward (f32 and
// f16) on the GPU backend, next to the device-to-device copy bandwidth
// measured in the same run (the ceiling). Bandwidth counts bytes read plus
// written: softmax reads and writes the matrix once (8 bytes per f32
// element); layer norm reads x and writes y (2 x element size per
// element), plus the weight and bias rows and the per-row mean and 1/std.
// Each figure is the median of many samples, each sample a burst of
// launches between two CUDA events, after warm-up; every timed result is
// checked against a float64 host reference on a sample of rows.
//
// The kernels are one row per program, the row held in one block
// (BLOCK = the next power of two >= N), as Triton's softmax tutorial does;
// layer norm also runs as Triton's tutorial writes it (loops over column
// blocks: the row is read three times, from L2 after the first).
//
//   blocc_bench_gpu_fused [--rows 4096] [--samples 30] [--json FILE]
#include "bench_main.h"
#include "gpu_timing.h"
#include "kernels.h"
#include "results_json.h"
#include "runtime/cuda/context.h"
#include <blocc/blocc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace bl = blocc;
using gpu_bench::median_ms;
using gpu_bench::softmax;

namespace {

// The whole row in one block: read once, written once.
template <typename T> auto make_layer_norm_row(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> y, bl::Ptr<T> weight,
                             bl::Ptr<T> bias, bl::Ptr<float> mean_out,
                             bl::Ptr<float> rstd_out, bl::i32 n, bl::f32 eps,
                             bl::Const<int> BLOCK) {
    auto row = bl::program_id(0);
    auto cols = bl::arange(0, BLOCK);
    auto mask = cols < n;
    auto v = bl::load(x + row * n + cols, mask, 0.f).to(bl::float32);
    auto mean = bl::sum(v, 0) / n.to(bl::float32);
    auto centered = bl::where(mask, v - mean, 0.f);
    auto rstd =
        1.f /
        bl::sqrt(bl::sum(centered * centered, 0) / n.to(bl::float32) + eps);
    auto w = bl::load(weight + cols, mask).to(bl::float32);
    auto b = bl::load(bias + cols, mask).to(bl::float32);
    bl::store(y + row * n + cols, centered * rstd * w + b, mask);
    bl::store(mean_out + row, mean);
    bl::store(rstd_out + row, rstd);
  });
}
auto layer_norm_row_f32 = make_layer_norm_row<float>("layer_norm_row_f32");
auto layer_norm_row_f16 = make_layer_norm_row<bl::half>("layer_norm_row_f16");

// Triton's tutorial form: three loops over column blocks.
template <typename T> auto make_layer_norm_loop(const char *name) {
  return bl::kernel(name, [](bl::Ptr<T> x, bl::Ptr<T> y, bl::Ptr<T> weight,
                             bl::Ptr<T> bias, bl::Ptr<float> mean_out,
                             bl::Ptr<float> rstd_out, bl::i32 n, bl::f32 eps,
                             bl::Const<int> BLOCK) {
    auto row = bl::program_id(0);
    auto x_row = x + row * n;
    auto y_row = y + row * n;
    auto partial_sum = bl::zeros({BLOCK}, bl::float32);
    for (auto start : bl::range(0, n, BLOCK)) {
      auto cols = start + bl::arange(0, BLOCK);
      partial_sum += bl::load(x_row + cols, cols < n, 0.f).to(bl::float32);
    }
    auto mean = bl::sum(partial_sum, 0) / n.to(bl::float32);
    auto partial_squares = bl::zeros({BLOCK}, bl::float32);
    for (auto start : bl::range(0, n, BLOCK)) {
      auto cols = start + bl::arange(0, BLOCK);
      auto v = bl::load(x_row + cols, cols < n, 0.f).to(bl::float32);
      auto centered = bl::where(cols < n, v - mean, 0.f);
      partial_squares += centered * centered;
    }
    auto rstd =
        1.f / bl::sqrt(bl::sum(partial_squares, 0) / n.to(bl::float32) + eps);
    bl::store(mean_out + row, mean);
    bl::store(rstd_out + row, rstd);
    for (auto start : bl::range(0, n, BLOCK)) {
      auto cols = start + bl::arange(0, BLOCK);
      auto mask = cols < n;
      auto w = bl::load(weight + cols, mask).to(bl::float32);
      auto b = bl::load(bias + cols, mask).to(bl::float32);
      auto v = bl::load(x_row + cols, mask, 0.f).to(bl::float32);
      bl::store(y_row + cols, (v - mean) * rstd * w + b, mask);
    }
  });
}
auto layer_norm_loop_f32 = make_layer_norm_loop<float>("layer_norm_loop_f32");
auto layer_norm_loop_f16 =
    make_layer_norm_loop<bl::half>("layer_norm_loop_f16");

int next_power_of_two(int n) {
  int p = 1;
  while (p < n)
    p *= 2;
  return p;
}

gpu_bench::Record record(const char *kernel, std::string config,
                         const char *dtype, int rows, int cols, double gbs,
                         double ceiling) {
  gpu_bench::Record r;
  r.kernel = kernel;
  r.config = std::move(config);
  r.dtype = dtype;
  r.shape = {rows, cols};
  r.blocc = gbs;
  r.peer_value = ceiling;
  return r;
}

template <typename T> float to_float(T v) { return static_cast<float>(v); }

template <typename T>
bool check_layer_norm(const std::vector<T> &x, const std::vector<T> &y,
                      const std::vector<T> &w, const std::vector<T> &b,
                      int rows, int n, double eps, double tolerance) {
  for (int r : gpu_bench::checked_rows(rows)) {
    double mean = 0, var = 0;
    for (int c = 0; c < n; ++c)
      mean += to_float(x[size_t(r) * n + c]);
    mean /= n;
    for (int c = 0; c < n; ++c) {
      double d = to_float(x[size_t(r) * n + c]) - mean;
      var += d * d;
    }
    double rstd = 1 / std::sqrt(var / n + eps);
    for (int c = 0; c < n; ++c) {
      double want =
          (to_float(x[size_t(r) * n + c]) - mean) * rstd * to_float(w[c]) +
          to_float(b[c]);
      double got = to_float(y[size_t(r) * n + c]);
      if (!(std::abs(got - want) <= tolerance * (1 + std::abs(want)))) {
        std::fprintf(stderr, "layer norm wrong at row %d col %d: %g != %g\n", r,
                     c, got, want);
        return false;
      }
    }
  }
  return true;
}

template <typename T, typename K>
bool bench_layer_norm(K &kernel, const char *name, const char *dtype, int rows,
                      int n, int block, int warps, int samples, double ceiling,
                      std::vector<gpu_bench::Record> &records,
                      std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-2, 3), near_one(0.5f, 1.5f);
  std::vector<T> x(size_t(rows) * n), w(n), b(n);
  for (auto &v : x)
    v = static_cast<T>(dist(rng));
  for (auto &v : w)
    v = static_cast<T>(near_one(rng));
  for (auto &v : b)
    v = static_cast<T>(dist(rng));
  bl::DeviceBuffer<T> dx(x), dw(w), db(b), dy(x.size());
  bl::DeviceBuffer<float> dmean(rows), drstd(rows);
  dy.fill(static_cast<T>(std::nanf("")));
  bl::LaunchOptions options;
  options.num_warps = warps;
  const float eps = 1e-5f;
  double ms = median_ms(
      [&] {
        kernel[{rows}].with(options)(dx, dy, dw, db, dmean, drstd, n, eps,
                                     block);
      },
      samples, 10);
  double bytes = 2.0 * x.size() * sizeof(T) + 2.0 * n * sizeof(T) + 8.0 * rows;
  double gbs = bytes / (ms * 1e6);
  std::vector<T> y = dy.to_host();
  if (!check_layer_norm(x, y, w, b, rows, n, eps, sizeof(T) == 2 ? 2e-2 : 1e-4))
    return false;
  std::string config = std::string(name) + " BLOCK=" + std::to_string(block) +
                       " warps=" + std::to_string(warps);
  std::printf("%-44s %5s %6d %9.4f %9.1f %6.3f\n", config.c_str(), dtype, n, ms,
              gbs, gbs / ceiling);
  records.push_back(
      record("layer_norm_fwd", config, dtype, rows, n, gbs, ceiling));
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int rows = 4096, samples = 30;
  std::string json, command = argv[0];
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    command += " " + arg;
    if (i + 1 >= argc) {
      std::cerr << "usage: blocc_bench_gpu_fused [--rows N] [--samples N] "
                   "[--json FILE]\n";
      return 2;
    }
    command += std::string(" ") + argv[i + 1];
    std::string value = argv[++i];
    if (arg == "--rows")
      rows = std::stoi(value);
    else if (arg == "--samples")
      samples = std::stoi(value);
    else if (arg == "--json")
      json = value;
    else {
      std::cerr << "unknown option " << arg << "\n";
      return 2;
    }
  }
  return gpu_bench::run_on_gpu0(
      "blocc_bench_gpu_fused", json, command,
      [&](std::vector<gpu_bench::Record> &records) {
        std::mt19937 rng(12345);

        // The ceiling, on a buffer the size of the largest matrix.
        const int64_t copy_n = int64_t(rows) * 16384;
        bl::DeviceBuffer<float> copy_from(copy_n), copy_to(copy_n);
        copy_from.fill(1.0f);
        double copy_ms =
            median_ms([&] { copy_to.copy_from(copy_from); }, samples, 10);
        const double ceiling = 8.0 * copy_n / (copy_ms * 1e6);
        std::printf("device-to-device copy of %lld floats: %.1f GB/s (the "
                    "ceiling)\n\n",
                    static_cast<long long>(copy_n), ceiling);

        std::printf("%-44s %5s %6s %9s %9s %6s\n", "softmax (rows = 4096)",
                    "dtype", "N", "ms", "GB/s", "ratio");
        for (int n : {256, 1024, 4096, 8192, 16384}) {
          std::uniform_real_distribution<float> dist(-20, 20);
          std::vector<float> x(size_t(rows) * n);
          for (auto &v : x)
            v = dist(rng);
          bl::DeviceBuffer<float> dx(x), dy(x.size());
          const int block = next_power_of_two(n);
          for (int warps : {4, 8, 16}) {
            if (block / (32 * warps) < 1)
              continue;
            dy.fill(std::nanf(""));
            bl::LaunchOptions options;
            options.num_warps = warps;
            double ms = median_ms(
                [&] { softmax[{rows}].with(options)(dy, dx, n, block); },
                samples, 10);
            double gbs = 8.0 * x.size() / (ms * 1e6);
            if (!gpu_bench::softmax_is_right(x, dy.to_host(), rows, n))
              return false;
            std::string config = "BLOCK=" + std::to_string(block) +
                                 " warps=" + std::to_string(warps);
            std::printf("%-44s %5s %6d %9.4f %9.1f %6.3f\n", config.c_str(),
                        "f32", n, ms, gbs, gbs / ceiling);
            records.push_back(
                record("softmax", config, "f32", rows, n, gbs, ceiling));
          }
        }

        std::printf("\n%-44s %5s %6s %9s %9s %6s\n", "layer norm forward",
                    "dtype", "N", "ms", "GB/s", "ratio");
        for (int n : {1024, 4096, 16384}) {
          const int block = next_power_of_two(n);
          for (int warps : {4, 8, 16}) {
            if (block / (32 * warps) < 1)
              continue;
            if (!bench_layer_norm<float>(layer_norm_row_f32, "row", "f32", rows,
                                         n, block, warps, samples, ceiling,
                                         records, rng) ||
                !bench_layer_norm<bl::half>(layer_norm_row_f16, "row", "f16",
                                            rows, n, block, warps, samples,
                                            ceiling, records, rng))
              return false;
          }
          // Triton's tutorial: BLOCK covers the row up to 64 KB, warps =
          // min(max(BLOCK / 256, 1), 8).
          for (bool half : {false, true}) {
            int loop_block = std::min(block, 65536 / (half ? 2 : 4));
            int warps = std::min(std::max(loop_block / 256, 1), 8);
            bool ok =
                half
                    ? bench_layer_norm<bl::half>(
                          layer_norm_loop_f16, "loop", "f16", rows, n,
                          loop_block, warps, samples, ceiling, records, rng)
                    : bench_layer_norm<float>(layer_norm_loop_f32, "loop",
                                              "f32", rows, n, loop_block, warps,
                                              samples, ceiling, records, rng);
            if (!ok)
              return false;
          }
        }

        return true;
      });
}
