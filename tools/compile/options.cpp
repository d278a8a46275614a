#include "tools/compile/options.h"

#include "ir/error.h"
#include "tools/compile/cpp_names.h"

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_arch.h"
#endif

#include <filesystem>

namespace blocc::compile {

namespace {

Target parse_target(const std::string &text) {
  Target t;
  t.name = text;
  if (text == "cpu" || text.rfind("cpu:", 0) == 0) {
    t.kind = Target::Kind::Cpu;
    t.cpu = text == "cpu" ? "native" : text.substr(4);
    if (t.cpu.empty())
      throw Error("--target: 'cpu:' needs a CPU name (cpu:native, "
                  "cpu:x86-64-v3, cpu:skylake-avx512, ...)");
    t.name = "cpu:" + t.cpu;
    return t;
  }
  if (text.rfind("sm_", 0) == 0) {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
    nvptx::GpuArch arch;
    try {
      arch = nvptx::GpuArch::parse(text);
    } catch (const Error &e) {
      throw Error("--target: '" + text + "': " + e.what());
    }
    t.kind = Target::Kind::Gpu;
    t.sm = arch.sm;
    t.arch_specific = arch.arch_specific;
    t.name = arch.name();
    return t;
#else
    throw Error("--target: '" + text +
                "' needs a blocc-compile built with the GPU backend "
                "(-DBLOCC_NVPTX_BACKEND=ON)");
#endif
  }
  throw Error("--target: unknown target '" + text +
              "'; targets are cpu, cpu:<x86 CPU> (cpu:x86-64-v3, "
              "cpu:skylake-avx512, ...) and NVIDIA GPU architectures "
              "(sm_80, sm_86, sm_89, sm_90, sm_90a), separated by commas");
}

std::vector<Target> parse_targets(const std::string &list) {
  std::vector<Target> targets;
  size_t begin = 0;
  while (true) {
    size_t end = list.find(',', begin);
    std::string item = list.substr(
        begin, end == std::string::npos ? std::string::npos : end - begin);
    Target t = parse_target(item);
    for (const Target &other : targets)
      if (other.name == t.name ||
          (t.kind == Target::Kind::Cpu && other.kind == Target::Kind::Cpu))
        throw Error("--target: '" + t.name + "' given twice (one CPU target " +
                    "and each GPU architecture once)");
    targets.push_back(t);
    if (end == std::string::npos)
      return targets;
    begin = end + 1;
  }
}

} // namespace

const char *usage() {
  return "usage: blocc-compile --library LIB.so --kernel NAME --signature SIG\n"
         "                     [--target cpu[:CPU],sm_XX,...] -o OUT\n"
         "                     [--name NAME] [--namespace NS] [--num-warps N]\n"
         "                     [--cubin auto|on|off]\n"
         "       blocc-compile --ir FILE.bir [--kernel NAME] [options] -o OUT\n"
         "Compiles one specialization of a kernel ahead of time and writes\n"
         "OUT.h (typed launch functions), OUT.cpp (the embedded GPU code and\n"
         "the launches) and, for a CPU target, OUT.o (x86 object code); a\n"
         "program links them with the library blocc_runtime (no LLVM).\n"
         "SIG: one entry per parameter, e.g. "
         "'x=*f32:16,y=*f32:16,n=i32,BLOCK=1024'\n"
#ifdef BLOCC_HAVE_NVPTX_BACKEND
         "Targets: cpu, cpu:<x86 CPU>, sm_80, sm_86, sm_89, sm_90, sm_90a.\n"
#else
         "Targets: cpu, cpu:<x86 CPU> (no GPU backend in this build).\n"
#endif
         "(tools/README.md has the details).\n";
}

Options parse_options(const std::vector<std::string> &arguments) {
  Options o;
  bool targets_given = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::string arg = arguments[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0)
      if (size_t equals = arg.find('='); equals != std::string::npos) {
        value = arg.substr(equals + 1);
        arg = arg.substr(0, equals);
        has_value = true;
      }
    auto take = [&]() -> std::string {
      if (has_value)
        return value;
      if (i + 1 == arguments.size())
        throw Error(arg + " needs a value (see --help)");
      return arguments[++i];
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--library") {
      o.library = take();
    } else if (arg == "--kernel") {
      o.kernel = take();
    } else if (arg == "--signature") {
      o.signature = take();
      o.signature_given = true;
    } else if (arg == "--ir") {
      o.ir_file = take();
    } else if (arg == "--target") {
      o.targets = parse_targets(take());
      targets_given = true;
    } else if (arg == "-o" || arg == "--output") {
      o.output = take();
    } else if (arg == "--name") {
      o.name = take();
      if (!is_usable_identifier(o.name))
        throw Error("--name: '" + o.name +
                    "' is not a usable C++ identifier (letters, digits and "
                    "'_', not a keyword)");
    } else if (arg == "--namespace") {
      o.outer_namespace = take();
      if (!is_usable_namespace(o.outer_namespace))
        throw Error("--namespace: '" + o.outer_namespace +
                    "' is not a C++ namespace name (identifiers joined by "
                    "'::')");
    } else if (arg == "--num-warps") {
      std::string warps = take();
      int n = 0;
      if (warps.size() <= 2 &&
          warps.find_first_not_of("0123456789") == std::string::npos &&
          !warps.empty())
        n = std::stoi(warps);
      if (n < 1 || n > 32 || (n & (n - 1)))
        throw Error("--num-warps: takes a power of two from 1 to 32, got '" +
                    warps + "'");
      o.num_warps = n;
    } else if (arg == "--cubin") {
      std::string mode = take();
      if (mode == "auto")
        o.cubin = Cubin::Auto;
      else if (mode == "on")
        o.cubin = Cubin::On;
      else if (mode == "off")
        o.cubin = Cubin::Off;
      else
        throw Error("--cubin: takes auto, on or off, got '" + mode + "'");
    } else {
      throw Error("unknown option '" + arguments[i] + "' (see --help)");
    }
  }
  if (o.help)
    return o;
  if (!targets_given)
    o.targets = parse_targets("cpu");
  if (o.library.empty() == o.ir_file.empty())
    throw Error(o.library.empty()
                    ? "no kernel given: --library LIB.so --kernel NAME "
                      "--signature SIG, or --ir FILE.bir (see --help)"
                    : "--library and --ir both given; compile from one");
  if (!o.library.empty()) {
    if (o.kernel.empty())
      throw Error("--library needs --kernel NAME (the kernel to compile)");
    if (!o.signature_given)
      throw Error("--library needs --signature SIG (one entry per "
                  "parameter, e.g. 'x=*f32:16,n=i32,BLOCK=1024')");
  } else if (o.signature_given) {
    throw Error("--signature applies to --library; textual IR is already "
                "one specialization");
  }
  if (o.output.empty())
    throw Error("no output given: -o OUT writes OUT.h, OUT.cpp and OUT.o");
  if (o.name.empty()) {
    o.name = std::filesystem::path(o.output).filename().string();
    if (!is_usable_identifier(o.name))
      throw Error("-o: the output's file name '" + o.name +
                  "' is not a usable C++ identifier, which the launch "
                  "functions' namespace takes by default; give --name NAME");
  }
  return o;
}

} // namespace blocc::compile
