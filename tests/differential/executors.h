// The executors the differential tests compare: the reference interpreter,
// the CPU backend where it is built, and the GPU backend where it is built
// and a GPU is present.
#pragma once

#include "differential.h"

#include <optional>
#include <string>

namespace blocc::differential {

/// The reference interpreter (backends/interpreter): the oracle.
Executor interpreter_executor();

/// The interpreter running `replacement` instead of the function it is
/// handed: how a transformed copy of a kernel (after a pass) is compared
/// with the original on the same arguments.
Executor interpreter_running(const ir::Function &replacement);

/// The CPU backend (backends/cpu) as an Executor:
/// compile the function for the host and run it over the grid on the given
/// arguments. Empty where blocc is built without the CPU backend
/// (BLOCC_CPU_BACKEND=OFF); the differential tests and `blocc-fuzz
/// --backend cpu` use it.
std::optional<Executor> cpu_backend_executor();

/// The GPU backend (backends/nvptx) as an Executor: compiles the function
/// with `num_warps` warps for the current GPU's architecture, copies every
/// buffer argument to device memory, launches over the grid, waits, and
/// copies every buffer back (inputs too, so that a write into an input is
/// seen). Empty where blocc is built without the GPU backend; where no GPU
/// is present it throws blocc::Error (gpu_unavailable_reason() says so
/// beforehand). The differential tests and `blocc-fuzz --backend gpu` use
/// it.
std::optional<Executor> gpu_backend_executor(int num_warps = 4);

/// Why gpu_backend_executor() cannot run kernels here ("" when it can):
/// blocc is built without the GPU backend, or there is no CUDA driver or
/// no GPU.
std::string gpu_unavailable_reason();

/// The warps per program the GPU runs of seed `seed` use: 1, 2, 4 and 8 in
/// turn, so that a batch covers layouts spread over one to eight warps.
inline int num_warps_for_seed(uint64_t seed) { return 1 << (seed % 4); }

} // namespace blocc::differential
