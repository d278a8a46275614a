#include "backends/cpu/host_target.h"

#include "ir/error.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace blocc::cpu {

namespace {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

/// The features LLVM knows for `cpu` (another x86 generation than the
/// host's: BLOCC_CPU_TARGET, or a CPU to compile ahead of time for).
llvm::StringMap<bool> features_of(const std::string &triple,
                                  const std::string &cpu) {
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  llvm::StringMap<bool> features;
  if (!target)
    return features;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, cpu, ""));
  for (const llvm::SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
    features[kv.Key] = info->checkFeatures(std::string("+") + kv.Key);
  return features;
}

/// Features the backend leaves unused though the CPU has them: LLVM 19's
/// x86 code for AVX512-FP16 (Sapphire Rapids and later) left an element of
/// a random kernel's masked store unwritten where the same kernel for AVX-512
/// without it (icelake-server) was right. Without the feature, f16 values
/// are computed in f32 and rounded to f16 after each operation, as on every
/// other x86, which gives the same results. AVX10.1 implies the feature.
const char *const kUnusedFeatures[] = {"avx512fp16", "avx10.1-256",
                                       "avx10.1-512"};

/// `t`'s features as its key lists them ("+avx2,-avx512f,..."), and its
/// vector width.
void set_features(HostTarget &t, llvm::StringMap<bool> features) {
  for (const char *name : kUnusedFeatures)
    features[name] = false;
  std::vector<std::string> names;
  for (const auto &f : features)
    names.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(names.begin(), names.end()); // a stable cache key
  t.features.clear();
  for (const std::string &n : names)
    t.features += (t.features.empty() ? "" : ",") + n;
  auto has = [&](const char *name) {
    auto it = features.find(name);
    return it != features.end() && it->second;
  };
  if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq"))
    t.vector_bits = 512;
  else if (has("avx2"))
    t.vector_bits = 256;
  else
    t.vector_bits = 128;
}

/// This machine's CPU with every feature it has.
HostTarget native_target() {
  initialize_llvm();
  HostTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  set_features(t, llvm::sys::getHostCPUFeatures());
  return t;
}

/// `cpu`'s own features (an x86 generation older or newer than the host).
HostTarget named_target(const std::string &cpu) {
  HostTarget t = native_target();
  t.cpu = cpu;
  set_features(t, features_of(t.triple, cpu));
  return t;
}

HostTarget detect() {
  // BLOCC_CPU_TARGET=avx2|x86-64 compiles for an older x86 than the host
  // (which must run it): how the tests cover 256-bit and 128-bit code on
  // an AVX-512 machine. Any CPU LLVM knows is taken as well
  // (icelake-server: AVX-512 without the FP16 instructions).
  if (const char *env = std::getenv("BLOCC_CPU_TARGET")) {
    std::string choice = env;
    if (choice == "avx2")
      return named_target("haswell");
    if (!choice.empty()) {
      try {
        return target_for_cpu(choice);
      } catch (const Error &e) {
        throw Error("BLOCC_CPU_TARGET='" + choice +
                    "' is not a CPU target: " + e.what());
      }
    }
  }
  return native_target();
}

} // namespace

std::string HostTarget::describe() const {
  return triple + " " + cpu + " (" + std::to_string(vector_bits) +
         "-bit vectors)";
}

const HostTarget &host_target() {
  static const HostTarget target = detect();
  return target;
}

HostTarget target_for_cpu(const std::string &cpu) {
  if (cpu == "native")
    return native_target();
  initialize_llvm();
  const std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target ? target->createMCSubtargetInfo(triple, "", "") : nullptr);
  if (!info || !info->isCPUStringValid(cpu))
    throw Error("'" + cpu + "' is not an x86 CPU LLVM knows; use native, " +
                "a level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4) or a CPU " +
                "name (haswell, skylake-avx512, icelake-server, znver3, " +
                "znver4, ...)");
  return named_target(cpu);
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const HostTarget &host,
                                                         bool jit) {
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!target)
    throw Error("the CPU backend cannot target this machine (" + host.triple +
                "): " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      host.triple, host.cpu, host.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive, jit));
  if (!machine)
    throw Error("the CPU backend cannot create a target machine for " +
                host.describe());
  return machine;
}

std::unique_ptr<llvm::TargetMachine> make_host_target_machine() {
  return make_target_machine(host_target(), /*jit=*/true);
}

} // namespace blocc::cpu
