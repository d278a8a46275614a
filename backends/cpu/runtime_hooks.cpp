// The table of runtime hooks the JIT binds by name (jit.cpp): the fault
// and print hooks of every kernel (runtime/cpu/program_sites.cpp, which
// ahead-of-time compiled objects link against too) and the hooks of
// checked kernels (check_hooks.cpp).
#include "backends/cpu/runtime_hooks.h"

namespace blocc::cpu {

const RuntimeHook *runtime_hooks(int *count) {
  static const RuntimeHook hooks[] = {
      {"blocc_cpu_fault", reinterpret_cast<void *>(&blocc_cpu_fault)},
      {"blocc_cpu_print", reinterpret_cast<void *>(&blocc_cpu_print)},
      {"blocc_cpu_access_fault",
       reinterpret_cast<void *>(&blocc_cpu_access_fault)},
      {"blocc_cpu_record_stores",
       reinterpret_cast<void *>(&blocc_cpu_record_stores)},
  };
  *count = static_cast<int>(sizeof hooks / sizeof hooks[0]);
  return hooks;
}

} // namespace blocc::cpu
