// blocc_bench_gpu_launch: what launching a kernel costs the host, and what
// the first launch of a kernel costs (compiling it).
//
// - Launch overhead: host time per launch of a cached kernel (vector add,
//   one program of 1024 elements) through blocc's launch API (argument
//   checks, the specialization lookup, packing, the driver call), on the
//   default stream and on a user stream, next to cuLaunchKernel of the
//   same PTX with its parameters packed once, measured in the same run.
//   Each sample times a burst of launches on the host clock, then waits
//   for the GPU outside the timed span; median of the samples.
// - Cold compile: the first launch of the row softmax kernel (64 rows of
//   N = 1024, 4 warps) in a fresh process, until the GPU finishes: trace
//   and generic passes, LLVM (lowering, -O3, the NVPTX backend), the
//   driver's load (cuModuleLoadDataEx, whose JIT turns the PTX into
//   machine code) and the launch. The CUDA context is made before the
//   clock starts. The program runs itself with --cold-compile, each time
//   with empty caches (BLOCC_CACHE_DIR and the driver's CUDA_CACHE_PATH in
//   a new temporary folder), --runs times, median; each run is followed by
//   a second process on the caches it filled (the disk cache's case), and
//   each process also times a second specialization (BLOCK = 2048: what a
//   further kernel costs once LLVM is initialized).
//
//   blocc_bench_gpu_launch [--samples 200] [--runs 5] [--json FILE]
//                          [--launch-only] [--no-check]
//
// --launch-only skips the cold compile. --no-check skips the result checks:
// for blocc's own launch cost without a GPU, against the do-nothing driver
// of tests/fake_cuda (its launches compute nothing, so the difference
// between blocc's time and cuLaunchKernel's is all blocc's):
//
//   BLOCC_CUDA_DRIVER=build/tests/libblocc_fake_cuda_driver.so
//   build/benchmarks/blocc_bench_gpu_launch --launch-only --no-check
#include "backends/nvptx/gpu_backend.h"
#include "bench_main.h"
#include "gpu_timing.h"
#include "kernels.h"
#include "results_json.h"
#include "runtime/cuda/context.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace bl = blocc;
namespace driver = blocc::cuda::driver;
namespace nvptx = blocc::nvptx;
using gpu_bench::Record;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// The child process of the cold compile: prints "total trace llvm load
/// new_specialization" in milliseconds, or fails.
int cold_compile_child() {
  const int rows = 64, n = 1024;
  bl::cuda::ContextScope context(bl::cuda::context_for_device(0));
  std::vector<float> x = random_floats(size_t(rows) * n, -20, 20);
  bl::DeviceBuffer<float> dx(x), dy(x.size());
  dy.fill(std::nanf(""));
  bl::cuda::synchronize();

  auto start = std::chrono::steady_clock::now();
  const bl::ir::Function &function = gpu_bench::softmax.specialize(
      {bl::detail::to_arg(dy), bl::detail::to_arg(dx), bl::detail::to_arg(n),
       bl::detail::to_arg(1024)});
  double trace = ms_since(start);
  auto llvm_start = std::chrono::steady_clock::now();
  // What the launch compiles (jit/gpu_launch.cpp), so that the launch
  // below finds it compiled.
  nvptx::CompileOptions options;
  options.arch = nvptx::arch_for_device(0);
  nvptx::compile(function, options);
  double llvm = ms_since(llvm_start);
  auto load_start = std::chrono::steady_clock::now();
  gpu_bench::softmax[{rows}](dy, dx, n, 1024);
  bl::cuda::synchronize();
  double load = ms_since(load_start);
  double total = ms_since(start);
  if (!gpu_bench::softmax_is_right(x, dy.to_host(), rows, n))
    return 1;

  dy.fill(std::nanf(""));
  start = std::chrono::steady_clock::now();
  gpu_bench::softmax[{rows}](dy, dx, n, 2048);
  bl::cuda::synchronize();
  double second = ms_since(start);
  if (!gpu_bench::softmax_is_right(x, dy.to_host(), rows, n))
    return 1;
  std::printf("%.3f %.3f %.3f %.3f %.3f\n", total, trace, llvm, load, second);
  return 0;
}

struct ColdRun {
  double total = -1, trace = 0, llvm = 0, load = 0, second = 0;
};

ColdRun run_child(const std::string &self) {
  ColdRun r;
  std::string command = "'" + self + "' --cold-compile";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return r;
  if (std::fscanf(pipe, "%lf %lf %lf %lf %lf", &r.total, &r.trace, &r.llvm,
                  &r.load, &r.second) != 5)
    r.total = -1;
  if (pclose(pipe) != 0)
    r.total = -1;
  return r;
}

std::string describe_runs(const std::vector<double> &v) {
  std::string s;
  char text[32];
  for (double x : v) {
    std::snprintf(text, sizeof text, " %.1f", x);
    s += text;
  }
  return s;
}

/// Cold and disk-cache compile times over `runs` pairs of fresh processes.
bool cold_compile(const std::string &self, int runs,
                  std::vector<Record> &records) {
  std::vector<double> cold, trace, llvm, load, warm, second;
  for (int run = 0; run < runs; ++run) {
    std::string dir =
        (std::filesystem::temp_directory_path() / "blocc-gpu-cold-XXXXXX")
            .string();
    if (!mkdtemp(dir.data())) {
      std::cerr << "cannot create a temporary folder\n";
      return false;
    }
    setenv("BLOCC_CACHE_DIR", (dir + "/blocc").c_str(), 1);
    setenv("CUDA_CACHE_PATH", (dir + "/nv").c_str(), 1);
    ColdRun first = run_child(self), again = run_child(self);
    std::filesystem::remove_all(dir);
    if (first.total < 0 || again.total < 0) {
      std::cerr << "a cold compile process failed (wrong result or no "
                   "output)\n";
      return false;
    }
    cold.push_back(first.total);
    trace.push_back(first.trace);
    llvm.push_back(first.llvm);
    load.push_back(first.load);
    second.push_back(first.second);
    warm.push_back(again.total);
  }
  using gpu_bench::median;
  std::printf("\nsoftmax 64 x 1024 (BLOCK 1024, 4 warps), first launch in a "
              "fresh process (ms)\n");
  std::printf("  empty caches:%s\n", describe_runs(cold).c_str());
  std::printf("    of which trace + passes %.1f, LLVM %.1f, driver load + "
              "run %.1f (medians)\n",
              median(trace), median(llvm), median(load));
  std::printf("  second process, caches filled:%s\n",
              describe_runs(warm).c_str());
  std::printf("  a second specialization (BLOCK 2048) in the first "
              "process:%s\n",
              describe_runs(second).c_str());
  char config[256];
  std::snprintf(config, sizeof config,
                "softmax BLOCK=1024 warps=4, first launch in a fresh "
                "process, empty caches: trace + passes %.1f, LLVM %.1f, "
                "driver load + run %.1f ms (medians of %d)",
                median(trace), median(llvm), median(load), runs);
  auto compile_record = [&](const char *kernel, double value,
                            const std::string &what) {
    Record r;
    r.kernel = kernel;
    r.config = what;
    r.shape = {64, 1024};
    r.metric = "ms";
    r.higher_is_better = false;
    r.blocc = value;
    r.peer = "none";
    records.push_back(r);
  };
  compile_record("cold compile", median(cold), config);
  compile_record("compile, disk cache", median(warm),
                 "softmax, first launch in a second process: blocc's disk "
                 "cache and the driver's JIT cache filled");
  compile_record("compile, new specialization", median(second),
                 "softmax BLOCK=2048 after BLOCK=1024 in the same process");
  return true;
}

/// Host microseconds per launch: blocc's launch API on the default stream
/// and on a user stream, and cuLaunchKernel of the same PTX.
bool launch_overhead(int samples, bool check_results,
                     std::vector<Record> &records) {
  const driver::Api &api = driver::api();
  const int n = 1024, burst = 100;
  std::vector<float> x = random_floats(n, -1, 1), y = random_floats(n, 2, 3);
  bl::DeviceBuffer<float> dx(x), dy(y), dout(n);
  driver::CUstream stream = nullptr;
  driver::check(api.cuStreamCreate(&stream, driver::CU_STREAM_NON_BLOCKING),
                "cuStreamCreate", "benchmark");
  bl::LaunchOptions on_stream;
  on_stream.stream = stream;

  // The same PTX, loaded and launched by hand.
  const bl::ir::Function &function = gpu_bench::vector_add.specialize(
      {bl::detail::to_arg(dx), bl::detail::to_arg(dy), bl::detail::to_arg(dout),
       bl::detail::to_arg(n), bl::detail::to_arg(1024)});
  nvptx::CompileOptions options;
  options.arch = nvptx::arch_for_device(0);
  auto compiled = nvptx::compile(function, options);
  driver::CUmodule module = nullptr;
  driver::check(api.cuModuleLoadDataEx(&module,
                                       nvptx::ptx_of(*compiled).c_str(), 0,
                                       nullptr, nullptr),
                "cuModuleLoadDataEx", "benchmark");
  driver::CUfunction raw = nullptr;
  driver::check(api.cuModuleGetFunction(&raw, module,
                                        nvptx::ptx_entry(*compiled).c_str()),
                "cuModuleGetFunction", "benchmark");
  auto address = [](const bl::DeviceBuffer<float> &b) {
    return static_cast<driver::CUdeviceptr>(
        reinterpret_cast<uintptr_t>(b.data()));
  };
  driver::CUdeviceptr px = address(dx), py = address(dy), pout = address(dout);
  int n32 = n;
  void *parameters[] = {&px, &py, &pout, &n32};

  auto wait = [] { bl::cuda::synchronize(); };
  auto check = [&](const char *what) {
    if (!check_results)
      return true;
    std::vector<float> out = dout.to_host();
    for (int i = 0; i < n; ++i)
      if (out[i] != x[i] + y[i]) {
        std::fprintf(stderr, "%s: wrong result at %d\n", what, i);
        return false;
      }
    dout.fill(std::nanf(""));
    return true;
  };
  dout.fill(std::nanf(""));
  double blocc_us = gpu_bench::median_host_us(
      [&] { gpu_bench::vector_add[{1}](dx, dy, dout, n, 1024); }, wait, samples,
      burst);
  if (!check("blocc, default stream"))
    return false;
  double stream_us = gpu_bench::median_host_us(
      [&] {
        gpu_bench::vector_add[{1}].with(on_stream)(dx, dy, dout, n, 1024);
      },
      wait, samples, burst);
  if (!check("blocc, user stream"))
    return false;
  double raw_us = gpu_bench::median_host_us(
      [&] {
        api.cuLaunchKernel(raw, 1, 1, 1, 128, 1, 1, 0, nullptr, parameters,
                           nullptr);
      },
      wait, samples, burst);
  if (!check("cuLaunchKernel"))
    return false;
  api.cuStreamDestroy(stream);

  std::printf("\nhost time per launch, vector add of 1024 floats on one "
              "program (median of %d bursts of %d)\n",
              samples, burst);
  std::printf("  blocc, default stream  %7.2f us\n", blocc_us);
  std::printf("  blocc, user stream     %7.2f us\n", stream_us);
  std::printf("  cuLaunchKernel         %7.2f us (same PTX, parameters packed "
              "once)\n",
              raw_us);
  std::printf("  blocc's own cost       %7.2f us (default stream), %.2f us "
              "(user stream)\n",
              blocc_us - raw_us, stream_us - raw_us);
  for (auto [value, config] :
       {std::pair{blocc_us, "vector add, one program, default stream"},
        std::pair{stream_us, "vector add, one program, user stream"}}) {
    Record r;
    r.kernel = "launch overhead";
    r.config = config;
    r.shape = {n};
    r.metric = "us";
    r.higher_is_better = false;
    r.blocc = value;
    r.peer = "cuLaunchKernel (same PTX)";
    r.peer_value = raw_us;
    records.push_back(r);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]) == "--cold-compile") {
    try {
      return cold_compile_child();
    } catch (const bl::Error &e) {
      std::cerr << "blocc_bench_gpu_launch --cold-compile: " << e.what()
                << "\n";
      return 1;
    }
  }
  int samples = 200, runs = 5;
  bool launch_only = false, check_results = true;
  std::string json, command = "blocc_bench_gpu_launch";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--launch-only" || arg == "--no-check") {
      if (arg == "--launch-only")
        launch_only = true;
      else
        check_results = false;
      command += " " + arg;
      continue;
    }
    if (i + 1 >= argc ||
        (arg != "--samples" && arg != "--runs" && arg != "--json")) {
      std::cerr << "usage: blocc_bench_gpu_launch [--samples N] [--runs N] "
                   "[--json FILE] [--launch-only] [--no-check]\n";
      return 2;
    }
    std::string value = argv[++i];
    command += " " + arg + " " + value;
    if (arg == "--samples")
      samples = std::stoi(value);
    else if (arg == "--runs")
      runs = std::stoi(value);
    else
      json = value;
  }
  return gpu_bench::run_on_gpu0(
      "blocc_bench_gpu_launch", json, command,
      [&](std::vector<gpu_bench::Record> &records) {
        std::string self = std::filesystem::read_symlink("/proc/self/exe");
        return launch_overhead(samples, check_results, records) &&
               (launch_only || cold_compile(self, runs, records));
      });
}
