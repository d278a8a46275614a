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
/// BLOCC_CPU_TARGET=avx2 or x86-64 targets an older x86 generation than
/// the host instead (for tests of the 256- and 128-bit code paths).
const HostTarget &host_target();

/// A target machine for the host at -O3 (one per caller: they are not
/// thread-safe).
std::unique_ptr<llvm::TargetMachine> make_host_target_machine();

} // namespace blocc::cpu
