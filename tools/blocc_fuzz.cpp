// blocc-fuzz: the differential checks of tests/differential over a longer
// range of seeds than CI runs, for developers:
//
//   blocc-fuzz --seeds 10000 --start 1          passes, printer, parser
//   blocc-fuzz --seeds 1 --start 4242 --print   look at one kernel
//   blocc-fuzz --seeds 2000 --backend cpu       interpreter vs CPU backend
//   blocc-fuzz --seeds 500 --backend gpu        GPU vs CPU backend (a GPU)
//   blocc-fuzz --seeds 2000 --backend ptx       PTX through ptxas (no GPU)
//   blocc-fuzz --sizes 8-24 ...                 kernels of 8 to 24 actions
//   blocc-fuzz --regressions --backend cpu      every kernel that ever failed
//
// Every failure is printed with its seed, IR and the command that reruns
// it; the exit status is 1 when any kernel failed. scripts/fuzz runs many
// of these at once. See tests/README.md, "Differential testing".
#include "fuzz_check.h"
#include "gpu_checks.h"
#include "regression_batch.h"

#include "ir/printer.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace blocc;
using namespace blocc::differential;

struct Options {
  uint64_t seeds = 1000;
  uint64_t start = 1;
  int size_lo = GeneratorOptions().size;
  int size_hi = GeneratorOptions().size;
  bool regressions = false;
  int generation = kLatestGeneration;
  Executors executors;
  bool print = false;
  bool stats = false;
  int max_failures = 10;
};

void usage(std::ostream &os) {
  os << "usage: blocc-fuzz [--seeds N] [--start S] [--size K | --sizes LO-HI]\n"
        "                  [--regressions] [--generation G]\n"
        "                  [--backend cpu|gpu|ptx]...\n"
        "                  [--print] [--stats] [--max-failures F]\n"
        "\n"
        "Generates kernels for seeds S .. S+N-1 (default 1 .. 1000) and\n"
        "checks each: verify, print/parse round trip, the interpreter's\n"
        "results before and after canonicalize+cse+dce (bit for bit), and\n"
        "its float results against a float64 twin of the kernel (within the\n"
        "error bounds the generator derived).\n"
        "\n"
        "  --size K          random actions per kernel (default "
     << Options().size_lo
     << ")\n"
        "  --sizes LO-HI     seed S gets LO + S mod (HI-LO+1) actions\n"
        "  --regressions     check the regression batch (every kernel that\n"
        "                    ever failed) instead of a range of seeds\n"
        "  --generation G    the generator's generation (default the newest,\n"
        "                    "
     << kLatestGeneration
     << "): 1 the first, 2 adds atomics, 3 three-\n"
        "                    dimensional blocks, 4 matmul loops over K,\n"
        "                    5 tensor-core tiles, 6 int8 tensor-core tiles\n"
        "  --backend cpu     also compare the interpreter with the CPU "
        "backend\n"
        "  --backend gpu     also compare the GPU backend with the CPU "
        "backend\n"
        "                    (1, 2, 4 or 8 warps by seed) and its float\n"
        "                    results with the float64 twin; needs a GPU\n"
        "  --backend ptx     also compile for sm_80 and sm_90, require no\n"
        "                    local memory, and assemble the PTX with the\n"
        "                    ptxas on PATH; needs no GPU\n"
        "  --print           print every kernel's IR\n"
        "  --stats           count the ops the kernels hold, by name\n"
        "  --max-failures F  stop after F failing kernels (default 10)\n";
}

[[noreturn]] void fail_usage(const std::string &message) {
  std::cerr << "blocc-fuzz: " << message << "\n";
  std::exit(2);
}

uint64_t number(const std::string &flag, const char *text) {
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (!text[0] || *end)
    fail_usage(flag + " takes a number, got '" + text + "'");
  return v;
}

void parse_sizes(Options &o, const std::string &text) {
  size_t dash = text.find('-');
  if (dash == std::string::npos)
    fail_usage("--sizes takes LO-HI, got '" + text + "'");
  o.size_lo = static_cast<int>(number("--sizes", text.substr(0, dash).c_str()));
  o.size_hi =
      static_cast<int>(number("--sizes", text.substr(dash + 1).c_str()));
  if (o.size_lo > o.size_hi)
    fail_usage("--sizes: LO must not exceed HI, got '" + text + "'");
}

void parse_backend(Options &o, const std::string &backend) {
  if (backend == "cpu")
    o.executors.cpu = true;
  else if (backend == "gpu")
    o.executors.gpu = true;
  else if (backend == "ptx")
    o.executors.ptx = true;
  else
    fail_usage("unknown backend '" + backend + "'; expected cpu, gpu or ptx");
}

Options parse_options(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 == argc)
        fail_usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--seeds")
      o.seeds = number(arg, value());
    else if (arg == "--start")
      o.start = number(arg, value());
    else if (arg == "--size")
      o.size_lo = o.size_hi = static_cast<int>(number(arg, value()));
    else if (arg == "--sizes")
      parse_sizes(o, value());
    else if (arg == "--regressions")
      o.regressions = true;
    else if (arg == "--generation") {
      o.generation = static_cast<int>(number(arg, value()));
      if (o.generation < 1 || o.generation > kLatestGeneration)
        fail_usage("--generation takes 1 to " +
                   std::to_string(kLatestGeneration));
    } else if (arg == "--max-failures")
      o.max_failures = static_cast<int>(number(arg, value()));
    else if (arg == "--backend")
      parse_backend(o, value());
    else if (arg == "--print")
      o.print = true;
    else if (arg == "--stats")
      o.stats = true;
    else if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      std::exit(0);
    } else {
      std::cerr << "blocc-fuzz: unknown option '" << arg << "'\n";
      usage(std::cerr);
      std::exit(2);
    }
  }
  return o;
}

/// The kernels to check: seeds and what each generates.
std::vector<std::pair<uint64_t, FuzzKernel>>
kernels_to_check(const Options &o) {
  std::vector<std::pair<uint64_t, FuzzKernel>> kernels;
  if (o.regressions) {
    for (const RegressionKernel &entry : kRegressionBatch)
      kernels.push_back({entry.seed, {entry.size, entry.generation}});
    return kernels;
  }
  for (uint64_t seed = o.start; seed < o.start + o.seeds; ++seed)
    kernels.push_back(
        {seed, {size_for_seed(seed, o.size_lo, o.size_hi), o.generation}});
  return kernels;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parse_options(argc, argv);
  if (std::string why = executors_unavailable_reason(options.executors);
      !why.empty()) {
    std::cerr << "blocc-fuzz: " << why << "\n";
    return 2;
  }
  if (options.executors.ptx && !ptxas_present())
    std::cerr << "blocc-fuzz: --backend ptx: ptxas is not on PATH; the "
                 "kernels are compiled to PTX, not assembled\n";
  auto started = std::chrono::steady_clock::now();
  std::map<std::string, int> op_counts;
  int failures = 0;
  uint64_t done = 0;
  for (const auto &[seed, what] : kernels_to_check(options)) {
    ++done;
    GeneratedKernel kernel = generate_fuzz_kernel(seed, what);
    if (options.print)
      std::cout << "// seed " << seed << "\n" << ir::print(*kernel.function);
    if (options.stats)
      kernel.function->walk(
          [&](ir::Operation &op) { ++op_counts[std::string(op.name())]; });
    std::string report = check_kernel(kernel, options.executors);
    if (report.empty())
      continue;
    std::cout << "FAIL seed " << seed << " size " << what.size << "\n"
              << report << "\nreproduce: "
              << reproduce_command(seed, what, options.executors) << "\n\n";
    if (++failures >= options.max_failures)
      break;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (options.stats)
    for (const auto &[name, count] : op_counts)
      std::cout << name << " " << count << "\n";
  std::cout << "blocc-fuzz: " << done << " kernels ("
            << (options.regressions ? std::string("the regression batch")
                                    : "seeds " + std::to_string(options.start) +
                                          " .., generation " +
                                          std::to_string(options.generation))
            << "), " << failures << " failed, " << seconds << " s\n";
  return failures == 0 ? 0 : 1;
}
