// The CPU backend's entry points, free of LLVM types (the JIT and the
// runtime include this header; only backends/ include LLVM).
//
//   auto kernel = blocc::cpu::compile(function);   // cached
//   blocc::cpu::run(*kernel, grid, args);
//
// compile lowers the block IR to LLVM IR (kernel_lowering.h), optimizes it
// at -O3 for the host CPU and JIT-compiles it; run executes the grid with
// OpenMP (runtime/cpu). Both are thread-safe.
#pragma once

#include "ir/function.h"
#include "runtime/cpu/program_sites.h"
#include "runtime/kernel_args.h"

#include <memory>
#include <string>
#include <vector>

namespace blocc::cpu {

/// A kernel specialization compiled for this machine (opaque).
class CompiledKernel;

struct CompileOptions {
  /// Checked mode (BLOCC_CHECK, lower_checks.cpp): every active lane of
  /// every load, store and atomic is checked against the buffer of the
  /// argument its pointer derives from before it touches memory, and a
  /// failing access stops its program with the interpreter's message.
  /// Arguments passed as raw pointers (unknown extent) are checked only
  /// for null and misaligned addresses. A checked kernel is a separate
  /// specialization (cache key); unchecked code is unaffected.
  bool check_bounds = false;
  /// Bounds checks, and a store by one program of a value different from
  /// what another program of the launch stored at that address is
  /// reported as a write race (runtime/cpu/write_race_detector.h).
  bool detect_races = false;
};

/// The compiled form of `function`, from the in-memory cache when the same
/// IR was compiled before for this machine by this version of blocc, else
/// from the disk cache (runtime/cpu/disk_cache.h; $BLOCC_CACHE_DIR, default
/// $XDG_CACHE_HOME/blocc or ~/.cache/blocc, `off` turns it off) when an
/// earlier process compiled it, else compiled now and stored there (which
/// may evict the least recently used entries: $BLOCC_CACHE_MAX_SIZE, 1 GiB
/// by default). Throws blocc::Error naming the op for IR the backend cannot
/// compile, and naming the variable for a malformed BLOCC_CACHE_MAX_SIZE.
std::shared_ptr<const CompiledKernel>
compile(const ir::Function &function, const CompileOptions &options = {});

/// Runs `kernel` for every program id of `grid` on the host's cores. `args`
/// bind to the function's arguments in order, as for the interpreter
/// (backends/interpreter/interpreter.h). Throws blocc::Error for arguments
/// that do not match and, naming the kernel, program and op, for runtime
/// faults (integer division by zero, a failed assert, a zero loop step;
/// checked kernels: out-of-bounds, null and misaligned accesses, write
/// races). Programs that ran before the failing one keep their effects.
void run(const CompiledKernel &kernel, Grid grid,
         const std::vector<KernelArg> &args);

struct LlvmIrOptions {
  /// After the -O3 pipeline (true) or as the lowering emits it.
  bool optimized = true;
  /// Lower for vectors of this many bits instead of the host's (golden
  /// tests pin it so that their output does not depend on the machine).
  int vector_bits = 0;
  /// The checked variant (CompileOptions).
  bool check_bounds = false;
  bool detect_races = false;
};

/// The LLVM IR the backend generates for `function`.
std::string llvm_ir(const ir::Function &function,
                    const LlvmIrOptions &options = {});

/// Inspection (BLOCC_DUMP, blocc::Stage): the text of the stages asked
/// for, compiled now for this machine exactly as compile() compiles them
/// (the same lowering, -O3 and target machine; the function named as the
/// JIT names it, "<kernel>.blocc").
struct InspectionRequest {
  bool llvm_ir = false;  ///< the LLVM IR after -O3
  bool assembly = false; ///< the x86 assembly the JIT would link
  /// The checked variant (CompileOptions).
  bool check_bounds = false;
  bool detect_races = false;
};
struct Inspection {
  std::string llvm_ir, assembly; ///< "" where not asked for
};
/// Throws blocc::Error naming the op for IR the backend cannot compile.
Inspection inspect(const ir::Function &function,
                   const InspectionRequest &request);

/// Ahead-of-time compilation (tools/blocc-compile): `function` as an
/// object file that a program links and runs with the runtime alone
/// (runtime/aot), without LLVM.
struct ObjectOptions {
  /// The x86 CPU to compile for: "native" (this machine's CPU with all its
  /// features, like the JIT), or a CPU LLVM knows: "x86-64-v3" (AVX2 and
  /// FMA, any x86 since 2013-2015), "x86-64-v4" or "skylake-avx512"
  /// (AVX-512), "znver4", ...
  std::string cpu = "native";
  /// The name of the program's function (C linkage, the ProgramFunction of
  /// runtime/cpu/program_abi.h); nothing else in the object is global.
  std::string symbol;
};

struct ObjectCode {
  std::string object; ///< an ELF relocatable object, position-independent
  /// The fault and print sites the code reports (their hooks are the
  /// runtime's), and the per-thread scratch memory a program needs.
  runtime::cpu::ProgramSites sites;
  size_t scratch_bytes = 0;
  std::string target;                ///< "x86_64-... znver4 (512-bit vectors)"
  std::vector<std::string> features; ///< the CPU features the code may use
};

/// Compiles `function` (unchecked, -O3) for options.cpu. Throws
/// blocc::Error naming the op for IR the backend cannot compile, and naming
/// the CPU when LLVM does not know it.
ObjectCode compile_object(const ir::Function &function,
                          const ObjectOptions &options);

/// Number of distinct kernels in the in-memory cache (compiled, or loaded
/// from the disk cache, by this process).
size_t num_compiled_kernels();

/// What the compile caches did in this process (for tests and tools).
struct CacheCounters {
  size_t jit_compiles = 0;  // kernels compiled to machine code
  size_t disk_hits = 0;     // kernels loaded from the disk cache instead
  size_t disk_rejected = 0; // entries that failed verification (recompiled)
  size_t disk_writes = 0;   // entries written
  size_t disk_write_failures = 0; // entries that could not be written
};
CacheCounters cache_counters();

/// The disk cache directory compiles use now, or "" when it is off or
/// unusable (why is written to stderr once).
std::string disk_cache_directory();

/// Removes every entry of the disk cache the environment selects now;
/// returns how many (0 when it is off). Kernels already loaded stay usable.
size_t clear_disk_cache();

/// Test hook: forgets the in-memory cache, so that the next compile of a
/// kernel behaves as in a fresh process (kernels handed out stay valid).
void clear_memory_cache_for_testing();

/// "x86_64-pc-linux-gnu skylake-avx512 (512-bit vectors)"
std::string target_description();

} // namespace blocc::cpu
