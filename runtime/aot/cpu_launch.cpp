#include "runtime/aot/launch.h"

#include "runtime/cpu/grid_executor.h"

#include <string>

namespace blocc::aot {

void launch_cpu(const CpuKernel &kernel, const Grid &grid,
                const uint64_t *args) {
  if (kernel.missing_cpu_feature)
    if (const char *missing = kernel.missing_cpu_feature())
      throw Error("kernel '" + std::string(kernel.name) +
                  "' was compiled ahead of time for " + kernel.target +
                  ", whose feature '" + missing +
                  "' this CPU lacks; compile it with blocc-compile "
                  "--target cpu:<an older CPU> (x86-64-v3 runs on any x86 "
                  "with AVX2, x86-64 on every one)");
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw Error("kernel '" + std::string(kernel.name) + "': grid dimension " +
                  std::to_string(axis) + " is negative (" +
                  std::to_string(grid[axis]) + ")");
  runtime::cpu::GridLaunch launch;
  launch.function = kernel.entry;
  launch.args = args;
  launch.scratch_bytes = kernel.scratch_bytes;
  launch.kernel = &kernel.sites();
  runtime::cpu::run_grid(grid, launch);
}

} // namespace blocc::aot
