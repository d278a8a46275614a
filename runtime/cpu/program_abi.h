// The calling convention between the CPU runtime and compiled kernels.
//
// A compiled kernel is one C function per specialization that runs one
// program instance:
//
//   int32_t kernel(const uint64_t *args, ProgramState *state, void *scratch);
//
// `args` holds one 64-bit slot per kernel argument, in order: a pointer's
// address, an integer sign- or zero-extended to 64 bits, a float as the
// bits of a double (the kernel rounds it to its own type). `state` says
// which program instance runs; `scratch` is at least `scratch_bytes` of
// 64-byte aligned memory private to the calling thread, where the kernel
// keeps the blocks it materializes. The kernel returns 0, or nonzero after
// it stored a message in state->error (through a runtime hook) and stopped
// without further effects.
#pragma once

#include <cstdint>
#include <string>

namespace blocc::runtime::cpu {

struct ProgramState {
  // Read by generated code at fixed offsets: keep these first.
  int64_t program[3] = {0, 0, 0}; // program_id(0..2)
  int64_t grid[3] = {1, 1, 1};    // num_programs(0..2)
  /// The backend's description of the kernel, for its runtime hooks.
  const void *kernel = nullptr;
  /// Set by a runtime hook when the program fails.
  std::string error;
};

using ProgramFunction = int32_t (*)(const uint64_t *args, ProgramState *state,
                                    void *scratch);

} // namespace blocc::runtime::cpu
