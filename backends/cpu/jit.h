// The process-wide JIT (LLVM ORC's LLJIT) that runs compiled kernels, and
// the step before it: optimized LLVM modules become relocatable object
// code for the host (emit_object), which is what the disk cache stores and
// what the JIT links (load_object), whether it was just compiled or read
// back from disk. Loaded code stays for the life of the process (kernels
// are cached, never unloaded).
#pragma once

#include <string>
#include <string_view>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace blocc::cpu {

/// Machine code of `module` (already optimized for `machine`, which
/// host_target.h made) as an ELF relocatable object. Throws blocc::Error.
std::string emit_object(llvm::Module &module, llvm::TargetMachine &machine);

/// The same machine code as x86 assembly (AT&T syntax), for inspection.
std::string emit_assembly(llvm::Module &module, llvm::TargetMachine &machine);

/// Links `object` (from emit_object, in this process or an earlier one)
/// into the JIT and returns the address of its function `symbol`. Each
/// object gets a JITDylib of its own, so symbol names need only be unique
/// within one object and the same object may be loaded twice. Thread-safe.
/// Throws blocc::Error naming `kernel` when the object cannot be linked.
void *load_object(std::string_view object, const std::string &symbol,
                  const std::string &kernel);

} // namespace blocc::cpu
