#include "backends/cpu/jit.h"

#include "backends/cpu/host_target.h"
#include "backends/cpu/runtime_hooks.h"
#include "ir/error.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/TargetParser/SubtargetFeature.h>

namespace blocc::cpu {

namespace {

std::string message_of(llvm::Error error) {
  return llvm::toString(std::move(error));
}

std::unique_ptr<llvm::orc::LLJIT> create_jit() {
  const HostTarget &host = host_target();
  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(host.triple)};
  machine.setCPU(host.cpu);
  llvm::SubtargetFeatures features(host.features);
  machine.addFeatures(features.getFeatures());
  machine.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(machine))
                 .setSupportConcurrentCompilation(true)
                 .create();
  if (!jit)
    throw Error("the CPU backend cannot start LLVM's JIT: " +
                message_of(jit.takeError()));
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  // Kernels call the C library (math functions that stay calls) and the
  // runtime hooks; both resolve in this process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    throw Error("the CPU backend cannot resolve process symbols: " +
                message_of(process.takeError()));
  main.addGenerator(std::move(*process));
  llvm::orc::SymbolMap hooks;
  int count = 0;
  const RuntimeHook *table = runtime_hooks(&count);
  for (int i = 0; i < count; ++i)
    hooks[(*jit)->mangleAndIntern(table[i].name)] =
        llvm::orc::ExecutorSymbolDef(
            llvm::orc::ExecutorAddr::fromPtr(table[i].address),
            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  if (auto error = main.define(llvm::orc::absoluteSymbols(std::move(hooks))))
    throw Error("the CPU backend cannot register its runtime hooks: " +
                message_of(std::move(error)));
  return std::move(*jit);
}

llvm::orc::LLJIT &the_jit() {
  static std::unique_ptr<llvm::orc::LLJIT> jit = create_jit();
  return *jit;
}

} // namespace

void *jit_compile(std::unique_ptr<llvm::Module> module,
                  std::unique_ptr<llvm::LLVMContext> context,
                  const std::string &symbol) {
  llvm::orc::LLJIT &jit = the_jit();
  module->setDataLayout(jit.getDataLayout());
  llvm::orc::ThreadSafeModule unit(std::move(module), std::move(context));
  if (auto error = jit.addIRModule(std::move(unit)))
    throw Error("the CPU backend could not add a kernel to the JIT: " +
                message_of(std::move(error)));
  auto address = jit.lookup(symbol);
  if (!address)
    throw Error("the CPU backend could not compile kernel symbol '" + symbol +
                "': " + message_of(address.takeError()));
  return address->toPtr<void *>();
}

} // namespace blocc::cpu
