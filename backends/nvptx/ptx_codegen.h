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

/// The NVPTX target machine for `arch` (64-bit addresses); `fp8_mma`:
/// the PTX issues mma.sync of fp8 inputs, which needs PTX ISA 8.4. Throws
/// blocc::Error when LLVM lacks the NVPTX target.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const GpuArch &arch,
                                                         bool fp8_mma = false);

/// Sets `module`'s triple and data layout for `machine`.
void prepare_module(llvm::Module &module, llvm::TargetMachine &machine);

/// backends/llvm's -O3 pipeline as the GPU backend runs it: without the
/// SLP and loop vectorizers. Every block-value element is already its own
/// scalar, and vectors of narrow elements are where LLVM's NVPTX target
/// (version 19) and the PTX assembler are weakest: a <2 x i8> it cannot
/// hold in a register went through a stack slot, whose two-byte store
/// ptxas assembled with one byte from a register nothing wrote; and a loop
/// vectorized into <2 x i16> min/max chains is what the
/// assembler's min/max fusion sees. Loads and stores stay vectorized: the
/// lowering emits them as vectors itself. Then the forms the assembler
/// miscompiles are rewritten: -|x| as a minimum (negated_abs_as_min.h),
/// 16-bit negation in 32 bits (narrow_negation_in_32_bits.h), integer
/// min/max as compares and selects (integer_min_max_as_selects.h; the PTX
/// text gets the same for the ones instruction selection creates,
/// ptx_min_max_as_selects.h).
void optimize_for_gpu(llvm::Module &module, llvm::TargetMachine &machine);

/// Optimizes `module` (optimize_for_gpu) and prints it as PTX.
std::string emit_ptx(llvm::Module &module, llvm::TargetMachine &machine);

/// PTX of `module`, which optimize_for_gpu already optimized
/// (emit_ptx's second half: inspection prints the module in between).
std::string emit_optimized_ptx(llvm::Module &module,
                               llvm::TargetMachine &machine);

} // namespace blocc::nvptx
