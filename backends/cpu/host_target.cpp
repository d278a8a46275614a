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

/// The features LLVM knows for `cpu` (a generation older than the host,
/// chosen with BLOCC_CPU_TARGET).
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

HostTarget detect() {
  initialize_llvm();
  HostTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  // BLOCC_CPU_TARGET=avx2|x86-64 compiles for an older x86 than the host
  // (which must run it): how the tests cover 256-bit and 128-bit code on
  // an AVX-512 machine.
  if (const char *env = std::getenv("BLOCC_CPU_TARGET")) {
    std::string choice = env;
    if (choice == "avx2")
      t.cpu = "haswell";
    else if (choice == "x86-64")
      t.cpu = "x86-64";
    else if (choice != "native" && !choice.empty())
      throw Error("BLOCC_CPU_TARGET='" + choice +
                  "' is not a CPU target; expected native, avx2 or x86-64");
    if (choice == "avx2" || choice == "x86-64")
      features = features_of(t.triple, t.cpu);
  }
  std::vector<std::string> names;
  for (const auto &f : features)
    names.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(names.begin(), names.end()); // a stable cache key
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
  return t;
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

std::unique_ptr<llvm::TargetMachine> make_host_target_machine() {
  const HostTarget &host = host_target();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!target)
    throw Error("the CPU backend cannot target this machine (" + host.triple +
                "): " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      host.triple, host.cpu, host.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive, /*JIT=*/true));
  if (!machine)
    throw Error("the CPU backend cannot create a target machine for " +
                host.describe());
  return machine;
}

} // namespace blocc::cpu
