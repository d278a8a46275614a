#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/compiler_version.h"
#include "backends/cpu/host_target.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/kernel_info.h"
#include "backends/cpu/kernel_lowering.h"
#include "backends/llvm/optimize.h"
#include "ir/clone.h"
#include "ir/error.h"
#include "ir/passes.h"
#include "ir/printer.h"
#include "runtime/cpu/compile_cache.h"
#include "runtime/cpu/disk_cache.h"
#include "runtime/cpu/grid_executor.h"

#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <bit>
#include <cctype>

namespace blocc::cpu {

class CompiledKernel {
public:
  KernelInfo info;
  runtime::cpu::ProgramFunction entry = nullptr;
  std::vector<ir::Type> argument_types;
};

namespace {

struct Generated {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

/// `function` with its descriptor accesses rewritten into pointer
/// arithmetic and masked loads and stores (the CPU has no bulk tile
/// copies): a rewritten copy, held by `holder`, where it has any.
const ir::Function &without_descriptors(const ir::Function &function,
                                        std::unique_ptr<ir::Function> &holder) {
  if (!ir::has_tensor_descriptors(function))
    return function;
  holder = ir::clone(function);
  ir::lower_tensor_descriptors(*holder);
  return *holder;
}

/// `function` lowered for `target` (vector widths) as `symbol`, with a
/// machine for `machine_target` (the JIT's: the host's; an object file's:
/// the CPU it is for).
Generated generate(const ir::Function &function, KernelInfo &info,
                   const std::string &symbol, bool optimized,
                   const HostTarget &target,
                   std::unique_ptr<llvm::TargetMachine> machine) {
  Generated g;
  g.context = std::make_unique<llvm::LLVMContext>();
  g.module =
      std::make_unique<llvm::Module>("blocc." + function.name(), *g.context);
  g.machine = std::move(machine);
  g.module->setTargetTriple(g.machine->getTargetTriple().str());
  g.module->setDataLayout(g.machine->createDataLayout());
  std::unique_ptr<ir::Function> rewritten;
  KernelLowering lowering(without_descriptors(function, rewritten), *g.module,
                          target, info);
  lowering.lower(symbol);
  if (optimized)
    llvm_backend::optimize_module(*g.module, *g.machine);
  else
    llvm_backend::verify_module(*g.module);
  return g;
}

std::string text_of(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

/// The name of a kernel's function in the JIT: the kernel's own (its
/// characters outside [A-Za-z0-9_] made '_'), so that profiles (perf,
/// BLOCC_PERF_MAP) and the `asm` stage show it, with ".blocc" after it,
/// which no C function's name can hold: a kernel named "expf" must not
/// define the C library's expf its own code calls. Each kernel's object is
/// a JITDylib of its own (jit.h), so specializations may share the name.
std::string jit_symbol(const ir::Function &function) {
  std::string symbol;
  for (char c : function.name())
    symbol += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return symbol + ".blocc";
}

runtime::cpu::CompileCache<CompiledKernel> &cache() {
  static runtime::cpu::CompileCache<CompiledKernel> c;
  return c;
}

struct Counters {
  std::atomic<size_t> jit_compiles{0}, disk_hits{0}, disk_rejected{0},
      disk_writes{0}, disk_write_failures{0};
};
Counters &counters() {
  static Counters c;
  return c;
}

/// The entry point of `function`'s program: object code from the disk cache
/// when it holds a verified entry for `key`, else compiled now (and stored
/// there). `info` is filled either way by lowering `function`; a disk hit
/// lowers without optimizing or generating code, so that entries hold
/// nothing but object code and the fault, print and access sites the code
/// numbers always come from the lowering that numbered them (lowering is
/// deterministic: sites are numbered in the order of the ops).
void *machine_code(const ir::Function &function, const std::string &key,
                   const std::string &symbol, const CompileOptions &options,
                   KernelInfo &info) {
  std::shared_ptr<const runtime::cpu::DiskCache> disk =
      runtime::cpu::DiskCache::from_environment();
  // Read (and a malformed value reported) before any work, at every
  // in-memory miss as BLOCC_CACHE_DIR is.
  const uint64_t max_bytes = runtime::cpu::cache_max_bytes_from_environment();
  const KernelInfo before_lowering = info;
  std::string object;
  if (disk) {
    switch (disk->load(key, object)) {
    case runtime::cpu::CacheLookup::Hit:
      generate(function, info, symbol, /*optimized=*/false, host_target(),
               make_host_target_machine());
      try {
        void *entry = load_object(object, symbol, function.name());
        ++counters().disk_hits;
        return entry;
      } catch (const Error &) {
        // Verified bytes that do not link: compile them again.
        info = before_lowering;
        ++counters().disk_rejected;
      }
      break;
    case runtime::cpu::CacheLookup::Rejected:
      ++counters().disk_rejected;
      break;
    case runtime::cpu::CacheLookup::Missing:
      break;
    }
  }
  Generated g = generate(function, info, symbol, true, host_target(),
                         make_host_target_machine());
  object = emit_object(*g.module, *g.machine);
  ++counters().jit_compiles;
  if (disk)
    ++(disk->store(key, object, max_bytes) ? counters().disk_writes
                                           : counters().disk_write_failures);
  return load_object(object, symbol, function.name());
}

/// One argument as a 64-bit slot (runtime/cpu/program_abi.h).
uint64_t slot_of(const std::string &kernel, size_t i, const ir::Type &type,
                 const KernelArg &arg) {
  auto mismatch = [&](const char *expected) {
    const char *got = arg.kind == KernelArg::Kind::Pointer ? "a pointer"
                      : arg.kind == KernelArg::Kind::Int   ? "an integer"
                                                           : "a float";
    throw Error("kernel '" + kernel + "': argument " + std::to_string(i) +
                " (" + type.str() + ") takes " + expected + ", got " + got);
  };
  if (type.is_pointer()) {
    if (arg.kind != KernelArg::Kind::Pointer)
      mismatch("a pointer");
    return reinterpret_cast<uint64_t>(arg.pointer);
  }
  if (type.is_integer()) {
    if (arg.kind != KernelArg::Kind::Int)
      mismatch("an integer");
    return static_cast<uint64_t>(arg.int_value);
  }
  if (arg.kind != KernelArg::Kind::Float)
    mismatch("a float");
  return std::bit_cast<uint64_t>(arg.float_value);
}

/// The buffers a checked launch checks against, and its race records.
LaunchChecks launch_checks(const KernelInfo &info,
                           const std::vector<KernelArg> &args) {
  LaunchChecks checks;
  checks.bounds.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &arg = args[i];
    if (arg.kind != KernelArg::Kind::Pointer)
      continue;
    checks.bounds[i] =
        arg.size_bytes == KernelArg::kUnknownSize
            ? runtime::cpu::BufferBounds::unknown_extent()
            : runtime::cpu::BufferBounds{
                  reinterpret_cast<uint64_t>(arg.pointer), arg.size_bytes};
  }
  if (info.detect_races)
    checks.races = std::make_unique<runtime::cpu::WriteRaceDetector>();
  return checks;
}

} // namespace

std::shared_ptr<const CompiledKernel> compile(const ir::Function &function,
                                              const CompileOptions &options) {
  std::string ir_text = ir::print(function);
  const bool check_bounds = options.check_bounds || options.detect_races;
  // Checked kernels are specializations of their own.
  std::string checks = options.detect_races ? "checks=races\n"
                       : check_bounds       ? "checks=bounds\n"
                                            : "";
  // Everything that decides the generated code (see disk_cache.h).
  std::string key = compiler_version() + "\n" + host_target().key() + ";" +
                    std::to_string(host_target().vector_bits) + "-bit\n" +
                    checks + ir_text;
  return cache().get(key, [&]() -> std::shared_ptr<const CompiledKernel> {
    auto kernel = std::make_shared<CompiledKernel>();
    kernel->info.name = function.name();
    kernel->info.check_bounds = check_bounds;
    kernel->info.detect_races = options.detect_races;
    for (size_t i = 0; i < function.num_arguments(); ++i)
      kernel->argument_types.push_back(function.argument(i)->type());
    std::string symbol = jit_symbol(function);
    kernel->entry = reinterpret_cast<runtime::cpu::ProgramFunction>(
        machine_code(function, key, symbol, options, kernel->info));
    return kernel;
  });
}

void run(const CompiledKernel &kernel, Grid grid,
         const std::vector<KernelArg> &args) {
  const std::string &name = kernel.info.name;
  if (args.size() != kernel.argument_types.size())
    throw Error("kernel '" + name + "' takes " +
                std::to_string(kernel.argument_types.size()) +
                " arguments, got " + std::to_string(args.size()));
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw Error("kernel '" + name + "': grid dimension " +
                  std::to_string(axis) + " is negative (" +
                  std::to_string(grid[axis]) + ")");
  std::vector<uint64_t> slots;
  slots.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    slots.push_back(slot_of(name, i, kernel.argument_types[i], args[i]));
  runtime::cpu::GridLaunch launch;
  launch.function = kernel.entry;
  launch.args = slots.data();
  launch.scratch_bytes = kernel.info.scratch_bytes;
  // The runtime's hooks read the ProgramSites base (program_sites.h).
  launch.kernel = static_cast<const runtime::cpu::ProgramSites *>(&kernel.info);
  LaunchChecks checks;
  if (kernel.info.check_bounds) {
    checks = launch_checks(kernel.info, args);
    launch.bounds = checks.bounds.data();
    launch.launch_checks = &checks;
  }
  runtime::cpu::run_grid(grid, launch);
}

std::string llvm_ir(const ir::Function &function,
                    const LlvmIrOptions &options) {
  KernelInfo info;
  info.name = function.name();
  info.check_bounds = options.check_bounds || options.detect_races;
  info.detect_races = options.detect_races;
  HostTarget target = host_target();
  if (options.vector_bits > 0)
    target.vector_bits = options.vector_bits;
  Generated g = generate(function, info, "blocc_kernel", options.optimized,
                         target, make_host_target_machine());
  return text_of(*g.module);
}

Inspection inspect(const ir::Function &function,
                   const InspectionRequest &request) {
  Inspection inspection;
  if (!request.llvm_ir && !request.assembly)
    return inspection;
  KernelInfo info;
  info.name = function.name();
  info.check_bounds = request.check_bounds || request.detect_races;
  info.detect_races = request.detect_races;
  // The JIT's symbol, target and machine: the text is that of the code a
  // launch runs.
  Generated g = generate(function, info, jit_symbol(function), true,
                         host_target(), make_host_target_machine());
  if (request.llvm_ir)
    inspection.llvm_ir = text_of(*g.module);
  if (request.assembly)
    inspection.assembly = emit_assembly(*g.module, *g.machine);
  return inspection;
}

ObjectCode compile_object(const ir::Function &function,
                          const ObjectOptions &options) {
  const HostTarget target = target_for_cpu(options.cpu);
  KernelInfo info;
  info.name = function.name();
  Generated g = generate(function, info, options.symbol, /*optimized=*/true,
                         target, make_target_machine(target, /*jit=*/false));
  // Only the entry is the object's own: whatever else the module defines
  // stays local, so that objects of several kernels link into one program.
  for (llvm::Function &f : *g.module)
    if (!f.isDeclaration() && f.getName() != options.symbol)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &v : g.module->globals())
    if (!v.isDeclaration())
      v.setLinkage(llvm::GlobalValue::InternalLinkage);
  ObjectCode code;
  code.object = emit_object(*g.module, *g.machine);
  code.sites = static_cast<const runtime::cpu::ProgramSites &>(info);
  code.scratch_bytes = info.scratch_bytes;
  code.target = target.describe();
  for (size_t begin = 0; begin < target.features.size();) {
    size_t end = target.features.find(',', begin);
    if (end == std::string::npos)
      end = target.features.size();
    if (target.features[begin] == '+')
      code.features.push_back(
          target.features.substr(begin + 1, end - begin - 1));
    begin = end + 1;
  }
  return code;
}

size_t num_compiled_kernels() { return cache().size(); }

CacheCounters cache_counters() {
  const Counters &c = counters();
  return {c.jit_compiles.load(), c.disk_hits.load(), c.disk_rejected.load(),
          c.disk_writes.load(), c.disk_write_failures.load()};
}

std::string disk_cache_directory() {
  std::shared_ptr<const runtime::cpu::DiskCache> disk =
      runtime::cpu::DiskCache::from_environment();
  return disk ? disk->directory() : std::string();
}

size_t clear_disk_cache() {
  std::shared_ptr<const runtime::cpu::DiskCache> disk =
      runtime::cpu::DiskCache::from_environment();
  return disk ? static_cast<size_t>(disk->clear().entries) : 0;
}

void clear_memory_cache_for_testing() { cache().clear(); }

std::string target_description() { return host_target().describe(); }

} // namespace blocc::cpu
