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
//
// Kernels compiled with bounds checks (BLOCC_CHECK) also read
// state->bounds: one BufferBounds per kernel argument, which they load once
// per program and test every active lane of every access against before it
// touches memory. Their runtime hooks find the rest of what the launch
// checks (argument names, write-race records) behind state->launch.
#pragma once

#include <cstdint>
#include <string>

namespace blocc::runtime::cpu {

/// The extent of one argument's buffer for a checked kernel: an access of
/// `bytes` at `address` is in bounds when `size >= bytes` and
/// `address - begin <= size - bytes` (unsigned, so that nothing wraps).
/// A buffer of unknown extent (a raw pointer) is `unknown_extent()`: every
/// address but the null page, so that only null pointers are reported.
struct BufferBounds {
  uint64_t begin = 0;
  uint64_t size = 0;

  static constexpr uint64_t kNullPageEnd = 4096;
  static constexpr BufferBounds unknown_extent() {
    return {kNullPageEnd, ~uint64_t{0} - kNullPageEnd + 1};
  }
  bool is_unknown_extent() const {
    return begin == kNullPageEnd && size == ~uint64_t{0} - kNullPageEnd + 1;
  }
  /// [address, address + bytes) lies in the buffer.
  bool holds(uint64_t address, uint64_t bytes) const {
    return size >= bytes && address - begin <= size - bytes;
  }
};

struct ProgramState {
  // Read by generated code at fixed offsets: keep these first.
  int64_t program[3] = {0, 0, 0}; // program_id(0..2)
  int64_t grid[3] = {1, 1, 1};    // num_programs(0..2)
  /// The backend's description of the kernel, for its runtime hooks.
  const void *kernel = nullptr;
  /// Checked kernels: the bounds of each argument's buffer (see above).
  const BufferBounds *bounds = nullptr;
  /// Checked kernels: the backend's description of the launch, for hooks.
  const void *launch = nullptr;
  /// Set by a runtime hook when the program fails.
  std::string error;
};

using ProgramFunction = int32_t (*)(const uint64_t *args, ProgramState *state,
                                    void *scratch);

} // namespace blocc::runtime::cpu
