#include "backends/nvptx/ptx_codegen.h"

#include "backends/llvm/optimize.h"
#include "backends/nvptx/integer_min_max_as_selects.h"
#include "backends/nvptx/narrow_negation_in_32_bits.h"
#include "backends/nvptx/negated_abs_as_min.h"
#include "backends/nvptx/paired_narrowing.h"
#include "backends/nvptx/ptx_min_max_as_selects.h"
#include "backends/nvptx/signed_bool_to_float.h"
#include "ir/error.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace blocc::nvptx {

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

void initialize_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

} // namespace

std::unique_ptr<llvm::TargetMachine> make_target_machine(const GpuArch &arch,
                                                         bool fp8_mma) {
  initialize_nvptx();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target)
    throw Error("LLVM's NVPTX target is not available: " + error);
  // sm_90a needs PTX ISA 8.0, and fp8's mma.sync 8.4; otherwise LLVM's
  // default (the oldest PTX version that supports the architecture), so
  // that older drivers still load the PTX of the other kernels.
  std::string features = fp8_mma              ? "+ptx84"
                         : arch.arch_specific ? "+ptx80"
                                              : "";
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kTriple, arch.name(), features, options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    throw Error("LLVM could not create an NVPTX target machine for " +
                arch.name());
  return machine;
}

void prepare_module(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setTargetTriple(kTriple);
  module.setDataLayout(machine.createDataLayout());
}

void optimize_for_gpu(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm_backend::OptimizeOptions options;
  options.slp_vectorization = false;
  options.loop_vectorization = false;
  llvm_backend::optimize_module(module, machine, options);
  // Forms the PTX assembler gets wrong, rewritten in this order: the
  // minimum that replaces -|x| and the 16-bit negations are rewritten by
  // the passes after them.
  emit_negated_abs_as_min(module);
  emit_narrow_negation_in_32_bits(module);
  emit_integer_min_max_as_selects(module);
  // A form LLVM's NVPTX target gets wrong.
  emit_signed_bool_to_float_as_select(module);
  // Not a workaround: two narrowings packed into a word as one cvt.
  emit_paired_narrowing(module);
  llvm_backend::verify_module(module);
}

std::string emit_ptx(llvm::Module &module, llvm::TargetMachine &machine) {
  optimize_for_gpu(module, machine);
  return emit_optimized_ptx(module, machine);
}

namespace {

/// `ptx` without the numbers of LLVM's `// callseq N, M` comments: they
/// count the calls lowered so far in the whole process, so that the same
/// kernel would otherwise read differently after other compiles (and the
/// disk cache keep whichever came first).
std::string without_call_numbers(std::string ptx) {
  const std::string mark = "// callseq";
  std::string out;
  out.reserve(ptx.size());
  size_t from = 0;
  for (size_t at = ptx.find(mark); at != std::string::npos;
       at = ptx.find(mark, from)) {
    out.append(ptx, from, at + mark.size() - from);
    size_t end = ptx.find('\n', at);
    from = end == std::string::npos ? ptx.size() : end;
  }
  out.append(ptx, from, std::string::npos);
  return out;
}

} // namespace

std::string emit_optimized_ptx(llvm::Module &module,
                               llvm::TargetMachine &machine) {
  // A call to anything but an intrinsic would be an unresolved symbol in
  // the PTX (the C library's math functions do not exist on the GPU):
  // fail here, naming it, rather than in the driver. vprintf (print) is
  // the driver's own.
  for (const llvm::Function &f : module)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() &&
        f.getName() != "vprintf")
      throw Error("internal: the GPU kernel calls '" + f.getName().str() +
                  "', which does not exist on the GPU");
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr,
                                  llvm::CodeGenFileType::AssemblyFile))
    throw Error("internal: LLVM's NVPTX target cannot emit PTX");
  passes.run(module);
  return without_call_numbers(
      rewrite_ptx_min_max_as_selects(std::string(ptx.str())));
}

} // namespace blocc::nvptx
