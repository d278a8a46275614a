// The machine the CPU backend compiles for: the host, with every feature
// its CPU has (AVX2, AVX-512, ...), and the vector width the lowering
// builds its loops for.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace blocc::cpu {

struct HostTarget {
  std::string triple;
  std::string cpu;      // "skylake-avx512", "znver4", ...
  std::string features; // "+avx2,+avx512f,-amx-tile,..."
  /// Bits of the vector registers the lowering uses: 512 with AVX-512, 256
  /// with AVX2, else 128.
  int vector_bits = 128;

  /// "x86_64-pc-linux-gnu skylake-avx512 (512-bit vectors)"
  std::string describe() const;
  /// Everything that changes generated code, for cache keys.
  std::string key() const { return triple + ";" + cpu + ";" + features; }
};

/// Detected once (initializes LLVM's native target on first use).
/// BLOCC_CPU_TARGET=avx2, x86-64 or another CPU LLVM knows (as
/// target_for_cpu takes it) targets that x86 generation instead: for tests
/// of the 256- and 128-bit code paths, or of AVX-512 without FP16
/// (icelake-server) on a CPU that has it. The host must run its code.
const HostTarget &host_target();

/// An x86 CPU to compile ahead of time for: "native" (this machine's CPU
/// and every feature it has), or a CPU LLVM knows ("x86-64-v3",
/// "skylake-avx512", "znver4") with that CPU's features. Throws
/// blocc::Error naming `cpu` when LLVM does not know it.
HostTarget target_for_cpu(const std::string &cpu);

/// A target machine for `target` at -O3, position-independent code (one
/// per caller: they are not thread-safe). `jit`: for the process's JIT
/// rather than an object file linked by the system's linker.
std::unique_ptr<llvm::TargetMachine>
make_target_machine(const HostTarget &target, bool jit);

/// make_target_machine(host_target(), /*jit=*/true).
std::unique_ptr<llvm::TargetMachine> make_host_target_machine();

} // namespace blocc::cpu
