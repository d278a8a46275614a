// The process-wide JIT (LLVM ORC's LLJIT) that turns optimized LLVM modules
// into machine code for the host. Compiled code stays loaded for the life
// of the process (kernels are cached, never unloaded).
#pragma once

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace blocc::cpu {

/// Compiles `module` (already optimized; it owns its context) and returns
/// the address of its function `symbol`. Thread-safe: modules may be added
/// from several threads at once. Throws blocc::Error on failure.
void *jit_compile(std::unique_ptr<llvm::Module> module,
                  std::unique_ptr<llvm::LLVMContext> context,
                  const std::string &symbol);

} // namespace blocc::cpu
