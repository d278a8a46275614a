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

/// Optimizes `module` at -O3 and prints it as PTX.
std::string emit_ptx(llvm::Module &module, llvm::TargetMachine &machine);

/// PTX of `module`, which backends/llvm's -O3 pipeline already optimized
/// (emit_ptx's second half: inspection prints the module in between).
std::string emit_optimized_ptx(llvm::Module &module,
                               llvm::TargetMachine &machine);

} // namespace blocc::nvptx
