#include "backends/nvptx/gpu_backend.h"

#include "backends/llvm/optimize.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/kernel_abi.h"
#include "backends/nvptx/kernel_lowering.h"
#include "backends/nvptx/layout_attrs.h"
#include "backends/nvptx/print_layouts.h"
#include "backends/nvptx/ptx_codegen.h"
#include "backends/nvptx/ptx_disk_cache.h"
#include "backends/nvptx/warp_specialize.h"
#include "ir/clone.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/cpu/compile_cache.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/fault_record.h"
#include "runtime/cuda/loaded_kernel.h"
#include "runtime/cuda/tensor_map.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace blocc::nvptx {

/// Bumped whenever generated code changes meaning (part of cache keys).
constexpr const char *kCompilerVersion = "blocc-nvptx-1";

class CompiledKernel {
public:
  CompiledKernel(std::string name, std::string ptx, std::string symbol,
                 std::vector<ParameterKind> parameters, int cta_warps,
                 int64_t dynamic_shared_bytes, std::vector<FaultSite> faults,
                 std::string cubin)
      : loaded(std::move(name), std::move(ptx), std::move(symbol),
               static_cast<unsigned>(dynamic_shared_bytes), faults,
               std::move(cubin)),
        parameters(std::move(parameters)), cta_warps(cta_warps),
        faults(std::move(faults)) {}
  cuda::LoadedKernel loaded;
  std::vector<ParameterKind> parameters;
  /// The warps of a CTA: num_warps, and a producer warpgroup where a loop
  /// is warp-specialized (warp_specialize.h).
  int cta_warps;
  /// Where a program may stop with an error (fault_sites.h); launches of
  /// a kernel with any are watched for faults (runtime/cuda/fault_record.h).
  std::vector<FaultSite> faults;
  /// The tensor maps the PTX entry takes after the user's parameters, each
  /// a `.param .align 64 .b8 [128]`, encoded at every launch from its
  /// arguments: one per descriptor load the Tensor Memory Accelerator
  /// copies (tma.h).
  std::vector<cuda::TensorMapRequest> tensor_maps;
};

namespace {

std::atomic<size_t> compiled_count{0}, llvm_compile_count{0};

/// The PTX entry's name: the kernel's own, so that profilers (Nsight
/// Systems and Compute, torch.profiler: CUPTI reports the entry's name)
/// show the user's name. Characters PTX identifiers cannot hold become
/// '_'; a name that is no identifier then (empty, a leading digit, a lone
/// '_') or that could be one of the module's own symbols (blocc_*, the
/// driver's vprintf) gets "blocc_kernel_" in front.
std::string symbol_for(const std::string &name) {
  std::string symbol;
  for (char c : name)
    symbol += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  const bool usable =
      !symbol.empty() && !std::isdigit(static_cast<unsigned char>(symbol[0])) &&
      symbol != "_" && symbol.rfind("blocc_", 0) != 0 && symbol != "vprintf";
  return usable ? symbol : "blocc_kernel_" + symbol;
}

void check_options(const ir::Function &function, const CompileOptions &o) {
  if (o.num_warps < 1 || o.num_warps > 32 || (o.num_warps & (o.num_warps - 1)))
    throw Error("kernel '" + function.name() +
                "': num_warps must be a power of two from 1 to 32 on the "
                "GPU, got " +
                std::to_string(o.num_warps));
  if (o.num_stages < 1 || o.num_stages > 8)
    throw Error("kernel '" + function.name() +
                "': num_stages must be from 1 to 8 on the GPU, got " +
                std::to_string(o.num_stages));
}

struct Generated {
  std::unique_ptr<ir::Function> gpu_ir; // what was lowered (gpu_ir.h)
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
  int64_t dynamic_shared_bytes = 0; // what each launch must request
  int cta_warps = 0;                // warps a CTA runs
  std::vector<FaultSite> faults;
  std::vector<cuda::TensorMapRequest> tensor_maps; // its TMA copies'
};

/// `function` at the GPU level of the IR: a copy that the GPU passes have
/// annotated, with loops of at most `num_stages` stages; or a copy as it
/// is where it is GPU IR already (blocc-opt reading a pass's output), given
/// the layouts that follow from its decisions where it has none, its dots'
/// operands in tiles (gpu-stage-dot-operands) and its conversions through
/// shared memory split (gpu-stage-conversions), so
/// that the lowering reads every layout, and every value in shared memory,
/// from the IR.
std::unique_ptr<ir::Function> to_gpu_ir(const ir::Function &function,
                                        const CompileOptions &o,
                                        int num_stages) {
  std::unique_ptr<ir::Function> gpu = ir::clone(function);
  GpuPassOptions options{o.num_warps, num_stages, o.arch};
  if (!is_gpu_ir(function)) {
    run_gpu_pipeline(*gpu, options);
    return gpu;
  }
  if (!carries_layouts(*gpu)) {
    // Descriptor accesses become ops that need layouts: only IR that has
    // none yet can have them rewritten.
    tensor_descriptors(*gpu, options);
    assign_layouts(*gpu, options);
  }
  if (!carries_explicit_layouts(*gpu)) {
    make_conversions_explicit(*gpu, options);
    remove_conversions(*gpu, options);
  }
  // Neither pass changes what is staged already.
  stage_dot_operands(*gpu, options);
  stage_conversions(*gpu, options);
  return gpu;
}

/// Whether the GPU IR puts a dot of fp8 inputs on tensor cores: its PTX
/// then issues fp8 MMAs, which need a newer PTX version.
bool issues_fp8_mma(const ir::Function &gpu_ir) {
  bool fp8 = false;
  gpu_ir.walk([&](const ir::Operation &op) {
    fp8 = fp8 || (runs_on_tensor_cores(op) &&
                  ir::is_fp8(op.operand(0)->type().element()));
  });
  return fp8;
}

Generated lower(std::unique_ptr<ir::Function> gpu_ir, const CompileOptions &o) {
  Generated g;
  g.gpu_ir = std::move(gpu_ir);
  g.context = std::make_unique<llvm::LLVMContext>();
  g.module =
      std::make_unique<llvm::Module>("blocc." + g.gpu_ir->name(), *g.context);
  g.machine = make_target_machine(o.arch, issues_fp8_mma(*g.gpu_ir));
  prepare_module(*g.module, *g.machine);
  KernelLowering lowering(*g.gpu_ir, *g.module, o.num_warps, o.arch);
  lowering.lower(symbol_for(g.gpu_ir->name()));
  g.dynamic_shared_bytes = lowering.dynamic_shared_bytes();
  g.cta_warps = cta_warps(*g.gpu_ir, o.num_warps);
  g.faults = lowering.fault_sites();
  g.tensor_maps = lowering.tensor_maps();
  return g;
}

/// The most stages any loop of `gpu_ir` runs in (1: none pipelined).
int most_stages(const ir::Function &gpu_ir) {
  int most = 1;
  gpu_ir.walk([&](const ir::Operation &op) {
    if (op.code() == ir::OpCode::For)
      most = std::max(most, loop_stages(op));
  });
  return most;
}

Generated generate(const ir::Function &function, const CompileOptions &o) {
  check_options(function, o);
  // Pipelined loops keep their stages in shared memory; where that leaves
  // too little for the kernel's other users, the loops get one stage fewer
  // until it fits, down to no pipelining — unless the IR chose its stages
  // itself.
  // The next try starts below the stages the loops were given, which the
  // stage budget may have cut below those asked for: asking again for as
  // many would lower the same IR again.
  for (int stages = o.num_stages;;) {
    std::unique_ptr<ir::Function> gpu_ir = to_gpu_ir(function, o, stages);
    const int given = most_stages(*gpu_ir);
    try {
      return lower(std::move(gpu_ir), o);
    } catch (const SharedMemoryExhausted &) {
      if (given <= 1 || is_gpu_ir(function))
        throw;
      stages = given - 1;
    }
  }
}

runtime::cpu::CompileCache<CompiledKernel> &cache() {
  static runtime::cpu::CompileCache<CompiledKernel> c;
  return c;
}

std::string kind_name(KernelArg::Kind kind) {
  switch (kind) {
  case KernelArg::Kind::Pointer:
    return "a pointer";
  case KernelArg::Kind::Int:
    return "an integer";
  default:
    return "a float";
  }
}

} // namespace

/// The compiled form of `function`, from the cache keyed by its IR text.
static std::shared_ptr<const CompiledKernel>
compile_by_text(const ir::Function &function, const CompileOptions &options);

/// The launch fast path: a Function compiled before with these options
/// (kernel launches pass the same specialization every time) skips
/// printing its IR for the cache key. Keyed by numbers only: no string is
/// made on the way.
struct Seen {
  std::mutex mutex;
  std::map<std::tuple<uint64_t, int, bool, int, int>,
           std::shared_ptr<const CompiledKernel>>
      kernels;
};
static Seen &seen() {
  static Seen s;
  return s;
}

std::shared_ptr<const CompiledKernel> compile(const ir::Function &function,
                                              const CompileOptions &options) {
  Seen &s = seen();
  auto seen_key = std::make_tuple(function.unique_id(), options.arch.sm,
                                  options.arch.arch_specific, options.num_warps,
                                  options.num_stages);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.kernels.find(seen_key);
    if (it != s.kernels.end())
      return it->second;
  }
  std::shared_ptr<const CompiledKernel> kernel =
      compile_by_text(function, options);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.kernels.emplace(seen_key, kernel);
  return kernel;
}

static std::shared_ptr<const CompiledKernel>
compile_by_text(const ir::Function &function, const CompileOptions &options) {
  check_options(function, options);
  std::string key = std::string(kCompilerVersion) + "\n" + options.arch.name() +
                    " warps=" + std::to_string(options.num_warps) +
                    " stages=" + std::to_string(options.num_stages) + "\n" +
                    ir::print(function);
  return cache().get(key, [&] {
    // Lowered either way: the launch needs its dynamic shared memory and
    // fault sites, which the disk cache does not hold (ptx_disk_cache.h).
    Generated g = generate(function, options);
    std::optional<std::string> cached = load_cached_ptx(key);
    std::string ptx =
        cached ? std::move(*cached) : emit_ptx(*g.module, *g.machine);
    if (!cached) {
      ++llvm_compile_count;
      store_cached_ptx(key, ptx);
    }
    // Where BLOCC_PTXAS names an assembler, its cubin (kept on disk too).
    std::string cubin;
    if (const std::optional<cuda::PtxAssembler> &assembler =
            cuda::ptx_assembler())
      cubin = cached_cubin(*assembler, key, ptx,
                           "kernel '" + function.name() + "'");
    std::vector<ParameterKind> parameters;
    for (size_t i = 0; i < function.num_arguments(); ++i)
      parameters.push_back(parameter_kind(function.argument(i)->type()));
    ++compiled_count;
    auto kernel = std::make_shared<CompiledKernel>(
        function.name(), std::move(ptx), symbol_for(function.name()),
        std::move(parameters), g.cta_warps, g.dynamic_shared_bytes,
        std::move(g.faults), std::move(cubin));
    kernel->tensor_maps = std::move(g.tensor_maps);
    return std::shared_ptr<const CompiledKernel>(std::move(kernel));
  });
}

const std::string &ptx_of(const CompiledKernel &kernel) {
  return kernel.loaded.ptx();
}

const std::string &ptx_entry(const CompiledKernel &kernel) {
  return kernel.loaded.symbol();
}

int64_t dynamic_shared_bytes(const CompiledKernel &kernel) {
  return kernel.loaded.dynamic_shared_bytes();
}

PtxCode compile_ptx(const ir::Function &function,
                    const CompileOptions &options) {
  Generated g = generate(function, options);
  PtxCode code;
  code.ptx = emit_ptx(*g.module, *g.machine);
  code.entry = symbol_for(function.name());
  code.dynamic_shared_bytes = g.dynamic_shared_bytes;
  code.cta_warps = g.cta_warps;
  code.faults = std::move(g.faults);
  code.tensor_maps = std::move(g.tensor_maps);
  return code;
}

std::string llvm_ir(const ir::Function &function, const CompileOptions &options,
                    bool optimized) {
  Generated g = generate(function, options);
  if (optimized)
    optimize_for_gpu(*g.module, *g.machine);
  else
    llvm_backend::verify_module(*g.module);
  std::string text;
  llvm::raw_string_ostream os(text);
  g.module->print(os, nullptr);
  return os.str();
}

Inspection inspect(const ir::Function &function, const CompileOptions &options,
                   const InspectionRequest &request) {
  Inspection inspection;
  // One lowering for every stage: the layouts printed are those of the GPU
  // IR lowered, and the PTX is generated from the LLVM IR printed.
  Generated g = generate(function, options);
  if (request.layouts)
    inspection.layouts =
        print_layouts(*g.gpu_ir, options.num_warps, options.arch);
  if (!request.llvm_ir && !request.ptx)
    return inspection;
  optimize_for_gpu(*g.module, *g.machine);
  if (request.llvm_ir) {
    llvm::raw_string_ostream os(inspection.llvm_ir);
    g.module->print(os, nullptr);
  }
  if (request.ptx)
    inspection.ptx = emit_optimized_ptx(*g.module, *g.machine);
  return inspection;
}

namespace {

/// Argument `i` of a launch of kernel `name` in its parameter `slot` (8
/// bytes; a 32-bit value in the low ones). The first device pointer's
/// context goes to `context` where that is still null.
void pack_argument(const std::string &name, size_t i, ParameterKind kind,
                   const KernelArg &a, uint64_t &slot,
                   cuda::driver::CUcontext &context) {
  bool want_pointer = kind == ParameterKind::Pointer;
  if (want_pointer != (a.kind == KernelArg::Kind::Pointer))
    throw Error("kernel '" + name + "': runtime argument " + std::to_string(i) +
                " takes " + (want_pointer ? "a pointer" : "a number") +
                ", got " + kind_name(a.kind));
  slot = 0; // the upper bytes of a 32-bit value
  switch (kind) {
  case ParameterKind::Pointer:
    if (a.device < 0)
      throw Error("kernel '" + name + "': runtime argument " +
                  std::to_string(i) +
                  " points to host memory, which a GPU kernel cannot "
                  "read; pass a blocc::DeviceBuffer");
    slot = reinterpret_cast<uintptr_t>(a.pointer);
    // A DeviceBuffer knows its context; other device memory (Python's
    // arrays) is looked up.
    if (!context && a.pointer)
      context = a.context ? static_cast<cuda::driver::CUcontext>(a.context)
                          : cuda::context_of_pointer(slot, name);
    break;
  case ParameterKind::Int32:
  case ParameterKind::Int64: {
    int64_t v = a.kind == KernelArg::Kind::Int
                    ? a.int_value
                    : static_cast<int64_t>(a.float_value);
    if (kind == ParameterKind::Int32) {
      uint32_t word = static_cast<uint32_t>(v);
      std::memcpy(&slot, &word, sizeof word);
    } else {
      std::memcpy(&slot, &v, sizeof v);
    }
    break;
  }
  case ParameterKind::Float32: {
    float f = static_cast<float>(a.kind == KernelArg::Kind::Float
                                     ? a.float_value
                                     : static_cast<double>(a.int_value));
    std::memcpy(&slot, &f, sizeof f);
    break;
  }
  case ParameterKind::Float64: {
    double d = a.kind == KernelArg::Kind::Float
                   ? a.float_value
                   : static_cast<double>(a.int_value);
    std::memcpy(&slot, &d, sizeof d);
    break;
  }
  }
}

/// The context a launch runs in: its buffers' (`context`), which the
/// stream must share, else the stream's, else the current device's
/// primary context.
cuda::driver::CUcontext launch_context(const std::string &name,
                                       cuda::driver::CUcontext context,
                                       cuda::driver::CUstream stream) {
  cuda::driver::CUcontext stream_context =
      stream ? cuda::context_of_stream(stream, name) : nullptr;
  if (context && stream_context && stream_context != context)
    throw Error("kernel '" + name +
                "': the stream belongs to another CUDA context than the "
                "kernel's buffers; create the stream in the context the "
                "buffers were allocated in (the device's primary context "
                "unless another was current)");
  if (context)
    return context;
  return stream_context ? stream_context
                        : cuda::context_for_device(cuda::current_device());
}

} // namespace

void run(const CompiledKernel &kernel, const Grid &grid,
         const std::vector<KernelArg> &args, void *stream_handle) {
  const std::string &name = kernel.loaded.name();
  if (args.size() != kernel.parameters.size())
    throw Error("kernel '" + name + "' takes " +
                std::to_string(kernel.parameters.size()) +
                " runtime arguments, got " + std::to_string(args.size()));
  // The parameters' values and their addresses: on the stack for the
  // usual few, so that a launch allocates nothing. Left uninitialized:
  // every slot a launch passes is written below (zeroing both arrays cost
  // more than the rest of the packing). Tensor maps (128 bytes each) do
  // not fit a slot: their addresses follow the user's parameters, their
  // bytes are in buffers of their own.
  constexpr size_t kInline = 16;
  const size_t num_parameters = args.size() + kernel.tensor_maps.size();
  std::array<uint64_t, kInline> inline_slots;
  std::array<void *, kInline> inline_parameters;
  std::vector<uint64_t> heap_slots;
  std::vector<void *> heap_parameters;
  uint64_t *slots = inline_slots.data();
  void **parameters = inline_parameters.data();
  if (num_parameters > kInline) {
    heap_slots.assign(args.size(), 0);
    heap_parameters.assign(num_parameters, nullptr);
    slots = heap_slots.data();
    parameters = heap_parameters.data();
  }
  cuda::driver::CUcontext context = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    pack_argument(name, i, kernel.parameters[i], args[i], slots[i], context);
    parameters[i] = &slots[i];
  }
  // Each 64-byte aligned (CUtensorMap's alignment), as the PTX declares
  // them; empty, and allocating nothing, for kernels without TMA copies.
  std::vector<cuda::driver::CUtensorMap> tensor_maps;
  auto stream = static_cast<cuda::driver::CUstream>(stream_handle);
  context = launch_context(name, context, stream);
  if (!kernel.tensor_maps.empty()) {
    // The driver encodes a map for the current context's device.
    cuda::ContextScope current(context);
    cuda::encode_tensor_map_parameters(kernel.tensor_maps, args, name,
                                       tensor_maps, parameters + args.size());
  }
  cuda::LaunchShape shape;
  shape.grid = {grid.x, grid.y, grid.z};
  shape.threads = 32 * kernel.cta_warps;
  kernel.loaded.launch(context, shape, parameters, stream);
}

namespace {

/// $BLOCC_GPU_ARCH (nullopt: unset or empty), read on first use: the
/// architecture is part of what launches keep per specialization and
/// device, so it may not change while the process runs.
const std::optional<std::string> &arch_setting() {
  static const std::optional<std::string> setting =
      []() -> std::optional<std::string> {
    const char *env = std::getenv("BLOCC_GPU_ARCH");
    if (!env || !*env)
      return std::nullopt;
    return std::string(env);
  }();
  return setting;
}

} // namespace

GpuArch arch_for_device(int ordinal) {
  if (const std::optional<std::string> &setting = arch_setting()) {
    try {
      return GpuArch::parse(*setting);
    } catch (const Error &e) {
      throw Error(std::string("BLOCC_GPU_ARCH: ") + e.what());
    }
  }
  static std::mutex mutex;
  static std::map<int, GpuArch> archs;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = archs.find(ordinal);
  if (it != archs.end())
    return it->second;
  cuda::DeviceProperties p = cuda::properties(ordinal);
  GpuArch arch;
  try {
    arch = GpuArch::for_compute_capability(p.compute_capability);
  } catch (const Error &e) {
    throw Error("GPU " + std::to_string(ordinal) + " (" + p.name +
                "): " + e.what());
  }
  archs.emplace(ordinal, arch);
  return arch;
}

size_t num_compiled_kernels() { return compiled_count.load(); }

CacheCounters cache_counters() {
  PtxDiskCounters disk = ptx_disk_counters();
  return {llvm_compile_count.load(), disk.hits, disk.rejected, disk.writes,
          disk.write_failures};
}

std::shared_ptr<const CompiledKernel> with_tensor_maps_for_testing(
    const CompiledKernel &kernel,
    const std::vector<cuda::TensorMapRequest> &requests) {
  const cuda::LoadedKernel &l = kernel.loaded;
  auto copy = std::make_shared<CompiledKernel>(
      l.name(), l.ptx(), l.symbol(), kernel.parameters, kernel.cta_warps,
      l.dynamic_shared_bytes(), kernel.faults, std::string());
  copy->tensor_maps = requests;
  return copy;
}

static std::atomic<uint64_t> memory_cache_generation_count{0};

uint64_t memory_cache_generation() {
  return memory_cache_generation_count.load(std::memory_order_acquire);
}

void clear_memory_cache_for_testing() {
  memory_cache_generation_count.fetch_add(1, std::memory_order_acq_rel);
  cache().clear();
  Seen &s = seen();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.kernels.clear();
}

} // namespace blocc::nvptx
