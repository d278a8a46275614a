// Every check of one generated kernel, on the executors asked for: what
// blocc-fuzz runs per seed and the regression batch runs per entry.
#pragma once

#include "kernel_generator.h"

#include <cstdint>
#include <string>

namespace blocc::differential {

/// Which executors a kernel is checked on besides the interpreter (which
/// always runs: verify, print/parse, the passes bit for bit, the float64
/// bounds).
struct Executors {
  bool cpu = false; ///< the CPU backend against the interpreter
  bool ptx = false; ///< PTX for sm_80/sm_90, local memory, ptxas
  bool gpu = false; ///< the GPU against the CPU backend and float64
};

/// Why `executors` cannot all run here ("" when they can): a backend not
/// built, or no GPU for `gpu`.
std::string executors_unavailable_reason(const Executors &executors);

/// The size (random actions) of seed `seed`'s kernel when a run spreads
/// its kernels over sizes lo..hi: lo + seed mod (hi - lo + 1), so that a
/// seed alone says its size.
int size_for_seed(uint64_t seed, int lo, int hi);

/// What a fuzzing run generates besides the seed.
struct FuzzKernel {
  int size = GeneratorOptions().size; ///< random actions
  int generation = kLatestGeneration; ///< GeneratorOptions::generation
};

/// The kernel of `seed` with `kernel`'s size and features.
GeneratedKernel generate_fuzz_kernel(uint64_t seed, const FuzzKernel &kernel);

/// "" when `kernel` passes every check on `executors`, else the first
/// failure's report (seeds, values, IR). The GPU runs with
/// num_warps_for_seed(kernel.seed) warps.
std::string check_kernel(const GeneratedKernel &kernel,
                         const Executors &executors);

/// The command line that checks seed `seed` alone on `executors`:
/// "blocc-fuzz --seeds 1 --start S --size K --generation G --backend ...".
std::string reproduce_command(uint64_t seed, const FuzzKernel &kernel,
                              const Executors &executors);

} // namespace blocc::differential
