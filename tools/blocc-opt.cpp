// blocc-opt: reads textual block IR, runs generic passes by name, verifies,
// and prints the result. It exists for golden tests (tests/lit) and for
// poking at a pass by hand:
//
//   blocc-opt --pass=canonicalize --pass=cse kernel.bir
//   blocc-opt --pipeline=default --print-after-all kernel.bir
//   blocc-opt --pipeline=gpu --num-warps=8 --arch=sm_89 kernel.bir
//   blocc-opt --list-passes
//
// The GPU backend's passes (backends/nvptx/gpu_passes.h: gpu-*, in GPU
// backend builds) turn block IR into GPU IR, whose attributes carry their
// decisions; --emit-ptx lowers GPU IR as its attributes say.
//
// The input is verified before the first pass and after every pass, so a
// pass that breaks the IR is named in the message. Every error goes to
// stderr and exits with status 1.
//
// --split-input-file (as in mlir-opt) cuts the input at lines holding only
// "// -----" and handles each piece on its own, so that one test file can
// hold many error cases: every piece's error is reported, line numbers stay
// those of the whole file, and the exit status is 1 if any piece failed.
#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif
#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#include "backends/nvptx/gpu_passes.h"
#endif
#include "ir/axis_info.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/passes.h"
#include "ir/printer.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace blocc;

#ifdef BLOCC_HAVE_CPU_BACKEND
constexpr bool kHaveCpuBackend = true;
#else
constexpr bool kHaveCpuBackend = false;
#endif
#ifdef BLOCC_HAVE_NVPTX_BACKEND
constexpr bool kHaveNvptxBackend = true;
#else
constexpr bool kHaveNvptxBackend = false;
#endif

/// A pass of the block IR (ir/passes.h) or of the GPU IR (gpu_passes.h).
struct Pass {
  std::string name;
  const ir::PassInfo *block_pass = nullptr;
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  const nvptx::GpuPassInfo *gpu_pass = nullptr;
#endif
};

struct Options {
  std::vector<Pass> passes;
  // --print-before-all / --print-after-all: the IR around every pass, on
  // stderr (stdout keeps the result alone, as in mlir-opt).
  bool print_before_all = false;
  bool print_after_all = false;
  bool print_axis_info = false;
  // --emit-llvm[=unoptimized] and --vector-bits=N (CPU backend builds).
  bool emit_llvm = false;
  bool emit_llvm_optimized = true;
  int vector_bits = 0;
  // --check=bounds|races: the checked variant (BLOCC_CHECK).
  bool check_bounds = false;
  bool detect_races = false;
  // --emit-ptx[=ARCH], --arch=ARCH, --num-warps=N and --num-stages=N
  // (GPU backend builds; also what the GPU passes decide for).
  bool emit_ptx = false;
  // --emit-nvvm[=unoptimized]: the GPU backend's LLVM IR instead of PTX.
  bool emit_nvvm = false;
  bool emit_nvvm_optimized = true;
  // --emit-layouts: the GPU backend's layouts stage instead of PTX.
  bool emit_layouts = false;
  std::string gpu_arch = "sm_90";
  int num_warps = 4;
  int num_stages = 3;
  bool list_passes = false;
  bool split_input_file = false;
  bool help = false;
  std::string input = "-";
};

void usage(std::ostream &os) {
  os << "usage: blocc-opt [--pass=NAME]... [--pipeline=default|gpu] "
        "[--print-after-all]\n"
        "                 [--print-axis-info] [file|-]\n"
        "       blocc-opt --list-passes\n"
        "\n"
        "Reads textual block IR (one or more functions) from the file, or\n"
        "stdin for '-' or no file, runs the passes in the order given,\n"
        "verifies, and prints the IR on stdout.\n"
        "\n"
        "  --pass=NAME        run pass NAME (repeatable; see --list-passes)\n"
        "  --pipeline=default run the passes the compiler runs on every\n"
        "                     traced kernel, in its order (at this place\n"
        "                     among the --pass options)\n"
        "  --pipeline=gpu     run the GPU backend's passes (gpu-*), which\n"
        "                     annotate the IR with its decisions for\n"
        "                     --arch, --num-warps and --num-stages\n"
        "  --print-before-all print the IR before every pass (stderr)\n"
        "  --print-after-all  print the IR after every pass (stderr)\n"
        "  --print-axis-info  print each function's axis info (as // "
        "comments)\n"
        "                     before its IR\n"
        "  --split-input-file handle each piece between '// -----' lines on\n"
        "                     its own (errors go on to the next piece)\n"
        "  --emit-llvm        print the CPU backend's optimized LLVM IR\n"
        "                     instead of the block IR (=unoptimized: as\n"
        "                     lowered, before -O3)\n"
        "  --vector-bits=N    lower for N-bit vectors (128, 256, 512)\n"
        "                     instead of the host's\n"
        "  --check=MODE       with --emit-llvm: the checked variant, as\n"
        "                     BLOCC_CHECK=MODE compiles it (bounds, races)\n"
        "  --emit-ptx[=ARCH]  print the GPU backend's PTX for ARCH (sm_80,\n"
        "                     sm_86, sm_89, sm_90 (default), sm_90a); GPU\n"
        "                     IR (the gpu-* passes' output) is lowered as\n"
        "                     its attributes say\n"
        "  --arch=ARCH        the GPU architecture, as --emit-ptx=ARCH\n"
        "  --emit-nvvm        print the GPU backend's LLVM IR (NVVM) for the\n"
        "                     --emit-ptx architecture, after -O3\n"
        "                     (=unoptimized: as lowered)\n"
        "  --emit-layouts     print the GPU backend's layouts stage: the IR\n"
        "                     with each value's layouts, where each dot\n"
        "                     runs, which loops are pipelined\n"
        "  --num-warps=N      warps per program for --emit-ptx,\n"
        "                     --emit-nvvm and --emit-layouts (default 4)\n"
        "  --num-stages=N     stages of loops that load the tiles of dots\n"
        "                     on tensor cores (default 3; 1: no pipelining)\n"
        "  --list-passes      print the passes and what they do\n"
        "  --help             print this message\n";
}

Pass find_pass(const std::string &name) {
  std::string known;
  for (const ir::PassInfo &p : ir::all_passes()) {
    if (p.name == name)
      return {p.name, &p};
    known += (known.empty() ? "" : ", ") + p.name;
  }
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  for (const nvptx::GpuPassInfo &p : nvptx::gpu_passes()) {
    if (p.name == name)
      return {p.name, nullptr, &p};
    known += ", " + p.name;
  }
#endif
  throw Error("unknown pass '" + name + "'; known passes: " + known);
}

/// The passes of --pipeline=NAME.
std::vector<Pass> pipeline(const std::string &name) {
  std::vector<Pass> passes;
  if (name == "default") {
    for (const ir::PassInfo *pass : ir::default_pipeline())
      passes.push_back({pass->name, pass});
    return passes;
  }
  if (name != "gpu")
    throw Error("unknown pipeline '" + name +
                "'; the pipelines are 'default' (the compiler's) and 'gpu' "
                "(the GPU backend's)");
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  for (const nvptx::GpuPassInfo &pass : nvptx::gpu_passes())
    passes.push_back({pass.name, nullptr, &pass});
  return passes;
#else
  throw Error("--pipeline=gpu needs a blocc built with the GPU backend "
              "(-DBLOCC_NVPTX_BACKEND=ON)");
#endif
}

Options parse_options(int argc, char **argv) {
  Options options;
  bool input_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--pass=", 0) == 0) {
      options.passes.push_back(find_pass(arg.substr(7)));
    } else if (arg == "--pass") {
      if (i + 1 == argc)
        throw Error("--pass needs a pass name (--pass=NAME)");
      options.passes.push_back(find_pass(argv[++i]));
    } else if (arg.rfind("--pipeline=", 0) == 0) {
      for (Pass &pass : pipeline(arg.substr(11)))
        options.passes.push_back(std::move(pass));
    } else if (arg == "--print-before-all") {
      options.print_before_all = true;
    } else if (arg == "--print-after-all") {
      options.print_after_all = true;
    } else if (arg == "--print-axis-info") {
      options.print_axis_info = true;
    } else if (arg == "--emit-llvm" || arg == "--emit-llvm=unoptimized") {
      if (!kHaveCpuBackend)
        throw Error("--emit-llvm needs a blocc built with the CPU backend "
                    "(-DBLOCC_CPU_BACKEND=ON)");
      options.emit_llvm = true;
      options.emit_llvm_optimized = arg == "--emit-llvm";
    } else if (arg.rfind("--vector-bits=", 0) == 0) {
      std::string bits = arg.substr(14);
      if (bits != "128" && bits != "256" && bits != "512")
        throw Error("--vector-bits takes 128, 256 or 512, got '" + bits + "'");
      options.vector_bits = std::stoi(bits);
    } else if (arg.rfind("--check=", 0) == 0) {
      std::string mode = arg.substr(8);
      if (mode != "bounds" && mode != "races")
        throw Error("--check takes bounds or races, got '" + mode + "'");
      options.check_bounds = true;
      options.detect_races = mode == "races";
    } else if (arg == "--emit-ptx" || arg.rfind("--emit-ptx=", 0) == 0) {
      if (!kHaveNvptxBackend)
        throw Error("--emit-ptx needs a blocc built with the GPU backend "
                    "(-DBLOCC_NVPTX_BACKEND=ON)");
      options.emit_ptx = true;
      if (arg.size() > 10)
        options.gpu_arch = arg.substr(11);
    } else if (arg.rfind("--arch=", 0) == 0) {
      options.gpu_arch = arg.substr(7);
    } else if (arg == "--emit-layouts") {
      if (!kHaveNvptxBackend)
        throw Error("--emit-layouts needs a blocc built with the GPU backend "
                    "(-DBLOCC_NVPTX_BACKEND=ON)");
      options.emit_layouts = true;
    } else if (arg == "--emit-nvvm" || arg == "--emit-nvvm=unoptimized") {
      if (!kHaveNvptxBackend)
        throw Error("--emit-nvvm needs a blocc built with the GPU backend "
                    "(-DBLOCC_NVPTX_BACKEND=ON)");
      options.emit_nvvm = true;
      options.emit_nvvm_optimized = arg == "--emit-nvvm";
    } else if (arg.rfind("--num-warps=", 0) == 0) {
      std::string warps = arg.substr(12);
      if (warps.empty() || warps.size() > 2 ||
          warps.find_first_not_of("0123456789") != std::string::npos)
        throw Error("--num-warps takes a number of warps, got '" + warps + "'");
      options.num_warps = std::stoi(warps);
    } else if (arg.rfind("--num-stages=", 0) == 0) {
      std::string stages = arg.substr(13);
      if (stages.empty() || stages.size() > 1 ||
          stages.find_first_not_of("0123456789") != std::string::npos)
        throw Error("--num-stages takes a number of stages, got '" + stages +
                    "'");
      options.num_stages = std::stoi(stages);
    } else if (arg == "--split-input-file") {
      options.split_input_file = true;
    } else if (arg == "--list-passes") {
      options.list_passes = true;
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw Error("unknown option '" + arg + "' (see --help)");
    } else {
      if (input_given)
        throw Error("more than one input file ('" + options.input + "' and '" +
                    arg + "')");
      options.input = arg;
      input_given = true;
    }
  }
  return options;
}

std::string read_input(const std::string &path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "'");
  text << in.rdbuf();
  return text.str();
}

void verify_after(ir::Function &f, const std::string &stage) {
  try {
    ir::verify(f);
  } catch (const Error &e) {
    throw Error("function '" + f.name() + "' is invalid " + stage + ": " +
                e.what());
  }
}

/// Each line prefixed with "// ", so that the output stays valid IR that
/// blocc-opt can read again.
std::string as_comment(const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    out += "// " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// The CPU backend's LLVM IR for `f`.
std::string emit_llvm(const ir::Function &f, const Options &options) {
#ifdef BLOCC_HAVE_CPU_BACKEND
  cpu::LlvmIrOptions llvm_options;
  llvm_options.optimized = options.emit_llvm_optimized;
  llvm_options.vector_bits = options.vector_bits;
  llvm_options.check_bounds = options.check_bounds;
  llvm_options.detect_races = options.detect_races;
  return cpu::llvm_ir(f, llvm_options);
#else
  (void)f;
  (void)options;
  throw Error("internal: --emit-llvm without the CPU backend");
#endif
}

/// The GPU backend's PTX for `f`, or its LLVM IR with --emit-nvvm, or its
/// layouts stage with --emit-layouts.
std::string emit_ptx(const ir::Function &f, const Options &options) {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  nvptx::CompileOptions gpu;
  gpu.arch = nvptx::GpuArch::parse(options.gpu_arch);
  gpu.num_warps = options.num_warps;
  gpu.num_stages = options.num_stages;
  if (options.emit_layouts) {
    nvptx::InspectionRequest request;
    request.layouts = true;
    return nvptx::inspect(f, gpu, request).layouts;
  }
  if (options.emit_nvvm)
    return nvptx::llvm_ir(f, gpu, options.emit_nvvm_optimized);
  return nvptx::ptx_of(*nvptx::compile(f, gpu));
#else
  (void)f;
  (void)options;
  throw Error("internal: --emit-ptx without the GPU backend");
#endif
}

void run_pass(const Pass &pass, ir::Function &f, const Options &options) {
  if (pass.block_pass) {
    pass.block_pass->run(f);
    return;
  }
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  nvptx::GpuPassOptions gpu;
  gpu.arch = nvptx::GpuArch::parse(options.gpu_arch);
  gpu.num_warps = options.num_warps;
  gpu.num_stages = options.num_stages;
  pass.gpu_pass->run(f, gpu);
#endif
}

/// Parses, verifies, transforms and prints one piece of input; throws
/// blocc::Error on the first problem.
std::string process(const Options &options, const std::string &text,
                    const std::string &input_name) {
  std::vector<std::unique_ptr<ir::Function>> functions;
  try {
    functions = ir::parse_module(text);
  } catch (const Error &e) {
    // The parser's message starts with "line:col: "; prefixing the file
    // gives the usual "file:line:col: message".
    throw Error(input_name + ":" + e.what());
  }
  if (functions.empty())
    throw Error(input_name + ": holds no function");

  std::string out;
  for (size_t i = 0; i < functions.size(); ++i) {
    ir::Function &f = *functions[i];
    verify_after(f, "as read");
    for (const Pass &pass : options.passes) {
      if (options.print_before_all || options.print_after_all)
        std::cout.flush(); // earlier pieces' output first
      if (options.print_before_all)
        std::cerr << "// ----- before " << pass.name << "\n" << ir::print(f);
      run_pass(pass, f, options);
      verify_after(f, "after pass '" + pass.name + "'");
      if (options.print_after_all)
        std::cerr << "// ----- after " << pass.name << "\n" << ir::print(f);
    }
    if (i)
      out += "\n";
    if (options.print_axis_info)
      out += as_comment(ir::print_axis_info(f));
    if (options.emit_ptx || options.emit_nvvm || options.emit_layouts)
      out += emit_ptx(f, options);
    else if (options.emit_llvm)
      out += emit_llvm(f, options);
    else
      out += ir::print(f);
  }
  return out;
}

/// The pieces between "// -----" lines, each padded with the newlines that
/// precede it so that the parser's line numbers are the whole file's.
std::vector<std::string> split_input(const std::string &text) {
  std::vector<std::string> pieces(1);
  size_t line_start = 0, lines = 0;
  while (line_start < text.size()) {
    size_t end = text.find('\n', line_start);
    if (end == std::string::npos)
      end = text.size();
    std::string_view line(text.data() + line_start, end - line_start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
      line.remove_suffix(1);
    ++lines;
    if (line == "// -----")
      pieces.emplace_back(lines, '\n');
    else
      pieces.back() += std::string(line) + "\n";
    line_start = end + 1;
  }
  return pieces;
}

int run(const Options &options) {
  std::string text = read_input(options.input);
  std::string input_name = options.input == "-" ? "<stdin>" : options.input;
  if (!options.split_input_file) {
    std::cout << process(options, text, input_name);
    return 0;
  }
  int status = 0;
  bool first = true;
  for (const std::string &piece : split_input(text)) {
    if (!first)
      std::cout << "// -----\n";
    first = false;
    try {
      std::cout << process(options, piece, input_name);
    } catch (const Error &e) {
      std::cout.flush();
      std::cerr << "blocc-opt: error: " << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}

} // namespace

int main(int argc, char **argv) {
  try {
    Options options = parse_options(argc, argv);
    if (options.help) {
      usage(std::cout);
      return 0;
    }
    if (options.list_passes) {
      for (const blocc::ir::PassInfo &p : blocc::ir::all_passes())
        std::cout << p.name << "  " << p.description << "\n";
#ifdef BLOCC_HAVE_NVPTX_BACKEND
      for (const blocc::nvptx::GpuPassInfo &p : blocc::nvptx::gpu_passes())
        std::cout << p.name << "  " << p.description << "\n";
#endif
      return 0;
    }
    return run(options);
  } catch (const std::exception &e) {
    // Passes report with blocc::Error; anything else is a bug, but still
    // a message and status 1 rather than an abort.
    std::cerr << "blocc-opt: error: " << e.what() << "\n";
    return 1;
  }
}
