#include "backends/cpu/jit.h"

#include "backends/cpu/host_target.h"
#include "backends/cpu/perf_map.h"
#include "backends/cpu/runtime_hooks.h"
#include "ir/error.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <atomic>

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
  // No concurrent-compilation support (LLJIT's thread pool): kernels arrive
  // as object code (emit_object), so LLJIT never compiles IR, and linking
  // an object on the thread that loads it (the in-place dispatcher) avoids
  // a hand-off to a pool thread on every load. ORC's sessions, JITDylibs
  // and the linking layer serve loads from many threads at once either way.
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(machine))
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

// Kernels reach the JIT as object code, not as IR given to LLJIT's own
// compile layer (or its ObjectCache hook): the bytes the disk cache stores
// are then exactly the bytes every process links, so a cold run exercises
// the same linking path as a warm one, and a cache failure is reported by
// blocc, not lost inside a compile callback that cannot return errors.
namespace {

std::string emit(llvm::Module &module, llvm::TargetMachine &machine,
                 llvm::CodeGenFileType type, const char *what) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream stream(bytes);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type))
    throw Error(std::string("the CPU backend cannot emit ") + what + " for " +
                machine.getTargetTriple().str());
  passes.run(module);
  return std::string(bytes.data(), bytes.size());
}

} // namespace

std::string emit_object(llvm::Module &module, llvm::TargetMachine &machine) {
  return emit(module, machine, llvm::CodeGenFileType::ObjectFile,
              "object code");
}

std::string emit_assembly(llvm::Module &module, llvm::TargetMachine &machine) {
  return emit(module, machine, llvm::CodeGenFileType::AssemblyFile, "assembly");
}

void *load_object(std::string_view object, const std::string &symbol,
                  const std::string &kernel) {
  llvm::orc::LLJIT &jit = the_jit();
  static std::atomic<uint64_t> loaded{0};
  auto library = jit.createJITDylib("blocc.kernel." + std::to_string(loaded++));
  if (!library)
    throw Error("the CPU backend cannot load kernel '" + kernel +
                "': " + message_of(library.takeError()));
  // Runtime hooks and the C library resolve through the main JITDylib.
  library->addToLinkOrder(jit.getMainJITDylib());
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.data(), object.size()), symbol);
  if (auto error = jit.addObjectFile(*library, std::move(buffer)))
    throw Error("the CPU backend cannot load kernel '" + kernel +
                "': " + message_of(std::move(error)));
  auto address = jit.lookup(*library, symbol);
  if (!address)
    throw Error("the CPU backend cannot link kernel '" + kernel + "' (" +
                symbol + "): " + message_of(address.takeError()));
  void *entry = address->toPtr<void *>();
  record_in_perf_map(object, symbol, entry);
  return entry;
}

} // namespace blocc::cpu
