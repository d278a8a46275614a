// blocc-fuzz: the differential checks of tests/differential over a longer
// range of seeds than CI runs, for developers:
//
//   blocc-fuzz --seeds 10000 --start 1          passes, printer, parser
//   blocc-fuzz --seeds 1 --start 4242 --print   look at one kernel
//   blocc-fuzz --seeds 2000 --backend cpu       interpreter vs CPU backend
//   blocc-fuzz --seeds 500 --backend gpu        GPU vs CPU backend (a GPU)
//   blocc-fuzz --seeds 2000 --backend ptx       PTX through ptxas (no GPU)
//
// Every failure is printed with its seed and IR; the exit status is 1 when
// any kernel failed. See tests/README.md, "Differential testing".
#include "differential.h"
#include "executors.h"
#include "float64_reference.h"
#include "gpu_checks.h"
#include "kernel_generator.h"
#include "pass_checks.h"

#include "ir/printer.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

namespace {

using namespace blocc;
using namespace blocc::differential;

struct Options {
  uint64_t seeds = 1000;
  uint64_t start = 1;
  int size = GeneratorOptions().size;
  bool cpu = false;
  bool gpu = false;
  bool ptx = false;
  bool print = false;
  bool stats = false;
  int max_failures = 10;
};

void usage(std::ostream &os) {
  os << "usage: blocc-fuzz [--seeds N] [--start S] [--size K]\n"
        "                  [--backend cpu|gpu|ptx]... [--print] [--stats]\n"
        "                  [--max-failures F]\n"
        "\n"
        "Generates kernels for seeds S .. S+N-1 (default 1 .. 1000) and\n"
        "checks each: verify, print/parse round trip, the interpreter's\n"
        "results before and after canonicalize+cse+dce (bit for bit), and\n"
        "its float results against a float64 twin of the kernel (within the\n"
        "error bounds the generator derived).\n"
        "\n"
        "  --size K          random actions per kernel (default "
     << Options().size
     << ")\n"
        "  --backend cpu     also compare the interpreter with the CPU "
        "backend\n"
        "  --backend gpu     also compare the GPU backend with the CPU "
        "backend\n"
        "                    (1, 2, 4 or 8 warps by seed) and its float\n"
        "                    results with the float64 twin; needs a GPU\n"
        "  --backend ptx     also compile for sm_80 and sm_90 and assemble "
        "the\n"
        "                    PTX with the ptxas on PATH; needs no GPU\n"
        "  --print           print every kernel's IR\n"
        "  --stats           count the ops the kernels hold, by name\n"
        "  --max-failures F  stop after F failing kernels (default 10)\n";
}

uint64_t number(const std::string &flag, const char *text) {
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (!text[0] || *end) {
    std::cerr << "blocc-fuzz: " << flag << " takes a number, got '" << text
              << "'\n";
    std::exit(2);
  }
  return v;
}

Options parse_options(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 == argc) {
        std::cerr << "blocc-fuzz: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seeds")
      o.seeds = number(arg, value());
    else if (arg == "--start")
      o.start = number(arg, value());
    else if (arg == "--size")
      o.size = static_cast<int>(number(arg, value()));
    else if (arg == "--max-failures")
      o.max_failures = static_cast<int>(number(arg, value()));
    else if (arg == "--backend") {
      std::string backend = value();
      if (backend == "cpu")
        o.cpu = true;
      else if (backend == "gpu")
        o.gpu = true;
      else if (backend == "ptx")
        o.ptx = true;
      else {
        std::cerr << "blocc-fuzz: unknown backend '" << backend
                  << "'; expected cpu, gpu or ptx\n";
        std::exit(2);
      }
    } else if (arg == "--print")
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

} // namespace

int main(int argc, char **argv) {
  Options options = parse_options(argc, argv);
  std::optional<Executor> cpu;
  if (options.cpu || options.gpu) {
    cpu = cpu_backend_executor();
    if (!cpu) {
      std::cerr << "blocc-fuzz: blocc is built without the CPU backend "
                   "(BLOCC_CPU_BACKEND=OFF)\n";
      return 2;
    }
  }
  if (std::string why = gpu_unavailable_reason(); options.gpu && !why.empty()) {
    std::cerr << "blocc-fuzz: --backend gpu: " << why << "\n";
    return 2;
  }
  if (std::string why = ptx_check_unavailable_reason();
      options.ptx && !why.empty()) {
    std::cerr << "blocc-fuzz: --backend ptx: " << why << "\n";
    return 2;
  }
  if (options.ptx && !ptxas_present())
    std::cerr << "blocc-fuzz: --backend ptx: ptxas is not on PATH; the "
                 "kernels are compiled to PTX, not assembled\n";
  auto started = std::chrono::steady_clock::now();
  std::map<std::string, int> op_counts;
  int failures = 0;
  uint64_t done = 0;
  for (uint64_t seed = options.start; seed < options.start + options.seeds;
       ++seed, ++done) {
    GeneratorOptions generator;
    generator.size = options.size;
    GeneratedKernel kernel = generate_kernel(seed, generator);
    if (options.print)
      std::cout << "// seed " << seed << "\n" << ir::print(*kernel.function);
    if (options.stats)
      kernel.function->walk(
          [&](ir::Operation &op) { ++op_counts[std::string(op.name())]; });
    CheckResult passes = check_passes(kernel);
    std::string report = passes.report;
    if (report.empty())
      report = check_against_float64(kernel, interpreter_executor(), seed);
    if (report.empty() && options.cpu) {
      CompareOptions compare;
      compare.name_a = "interpreter";
      compare.name_b = "cpu";
      DifferentialResult r =
          compare_runs(kernel, interpreter_executor(), *cpu, compare);
      if (!r.ok)
        report = r.report;
    }
    if (report.empty() && options.ptx) {
      PtxCheck ptx = check_ptx(kernel, num_warps_for_seed(seed));
      if (!ptx.ok())
        report = ptx.report(kernel, num_warps_for_seed(seed));
    }
    if (report.empty() && options.gpu)
      report = check_on_gpu(kernel, *cpu);
    if (report.empty())
      continue;
    std::cout << "FAIL seed " << seed << "\n" << report << "\n";
    if (++failures >= options.max_failures) {
      ++done;
      break;
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (options.stats)
    for (const auto &[name, count] : op_counts)
      std::cout << name << " " << count << "\n";
  std::cout << "blocc-fuzz: " << done << " kernels (seeds " << options.start
            << " ..), " << failures << " failed, " << seconds << " s\n";
  return failures == 0 ? 0 : 1;
}
