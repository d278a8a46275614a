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
}

namespace blocc::cpu {

/// The hooks by name, for the JIT.
struct RuntimeHook {
  const char *name;
  void *address;
};
const RuntimeHook *runtime_hooks(int *count);

} // namespace blocc::cpu
