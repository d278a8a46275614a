#include "executor.h"

#include "backends/interpreter/interpreter.h"
#include "ir/error.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif

#include <cstdlib>
#include <string>

namespace blocc::detail {

namespace {

/// What Auto means when $BLOCC_BACKEND is not set. The interpreter checks
/// every memory access against its buffer; the CPU backend will do so in
/// its checked mode (BLOCC_CHECK=1), and becomes the default then.
constexpr Backend kDefaultBackend = Backend::Interpreter;

constexpr bool kCpuBackendBuilt =
#ifdef BLOCC_HAVE_CPU_BACKEND
    true;
#else
    false;
#endif

[[maybe_unused]] bool dump_llvm() {
  const char *env = std::getenv("BLOCC_DUMP");
  if (!env)
    return false;
  std::string stages = std::string(",") + env + ",";
  return stages.find(",llvm,") != std::string::npos ||
         stages.find(",all,") != std::string::npos;
}

[[noreturn]] void cpu_backend_missing() {
  throw Error("the CPU backend is not part of this build of blocc: "
              "configure with LLVM >= 17 installed (llvm-19-dev, see "
              "scripts/install-deps) and -DBLOCC_CPU_BACKEND=ON, or run "
              "on the interpreter (BLOCC_BACKEND=interpreter)");
}

} // namespace

Backend resolve_backend(Backend requested) {
  if (requested == Backend::Auto) {
    const char *env = std::getenv("BLOCC_BACKEND");
    std::string name = env ? env : "";
    if (name == "interpreter")
      requested = Backend::Interpreter;
    else if (name == "cpu")
      requested = Backend::Cpu;
    else if (name.empty())
      requested = kDefaultBackend;
    else
      throw Error("BLOCC_BACKEND='" + name +
                  "' names no backend; expected 'interpreter' or 'cpu'");
  }
  if (requested == Backend::Cpu && !kCpuBackendBuilt)
    cpu_backend_missing();
  return requested;
}

void execute(const ir::Function &function, const Grid &grid,
             const std::vector<KernelArg> &args, Backend requested) {
  switch (resolve_backend(requested)) {
  case Backend::Cpu:
#ifdef BLOCC_HAVE_CPU_BACKEND
    cpu::run(*cpu::compile(function, {.dump_llvm = dump_llvm()}), grid, args);
    return;
#else
    cpu_backend_missing();
#endif
  default:
    interp::interpret(function, grid, args);
    return;
  }
}

std::string cpu_llvm_ir(const ir::Function &function) {
#ifdef BLOCC_HAVE_CPU_BACKEND
  return cpu::llvm_ir(function);
#else
  cpu_backend_missing();
#endif
}

} // namespace blocc::detail
