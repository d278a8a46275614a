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
  // HOOK(cpu-backend): when backends/cpu is built, return it here, e.g.
  //
  //   #ifdef BLOCC_DIFFERENTIAL_CPU_BACKEND   // set in CMakeLists.txt
  //   return Executor([](const ir::Function &f, Grid grid,
  //                      std::vector<KernelArg> &args) {
  //     cpu::run(*cpu::compile(f), grid, args);  // backends/cpu/cpu_backend.h
  //   });
  //   #endif
  //
  // with tests/differential/CMakeLists.txt linking blocc_cpu and defining
  // the macro under if(BLOCC_CPU_BACKEND). BackendDifferentialTest and
  // `blocc-fuzz --backend cpu` then compare it with the interpreter.
  return std::nullopt;
}

} // namespace blocc::differential
