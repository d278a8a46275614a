// The checks of generated kernels on the GPU backend:
//  - check_ptx: every kernel must compile for sm_80 and sm_90 and, where
//    ptxas is on PATH (the CUDA toolkit's), assemble for both, so that a
//    kernel the GPU backend cannot lower, or PTX the driver would reject,
//    fails without a GPU;
//  - check_on_gpu: where a GPU is present, its results must equal the CPU
//    backend's and lie within the float64 reference's bounds.
#pragma once

#include "differential.h"
#include "kernel_generator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace blocc::differential {

/// Why check_ptx cannot compile kernels here ("" when it can): blocc is
/// built without the GPU backend.
std::string ptx_check_unavailable_reason();

/// Whether check_ptx assembles the PTX (ptxas is on PATH).
bool ptxas_present();

struct PtxCheck {
  /// The GPU backend rejected the kernel (an op it does not lower yet):
  /// its message, which names the op.
  std::string compile_error;
  /// ptxas rejected the PTX: its complaint, the architecture and the PTX.
  std::string ptxas_error;
  bool ok() const { return compile_error.empty() && ptxas_error.empty(); }
  /// Both, with the kernel's seed and IR, for a failure message.
  std::string report(const GeneratedKernel &kernel, int num_warps) const;
};

/// Compiles `kernel` with `num_warps` warps for sm_80 and sm_90 and
/// assembles both PTX where ptxas is present.
PtxCheck check_ptx(const GeneratedKernel &kernel, int num_warps);

/// check_ptx of the kernels of seeds `first` .. `first + count - 1` (with
/// the generator's default options), each with num_warps_for_seed(seed)
/// warps, several at once: a ptxas run is a process whose start dominates,
/// and the batch has a thousand of them. Results in seed order.
std::vector<PtxCheck> check_ptx_of_seeds(uint64_t first, uint64_t count);

/// Runs `kernel` on the GPU with num_warps_for_seed(kernel.seed) warps and
/// on the CPU backend (`cpu`, cpu_backend_executor()) on the same fresh
/// inputs: "" when the results agree as the CPU backend's agree with the
/// interpreter (integers and exact floats bit for bit, other floats within
/// the tolerance the generator derives; differential.h), the GPU wrote what
/// the generator says is written, and its float results lie within the
/// bounds of the float64 twin; else the report (seeds, element, values,
/// IR). A kernel the GPU backend cannot compile is a failure naming the op.
/// Needs a GPU (gpu_unavailable_reason()).
std::string check_on_gpu(const GeneratedKernel &kernel, const Executor &cpu);

} // namespace blocc::differential
