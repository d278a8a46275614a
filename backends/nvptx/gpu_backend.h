// The GPU backend's entry points, free of LLVM and CUDA types (the frontend
// includes this header).
//
//   auto kernel = blocc::nvptx::compile(function, {.num_warps = 4});  // cached
//   blocc::nvptx::run(*kernel, grid, args);   // args in device memory
//
// compile lowers the block IR to NVVM LLVM IR (kernel_lowering.h), runs
// -O3 and LLVM's NVPTX backend to PTX for the requested architecture; run
// loads the PTX into the context of the arguments' device (runtime/cuda)
// and launches one CTA of 32 * num_warps threads per program. Both are
// thread-safe.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "ir/function.h"
#include "runtime/kernel_args.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blocc::nvptx {

/// A kernel specialization compiled to PTX (opaque).
class CompiledKernel;

struct CompileOptions {
  /// Warps per program (CTA): a power of two from 1 to 32.
  int num_warps = 4;
  GpuArch arch;
  /// Print the PTX to stderr when compiling (BLOCC_DUMP=ptx).
  bool dump_ptx = false;
};

/// The compiled form of `function`, from the in-memory cache when the same
/// IR was compiled before with the same options by this version of blocc.
/// Throws blocc::Error naming the op for IR the backend cannot lower.
std::shared_ptr<const CompiledKernel>
compile(const ir::Function &function, const CompileOptions &options = {});

/// The PTX text of a compiled kernel.
const std::string &ptx_of(const CompiledKernel &kernel);
/// The name of its PTX entry (for cuModuleGetFunction).
const std::string &ptx_entry(const CompiledKernel &kernel);

/// The dynamic shared memory each launch of `kernel` requests: 0 when its
/// shared memory fits the static 48 KB, else all of it (up to the
/// architecture's opt-in limit; the runtime enables it per function).
int64_t dynamic_shared_bytes(const CompiledKernel &kernel);

/// The LLVM IR (NVVM) the backend generates for `function`, as lowered
/// (optimized = false) or after -O3.
std::string llvm_ir(const ir::Function &function,
                    const CompileOptions &options = {}, bool optimized = true);

/// Launches `kernel` over `grid` on the GPU its pointer arguments live on
/// (every pointer must be device memory: KernelArg::device >= 0), or on the
/// current device when it has none, queued on `stream` (a CUstream; nullptr:
/// the context's default stream). Asynchronous: nothing waits for the GPU,
/// and faults surface at the next synchronizing call (a copy to the host,
/// cuda::synchronize, cuStreamSynchronize). Throws blocc::Error naming the
/// kernel for arguments that do not match, a stream of another context
/// than the buffers', a grid beyond the device's limits, and driver errors.
void run(const CompiledKernel &kernel, const Grid &grid,
         const std::vector<KernelArg> &args, void *stream = nullptr);

/// The architecture to compile for GPU `ordinal`: $BLOCC_GPU_ARCH when set
/// (sm_80 .. sm_90a), else the device's own (GpuArch::for_compute_capability).
GpuArch arch_for_device(int ordinal);

/// Number of distinct kernels compiled so far in this process.
size_t num_compiled_kernels();

} // namespace blocc::nvptx
