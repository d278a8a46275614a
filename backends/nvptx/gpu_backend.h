// The GPU backend's entry points, free of LLVM and CUDA types (the JIT
// includes this header).
//
//   auto kernel = blocc::nvptx::compile(function, {.num_warps = 4});  // cached
//   blocc::nvptx::run(*kernel, grid, args);   // args in device memory
//
// compile lowers the block IR to NVVM LLVM IR (kernel_lowering.h), runs
// -O3 and LLVM's NVPTX backend to PTX for the requested architecture (or
// reads that PTX from the disk compile cache); run
// loads the PTX into the context of the arguments' device (runtime/cuda)
// and launches one CTA of 32 * num_warps threads per program. Both are
// thread-safe.
#pragma once

#include "backends/nvptx/fault_sites.h"
#include "backends/nvptx/gpu_arch.h"
#include "ir/function.h"
#include "runtime/cuda/tensor_map.h"
#include "runtime/kernel_args.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blocc::cuda {
struct TensorMapRequest; // runtime/cuda/tensor_map.h
} // namespace blocc::cuda

namespace blocc::nvptx {

/// A kernel specialization compiled to PTX (opaque).
class CompiledKernel;

struct CompileOptions {
  /// Warps per program (CTA): a power of two from 1 to 32.
  int num_warps = 4;
  /// Loops whose loads feed dots on tensor cores keep the tiles of this
  /// many iterations in shared memory, the next ones' copies in flight
  /// while one is multiplied (pipeline_loads.h); 1 turns it off.
  int num_stages = 3;
  GpuArch arch;
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

/// Ahead-of-time compilation (tools/blocc-compile): what a launch of
/// `function` compiled for options.arch needs, compiled now (no cache).
struct PtxCode {
  std::string ptx;
  std::string entry;                ///< the PTX entry's name
  int64_t dynamic_shared_bytes = 0; ///< as dynamic_shared_bytes() says
  /// The warps a CTA runs: num_warps, and a producer warpgroup where a
  /// loop is warp-specialized (bl::LoopOptions::warp_specialize).
  int cta_warps = 0;
  std::vector<FaultSite> faults; ///< where a program may stop
  /// The tensor maps the entry takes after the user's parameters (its TMA
  /// copies'), which each launch encodes from its arguments.
  std::vector<cuda::TensorMapRequest> tensor_maps;
};
/// Throws blocc::Error naming the op for IR the backend cannot lower.
PtxCode compile_ptx(const ir::Function &function,
                    const CompileOptions &options);

/// The LLVM IR (NVVM) the backend generates for `function`, as lowered
/// (optimized = false) or after -O3.
std::string llvm_ir(const ir::Function &function,
                    const CompileOptions &options = {}, bool optimized = true);

/// Inspection (BLOCC_DUMP, blocc::Stage): the text of the stages asked
/// for, compiled now, exactly as compile() compiles them.
struct InspectionRequest {
  bool layouts = false; ///< the IR with its layouts (print_layouts.h)
  bool llvm_ir = false; ///< the LLVM IR (NVVM) after -O3
  bool ptx = false;
};
struct Inspection {
  std::string layouts, llvm_ir, ptx; ///< "" where not asked for
};
/// Throws blocc::Error naming the op for IR the backend cannot lower.
Inspection inspect(const ir::Function &function, const CompileOptions &options,
                   const InspectionRequest &request);

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
/// (sm_80 .. sm_90a; read once, on first use), else the device's own
/// (GpuArch::for_compute_capability).
GpuArch arch_for_device(int ordinal);

/// Number of distinct kernels compiled so far in this process.
size_t num_compiled_kernels();

/// How this process's compiles were served. The PTX of every kernel goes
/// to the disk compile cache ($BLOCC_CACHE_DIR, as the CPU backend's
/// objects; ptx_disk_cache.h), so that a later process's first launch
/// skips LLVM.
struct CacheCounters {
  size_t llvm_compiles = 0;       // PTX generated by LLVM
  size_t disk_hits = 0;           // PTX read from the disk cache instead
  size_t disk_rejected = 0;       // entries that failed verification
  size_t disk_writes = 0;         // entries written
  size_t disk_write_failures = 0; // entries that could not be written
};
CacheCounters cache_counters();

/// Test hook: a copy of `kernel` whose launches pass, after the user's
/// parameters, one tensor map per request (runtime/cuda/tensor_map.h),
/// as a kernel copying with TMA will declare them. No compiled kernel asks
/// for tensor maps yet; this lets tests drive the launch path that will.
std::shared_ptr<const CompiledKernel> with_tensor_maps_for_testing(
    const CompiledKernel &kernel,
    const std::vector<cuda::TensorMapRequest> &requests);

/// Test hook: forgets the in-memory cache (and the launch fast path), so
/// that the next compile of a kernel goes to the disk cache. Kernels
/// compiled before stay usable.
void clear_memory_cache_for_testing();

/// How many times clear_memory_cache_for_testing ran: whoever keeps
/// compiled kernels of its own between launches (the JIT, per
/// specialization) compiles again when it changed.
uint64_t memory_cache_generation();

} // namespace blocc::nvptx
