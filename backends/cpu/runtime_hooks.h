// Functions that compiled kernels call back into (C ABI; the JIT binds
// them by name, see jit.cpp). Each one records a message in the program's
// ProgramState or writes output; none of them throws. `site` indexes the
// KernelInfo tables of the kernel that runs.
#pragma once

#include "runtime/cpu/program_abi.h"

#include <cstdint>

extern "C" {

/// Program `state` failed at fault site `site`, in lane `lane` (ignored
/// by sites that name no lane).
void blocc_cpu_fault(blocc::runtime::cpu::ProgramState *state, int32_t site,
                     int64_t lane);

/// Print op `site`: `operands[k]` points at operand k's elements.
void blocc_cpu_print(blocc::runtime::cpu::ProgramState *state, int32_t site,
                     const void *const *operands);

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
