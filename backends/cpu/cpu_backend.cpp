#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/host_target.h"
#include "backends/cpu/jit.h"
#include "backends/cpu/kernel_info.h"
#include "backends/cpu/kernel_lowering.h"
#include "backends/llvm/optimize.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/cpu/compile_cache.h"
#include "runtime/cpu/grid_executor.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <bit>
#include <iostream>

namespace blocc::cpu {

/// Bumped whenever generated code changes meaning (part of cache keys).
constexpr const char *kCompilerVersion = "blocc-cpu-1";

class CompiledKernel {
public:
  KernelInfo info;
  runtime::cpu::ProgramFunction entry = nullptr;
  std::vector<ir::Type> argument_types;
};

namespace {

struct Generated {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

Generated generate(const ir::Function &function, KernelInfo &info,
                   const std::string &symbol, bool optimized,
                   const HostTarget &target) {
  Generated g;
  g.context = std::make_unique<llvm::LLVMContext>();
  g.module =
      std::make_unique<llvm::Module>("blocc." + function.name(), *g.context);
  std::unique_ptr<llvm::TargetMachine> machine = make_host_target_machine();
  g.module->setTargetTriple(machine->getTargetTriple().str());
  g.module->setDataLayout(machine->createDataLayout());
  KernelLowering lowering(function, *g.module, target, info);
  lowering.lower(symbol);
  if (optimized)
    llvm_backend::optimize_module(*g.module, *machine);
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

runtime::cpu::CompileCache<CompiledKernel> &cache() {
  static runtime::cpu::CompileCache<CompiledKernel> c;
  return c;
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
  std::string key = std::string(kCompilerVersion) + "\n" + host_target().key() +
                    "\n" + checks + ir_text;
  return cache().get(key, [&]() -> std::shared_ptr<const CompiledKernel> {
    auto kernel = std::make_shared<CompiledKernel>();
    kernel->info.name = function.name();
    kernel->info.check_bounds = check_bounds;
    kernel->info.detect_races = options.detect_races;
    for (size_t i = 0; i < function.num_arguments(); ++i)
      kernel->argument_types.push_back(function.argument(i)->type());
    // One JIT holds every kernel: symbols must be unique.
    static std::atomic<uint64_t> counter{0};
    std::string symbol =
        "blocc_" + runtime::cpu::digest(key) + "_" + std::to_string(counter++);
    Generated g = generate(function, kernel->info, symbol, true, host_target());
    if (options.dump_llvm)
      std::cerr << "// blocc: LLVM IR of " << function.name() << " ("
                << host_target().describe() << ")\n"
                << text_of(*g.module);
    kernel->entry = reinterpret_cast<runtime::cpu::ProgramFunction>(
        jit_compile(std::move(g.module), std::move(g.context), symbol));
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
  launch.kernel = &kernel.info;
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
  Generated g =
      generate(function, info, "blocc_kernel", options.optimized, target);
  return text_of(*g.module);
}

size_t num_compiled_kernels() { return cache().size(); }

std::string target_description() { return host_target().describe(); }

} // namespace blocc::cpu
