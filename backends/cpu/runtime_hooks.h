// Functions that compiled kernels call back into (C ABI; the JIT binds
// them by name, see jit.cpp). Each one records a message in the program's
// ProgramState or writes output; none of them throws. `site` indexes the
// KernelInfo tables of the kernel that runs. The fault and print hooks
// live in the runtime (runtime/cpu/program_sites.h), which ahead-of-time
// compiled kernels link without LLVM; the hooks of checked kernels here.
#pragma once

#include "runtime/cpu/program_abi.h"
#include "runtime/cpu/program_sites.h"

#include <cstdint>

extern "C" {

/// Checked kernels (check_hooks.cpp): access `site` failed its bounds
/// checks in lane `lane`, at `address`.
void blocc_cpu_access_fault(blocc::runtime::cpu::ProgramState *state,
                            int32_t site, int64_t lane, uint64_t address);

/// Race detection: store `site` writes the `count` elements `bits` (zero-
/// extended) at `addresses` where `active`, lanes `lanes` of its block.
/// Returns nonzero, with the program's error set, when another program of
/// the launch stored a different value at one of them.
int32_t blocc_cpu_record_stores(blocc::runtime::cpu::ProgramState *state,
                                int32_t site, int32_t count,
                                const uint64_t *addresses, const uint64_t *bits,
                                const uint8_t *active, const int32_t *lanes);
}

namespace blocc::cpu {

/// The hooks by name, for the JIT.
struct RuntimeHook {
  const char *name;
  void *address;
};
const RuntimeHook *runtime_hooks(int *count);

} // namespace blocc::cpu
