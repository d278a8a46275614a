// blocc_bench_gpu: vector add (f32) on the GPU backend next to the
// device-to-device copy bandwidth measured in the same run (the ceiling for
// a memory-bound kernel). Bandwidth counts bytes read plus written: 12
// bytes per element for the add, 8 for the copy. Each figure is the median
// of many samples, each sample the time of a burst of launches between two
// CUDA events, after warm-up (compilation, module load, first touch).
//
//   blocc_bench_gpu [--log2n 26,28] [--samples 50] [--json FILE]
//
// Prints a table and, with --json, writes the results format
// (benchmarks/README.md).
#include "bench_main.h"
#include "gpu_timing.h"
#include "kernels.h"
#include "results_json.h"
#include "runtime/cuda/context.h"
#include <blocc/blocc.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace bl = blocc;
using gpu_bench::median_ms;

namespace {

std::vector<int> parse_list(const std::string &text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    out.push_back(std::stoi(item));
  return out;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> log2ns = {26};
  int samples = 50;
  std::string json;
  std::string command = argv[0];
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    command += " " + arg;
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      command += std::string(" ") + argv[i + 1];
      return argv[++i];
    };
    if (arg == "--log2n")
      log2ns = parse_list(value());
    else if (arg == "--samples")
      samples = std::stoi(value());
    else if (arg == "--json")
      json = value();
    else {
      std::cerr << "usage: blocc_bench_gpu [--log2n 26,28] [--samples N] "
                   "[--json FILE]\n";
      return 2;
    }
  }
  return gpu_bench::run_on_gpu0(
      "blocc_bench_gpu", json, command,
      [&](std::vector<gpu_bench::Record> &records) {
        std::mt19937 rng(12345);
        std::uniform_real_distribution<float> dist(-1, 1);
        for (int log2n : log2ns) {
          int64_t n = int64_t{1} << log2n;
          std::vector<float> x(n), y(n);
          for (auto &v : x)
            v = dist(rng);
          for (auto &v : y)
            v = dist(rng);
          bl::DeviceBuffer<float> dx(x), dy(y), dout(n), dcopy(n);
          // The ceiling: a device-to-device copy of n floats (8n bytes moved).
          double copy_ms = median_ms([&] { dcopy.copy_from(dx); }, samples, 10);
          double copy_gbs = 8.0 * n / (copy_ms * 1e6);
          std::printf("\nn = 2^%d: device-to-device copy %.3f ms, %.1f GB/s "
                      "(the ceiling)\n",
                      log2n, copy_ms, copy_gbs);
          std::printf("%-24s %10s %10s %8s\n", "vector add f32", "ms", "GB/s",
                      "ratio");
          for (int block : {1024, 2048, 4096}) {
            for (int warps : {4, 8}) {
              bl::LaunchOptions options;
              options.num_warps = warps;
              auto launch = [&] {
                gpu_bench::vector_add[{bl::cdiv(n, block)}].with(options)(
                    dx, dy, dout, static_cast<int>(n), block);
              };
              dout.fill(std::nanf(""));
              double ms = median_ms(launch, samples, 10);
              double gbs = 12.0 * n / (ms * 1e6);
              // Check the result of the timed launches.
              std::vector<float> out = dout.to_host();
              for (int64_t i = 0; i < n; ++i)
                if (out[i] != x[i] + y[i]) {
                  std::fprintf(stderr, "wrong result at %lld: %g != %g\n",
                               static_cast<long long>(i), out[i], x[i] + y[i]);
                  return false;
                }
              std::string config = "BLOCK=" + std::to_string(block) +
                                   " warps=" + std::to_string(warps);
              std::printf("%-24s %10.3f %10.1f %8.3f\n", config.c_str(), ms,
                          gbs, gbs / copy_gbs);
              gpu_bench::Record r;
              r.kernel = "vector_add";
              r.config = config;
              r.shape = {n};
              r.blocc = gbs;
              r.peer_value = copy_gbs;
              records.push_back(r);
            }
          }
        }
        return true;
      });
}
