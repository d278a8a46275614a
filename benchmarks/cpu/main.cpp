// blocc_bench_cpu: blocc's CPU backend side by side with hand-written
// OpenMP C++ (peers.cpp) and numpy, in one run on the same thread count.
// Prints a table and writes JSON (benchmarks/README.md).
//
//   blocc_bench_cpu [--quick] [--json PATH] [--no-numpy]
//
// Exits non-zero when a blocc result disagrees with its peer's (bars that
// are missed are reported, not failures).
#include "backends/cpu/cpu_backend.h"
#include "suite.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#ifndef BLOCC_BENCH_SOURCE_DIR
#error "benchmarks/CMakeLists.txt defines BLOCC_BENCH_SOURCE_DIR"
#endif

namespace {

struct Options {
  bool quick = false;
  bool numpy = true;
  std::string json = BLOCC_BENCH_SOURCE_DIR "/results/cpu.json";
};

[[noreturn]] void usage(const char *problem) {
  std::fprintf(stderr,
               "blocc_bench_cpu: %s\nusage: blocc_bench_cpu [--quick] "
               "[--json PATH] [--no-numpy]\n",
               problem);
  std::exit(2);
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string today() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::localtime(&now));
  return text;
}

/// The thread count both sides use: BLOCC_NUM_THREADS when set, else
/// OpenMP's (OMP_NUM_THREADS, else the hardware's), pinned for blocc too.
int pin_threads() {
  int threads = omp_get_max_threads();
  if (const char *env = std::getenv("BLOCC_NUM_THREADS"))
    if (int v = std::atoi(env); v > 0)
      threads = v;
  setenv("BLOCC_NUM_THREADS", std::to_string(threads).c_str(), 1);
  omp_set_num_threads(threads);
  return threads;
}

/// A disk compile cache (when blocc has one) must not make the cold
/// compile warm: point it at a fresh empty folder for this run.
std::string empty_cache_dir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "blocc-bench-cache-XXXXXX")
          .string();
  if (!mkdtemp(pattern.data()))
    return "";
  setenv("BLOCC_CACHE_DIR", pattern.c_str(), 1);
  return pattern;
}

/// The numpy timing script: in the source tree the program was built
/// from, else (the program copied to another machine) under the current
/// directory, when that is a checkout of blocc.
std::string numpy_script() {
  std::string built = BLOCC_BENCH_SOURCE_DIR "/cpu/numpy_peer.py";
  std::string here = "benchmarks/cpu/numpy_peer.py";
  return std::filesystem::exists(built) || !std::filesystem::exists(here)
             ? built
             : std::filesystem::absolute(here).string();
}

} // namespace

int main(int argc, char **argv) {
  std::string cache_dir = empty_cache_dir();
  if (argc == 2 && std::string(argv[1]) == "--cold-compile") {
    pin_threads();
    double ms = bench::cold_compile_milliseconds();
    std::printf("%.3f\n", ms);
    std::filesystem::remove_all(cache_dir);
    return ms < 0 ? 1 : 0;
  }
  Options options;
  std::string command = "blocc_bench_cpu";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    command += " " + arg;
    if (arg == "--quick")
      options.quick = true;
    else if (arg == "--no-numpy")
      options.numpy = false;
    else if (arg == "--json" && i + 1 < argc)
      command += " " + (options.json = argv[++i]);
    else
      usage(("unknown argument '" + arg + "'").c_str());
  }

  bench::Report report;
  report.threads = pin_threads();
  command =
      "BLOCC_NUM_THREADS=" + std::to_string(report.threads) + " " + command;
  report.command = command;
  report.date = today();
  report.hardware =
      cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) +
      " hardware threads; blocc target " + blocc::cpu::target_description();
  bench::TimingPlan plan;
  if (options.quick)
    plan = {.warmup = 1, .min_reps = 5, .max_reps = 200, .min_seconds = 0.2};
  uint64_t seed = std::random_device{}();
  std::printf("blocc_bench_cpu: %s, %d threads, seed %llu\n",
              report.hardware.c_str(), report.threads,
              static_cast<unsigned long long>(seed));

  bench::NumpyPeer numpy(numpy_script(), report.threads);
  if (!options.numpy)
    numpy.disable("--no-numpy");
  bench::Suite suite(report, numpy, plan, seed);
  suite.compile_latency(std::filesystem::read_symlink("/proc/self/exe"),
                        options.quick ? 3 : 7);
  suite.relaunch();
  suite.vector_add(1 << 24);
  for (auto f :
       {bench::peer::MathFunction::Exp, bench::peer::MathFunction::Log,
        bench::peer::MathFunction::Sin, bench::peer::MathFunction::Tanh,
        bench::peer::MathFunction::Erf, bench::peer::MathFunction::Sigmoid})
    suite.math(f, 1 << 18);
  suite.softmax(4096, 1024);
  suite.softmax(4096, 4096);
  suite.layer_norm(4096, 4096);
  suite.matmul(1024, 1024, 1024);

  report.print_table();
  std::filesystem::remove_all(cache_dir);
  if (suite.failed()) {
    std::printf("\nblocc_bench_cpu: FAILED: a blocc result disagrees with its "
                "peer (see 'check FAILED' above); no JSON written\n");
    return 1;
  }
  report.write_json(options.json);
  std::printf("\nwrote %s\n", options.json.c_str());
  return 0;
}
