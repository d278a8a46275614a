// LLVM's NVPTX target: the target machine for a GPU architecture, and PTX
// text from an LLVM module (after backends/llvm's -O3 pipeline).
#pragma once

#include "backends/nvptx/gpu_arch.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace blocc::nvptx {

/// The NVPTX target machine for `arch` (64-bit addresses). Throws
/// blocc::Error when LLVM lacks the NVPTX target.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const GpuArch &arch);

/// Sets `module`'s triple and data layout for `machine`.
void prepare_module(llvm::Module &module, llvm::TargetMachine &machine);

/// backends/llvm's -O3 pipeline as the GPU backend runs it: without the
/// SLP vectorizer. Every block-value element is already its own scalar,
/// and packed vectors of narrow elements are where LLVM's NVPTX target
/// (version 19) is weakest: a <2 x i8> it cannot hold in a register goes
/// through a stack slot, a local-memory round trip that an H100 computed
/// wrong (a shift by a byte read back as 0). Loads and stores stay
/// vectorized: the lowering emits them as vectors itself.
void optimize_for_gpu(llvm::Module &module, llvm::TargetMachine &machine);

/// Optimizes `module` (optimize_for_gpu) and prints it as PTX.
std::string emit_ptx(llvm::Module &module, llvm::TargetMachine &machine);

/// PTX of `module`, which optimize_for_gpu already optimized
/// (emit_ptx's second half: inspection prints the module in between).
std::string emit_optimized_ptx(llvm::Module &module,
                               llvm::TargetMachine &machine);

} // namespace blocc::nvptx
