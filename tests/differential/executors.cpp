#include "executors.h"

#include "backends/interpreter/interpreter.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif

namespace blocc::differential {

Executor interpreter_executor() {
  return [](const ir::Function &f, Grid grid, std::vector<KernelArg> &args) {
    interp::interpret(f, grid, args);
  };
}

Executor interpreter_running(const ir::Function &replacement) {
  return [&replacement](const ir::Function &, Grid grid,
                        std::vector<KernelArg> &args) {
    interp::interpret(replacement, grid, args);
  };
}

std::optional<Executor> cpu_backend_executor() {
#ifdef BLOCC_HAVE_CPU_BACKEND
  return [](const ir::Function &f, Grid grid, std::vector<KernelArg> &args) {
    cpu::run(*cpu::compile(f), grid, args);
  };
#else
  return std::nullopt;
#endif
}

} // namespace blocc::differential
