// What the code blocc-compile writes calls to launch a kernel compiled
// ahead of time (tools/README.md, blocc-compile). A program that launches
// such kernels links the generated files and the library `blocc_runtime`
// only: no LLVM, no compiler, no tracing at run time.
//
// The generated source defines one constant description per target (a
// CpuKernel for x86 object code, a GpuKernel for PTX and cubins) and typed
// launch functions that check their arguments against the specialization,
// pack them, and call launch_cpu / launch_gpu. Errors are blocc::Error,
// worded as the JIT's: "kernel 'add_1024', argument 1 'x' (*f32:16): ...".
#pragma once

#include "ir/error.h"
#include "runtime/cpu/program_abi.h"
#include "runtime/cpu/program_sites.h"
#include "runtime/cuda/tensor_map.h"
#include "runtime/fault_site.h"
#include "runtime/kernel_args.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace blocc::aot {

/// A specialization compiled to x86 object code (the generated .o defines
/// `entry`).
struct CpuKernel {
  const char *name; ///< the specialization's name (blocc-compile --name)
  runtime::cpu::ProgramFunction entry;
  /// Per-thread scratch memory a program needs (runtime/cpu/program_abi.h).
  size_t scratch_bytes;
  /// The kernel's fault and print sites, which its runtime hooks read.
  const runtime::cpu::ProgramSites &(*sites)();
  /// "x86_64-pc-linux-gnu znver4 (512-bit vectors)": what it was built for.
  const char *target;
  /// The first CPU feature the code may use that this CPU lacks, or
  /// nullptr (generated: a __builtin_cpu_supports test per feature).
  const char *(*missing_cpu_feature)();
};

/// Runs `kernel` for every program of `grid` on the host's cores (OpenMP,
/// BLOCC_NUM_THREADS or OMP_NUM_THREADS threads, as the JIT's launches).
/// `args` holds one 64-bit slot per runtime argument (program_abi.h; the
/// slot_of functions below). Throws blocc::Error for a CPU without the
/// features the kernel was compiled for, a negative grid dimension, and a
/// program's run-time error (division by zero, a failed assert), naming the
/// kernel, the program and the op.
void launch_cpu(const CpuKernel &kernel, const Grid &grid,
                const uint64_t *args);

/// The argument slots of program_abi.h: an address, an integer sign- or
/// zero-extended to 64 bits, a float as the bits of a double.
inline uint64_t pointer_slot(const void *pointer) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer));
}
inline uint64_t signed_slot(int64_t value) {
  return static_cast<uint64_t>(value);
}
inline uint64_t unsigned_slot(uint64_t value) { return value; }
inline uint64_t float_slot(double value) {
  return std::bit_cast<uint64_t>(value);
}

/// One architecture's code of a GPU kernel: PTX text (NUL-terminated) or
/// a cubin ptxas made of it.
struct GpuImage {
  int sm;             ///< 80, 86, 89, 90
  bool arch_specific; ///< sm_90a: runs on compute capability 9.0 only
  bool cubin;         ///< machine code for sm_XY, else PTX
  const void *data;
  size_t size;
  /// Dynamic shared memory each launch requests (runtime/cuda/
  /// loaded_kernel.h; 0 when the kernel's shared memory fits 48 KB).
  unsigned dynamic_shared_bytes;
  /// The tensor maps the entry takes after the user's parameters
  /// (runtime/cuda/tensor_map.h: one per tile the Tensor Memory
  /// Accelerator copies), which each launch encodes from its arguments;
  /// nullptr where it takes none.
  const std::vector<cuda::TensorMapRequest> &(*tensor_maps)() = nullptr;
};

/// A specialization compiled for NVIDIA GPUs.
struct GpuKernel {
  const char *name;  ///< the specialization's name
  const char *entry; ///< the PTX entry's name
  int num_warps;     ///< a program is a CTA of 32 * num_warps threads
  const GpuImage *images;
  size_t num_images;
  /// Where a program may stop with an error (none: launches never wait).
  const std::vector<runtime::FaultSite> &(*faults)();
};

/// Queues `kernel` over `grid` on `stream` (a CUstream; nullptr: the
/// default stream of the context) in the context of the device memory
/// `pointers` (the pointer arguments' addresses; nulls are skipped) lives
/// in, else the stream's, else the current device's (blocc::cuda::
/// current_device()). Asynchronous, but for kernels that can stop with an
/// error: those wait and throw it. `parameters[i]` points at the value of
/// the PTX entry's parameter i (backends/nvptx/kernel_abi.h). On first use
/// in a context the code for its device is loaded: the newest cubin that
/// runs there, else (or when the driver rejects the cubin) the newest
/// PTX the driver can compile for it (image_order). Throws blocc::Error for
/// a device none of the images fits (naming what there is), a stream of
/// another context than the pointers', a grid beyond the device's limits,
/// a negative grid, and every driver error. `args` (num_args of them, one
/// per parameter) are the same arguments as KernelArgs, which the tensor
/// maps of an image that takes some are encoded from (nullptr where no
/// image does); a map the Tensor Memory Accelerator cannot copy throws
/// blocc::Error naming the argument at fault.
void launch_gpu(const GpuKernel &kernel, const Grid &grid, void **parameters,
                const uint64_t *pointers, size_t num_pointers, void *stream,
                const KernelArg *args = nullptr, size_t num_args = 0);

/// The images of `kernel` that can run on a device of compute capability
/// `cc` (major * 10 + minor), in the order a launch tries them: cubins of
/// the device's major version and a minor version no newer than its,
/// newest first, then PTX for an architecture no newer than the device,
/// newest first (an arch-specific image only on its own architecture).
std::vector<size_t> image_order(const GpuKernel &kernel, int cc);

/// Checks an argument against what the specialization assumed of it
/// (Triton's ':16'): a pointer 16-byte aligned, an integer divisible by
/// 16. Throws blocc::Error naming the kernel, the argument (1-based
/// `position`, `name`) and its signature entry (`entry`, "x=*f32:16").
void require_aligned(const void *pointer, size_t alignment, const char *kernel,
                     int position, const char *entry);
void require_divisible(int64_t value, int64_t divisor, const char *kernel,
                       int position, const char *entry);

} // namespace blocc::aot
