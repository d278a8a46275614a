#include "executor.h"

#include "backends/interpreter/interpreter.h"
#include "ir/error.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#include "runtime/cpu/thread_count.h"
#endif

#include <cstdlib>
#include <string>

namespace blocc::detail {

namespace {

constexpr bool kCpuBackendBuilt =
#ifdef BLOCC_HAVE_CPU_BACKEND
    true;
#else
    false;
#endif

/// What Auto means for host memory when $BLOCC_BACKEND is not set: the CPU
/// backend where it is built (it checks accesses in checked mode,
/// BLOCC_CHECK=1), else the interpreter (which always checks them).
constexpr Backend kDefaultBackend =
    kCpuBackendBuilt ? Backend::Cpu : Backend::Interpreter;

[[noreturn]] void cpu_backend_missing() {
  throw Error("the CPU backend is not part of this build of blocc: "
              "configure with LLVM >= 17 installed (llvm-19-dev, see "
              "scripts/install-deps) and -DBLOCC_CPU_BACKEND=ON, or run "
              "on the interpreter (BLOCC_BACKEND=interpreter)");
}

#ifdef BLOCC_HAVE_CPU_BACKEND
/// The CPU backend's kernel for `specialization` under `check`: the one
/// `cache` holds, else compiled (or found in the backend's compile cache)
/// and kept there.
std::shared_ptr<const cpu::CompiledKernel>
cpu_kernel(const Specialization &specialization, Check check,
           ExecutorCache *cache) {
  const int index = static_cast<int>(check);
  if (cache) {
    std::lock_guard<std::mutex> lock(cache->mutex);
    if (cache->cpu[index])
      return std::static_pointer_cast<const cpu::CompiledKernel>(
          cache->cpu[index]);
  }
  dump_stages(specialization, Target::cpu(check));
  auto kernel = cpu::compile(*specialization.function,
                             {.check_bounds = check != Check::Off,
                              .detect_races = check == Check::Races});
  if (cache) {
    std::lock_guard<std::mutex> lock(cache->mutex);
    cache->cpu[index] = kernel;
  }
  return kernel;
}
#endif

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

} // namespace blocc::detail

namespace blocc {

std::string host_backend_description(Backend backend) {
  switch (detail::resolve_backend(backend)) {
  case Backend::Cpu:
#ifdef BLOCC_HAVE_CPU_BACKEND
    return "CPU backend (" + cpu::target_description() + "; " +
           std::to_string(runtime::cpu::num_threads()) + " threads)";
#else
    break;
#endif
  case Backend::Gpu:
    return "GPU backend";
  default:
    break;
  }
  return "reference interpreter";
}

size_t clear_compile_cache() {
#ifdef BLOCC_HAVE_CPU_BACKEND
  return cpu::clear_disk_cache();
#else
  return 0;
#endif
}

} // namespace blocc

namespace blocc::detail {

Check resolve_check(Check requested) {
  if (requested != Check::Default)
    return requested;
  const char *env = std::getenv("BLOCC_CHECK");
  std::string value = env ? env : "";
  if (value.empty() || value == "0" || value == "off")
    return Check::Off;
  if (value == "1" || value == "bounds")
    return Check::Bounds;
  if (value == "races")
    return Check::Races;
  throw Error("BLOCC_CHECK='" + value +
              "' is not a check mode; expected '1' or 'bounds' (bounds "
              "checks), 'races' (bounds checks and write-race detection), "
              "or '0' (off)");
}

void execute(const Specialization &specialization, const Grid &grid,
             const std::vector<KernelArg> &args, Backend backend, Check check,
             ExecutorCache *cache) {
  Backend resolved = resolve_backend(backend);
  check = resolve_check(check);
  switch (resolved) {
  case Backend::Cpu:
#ifdef BLOCC_HAVE_CPU_BACKEND
    cpu::run(*cpu_kernel(specialization, check, cache), grid, args);
    return;
#else
    cpu_backend_missing();
#endif
  default:
    dump_stages(specialization, Target::interpreter());
    // The interpreter checks bounds whatever the mode.
    interp::interpret(*specialization.function, grid, args,
                      {.detect_races = check == Check::Races});
    return;
  }
}

} // namespace blocc::detail
