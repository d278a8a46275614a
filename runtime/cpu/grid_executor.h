// Runs a compiled kernel over a launch grid: every program instance is one
// call of the kernel's function with its program id, and the instances are
// spread over threads with OpenMP (thread_count.h says how many).
#pragma once

#include "runtime/cpu/program_abi.h"
#include "runtime/kernel_args.h"

#include <cstddef>

namespace blocc::runtime::cpu {

struct GridLaunch {
  ProgramFunction function = nullptr;
  const uint64_t *args = nullptr; // see program_abi.h
  size_t scratch_bytes = 0;
  const void *kernel = nullptr; // handed to the kernel's runtime hooks
  // Checked kernels only (program_abi.h): per-argument buffer bounds and
  // the launch's state for the hooks.
  const BufferBounds *bounds = nullptr;
  const void *launch_checks = nullptr;
};

/// Runs launch.function for every program id of `grid` (any order, in
/// parallel). When a program fails, programs not yet started are skipped
/// and the error of the failed program with the smallest linear index
/// (x fastest, then y, then z) is thrown as blocc::Error once all running
/// programs have returned. Memory written by other programs stays written.
void run_grid(const Grid &grid, const GridLaunch &launch);

} // namespace blocc::runtime::cpu
