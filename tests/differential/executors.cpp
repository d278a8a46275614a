#include "executors.h"

#include "backends/interpreter/interpreter.h"

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
  // HOOK(cpu-backend): when backends/cpu exists, return an Executor that
  // compiles `f` with the CPU backend and runs it on `grid` with `args`
  // (guarded by the CMake option that builds the backend, e.g.
  // #ifdef BLOCC_HAS_CPU_BACKEND), and link the backend's library into
  // blocc_kernel_generator in tests/differential/CMakeLists.txt.
  return std::nullopt;
}

} // namespace blocc::differential
