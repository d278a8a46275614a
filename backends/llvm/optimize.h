// The -O3 pipeline every LLVM backend runs on the module it generated,
// before code generation.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace blocc::llvm_backend {

struct OptimizeOptions {
  /// Whether the SLP vectorizer may pack independent scalar operations
  /// into vector ones, and the loop vectorizer iterations of a loop (the
  /// GPU backend turns both off: see ptx_codegen.h).
  bool slp_vectorization = true;
  bool loop_vectorization = true;
};

/// Runs LLVM's default O3 module pipeline, tuned for `target` (its cost
/// model decides vectorization and unrolling), then verifies the result.
/// Throws blocc::Error if the module is invalid before or after.
void optimize_module(llvm::Module &module, llvm::TargetMachine &target,
                     const OptimizeOptions &options = {});

/// Verifies `module`; throws blocc::Error with LLVM's report.
void verify_module(const llvm::Module &module);

} // namespace blocc::llvm_backend
