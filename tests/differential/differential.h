// The differential harness: runs one generated kernel on two executors
// with the same fresh inputs and compares what they wrote.
//
// An executor is any callable that runs a function over a grid on the
// given arguments: the reference interpreter, the CPU backend, or the
// interpreter running a transformed copy of the function (to test a pass).
// See executors.h for the ones available.
#pragma once

#include "kernel_generator.h"
#include "kernel_memory.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace blocc::differential {

using Executor =
    std::function<void(const ir::Function &, Grid, std::vector<KernelArg> &)>;

enum class Comparison {
  /// Every element bit for bit (any NaN equals any NaN): for two runs that
  /// must do the same arithmetic, such as a function before and after a
  /// pass that must not change rounding.
  Bitwise,
  /// Integers exactly; floats exactly where the kernel's facts say every
  /// correct executor computes the exact value (-0 equal to +0), else
  /// within twice the facts' error bound plus a few ulps of the dtype.
  Tolerance,
};

struct CompareOptions {
  Comparison comparison = Comparison::Tolerance;
  /// Seeds the input data; the kernel's seed when not given.
  std::optional<uint64_t> input_seed;
  /// Names of the two executors, for the report.
  std::string name_a = "a", name_b = "b";
  /// Also checks that the outputs of run a lie within the ranges the
  /// generator derived, and that it wrote every element of the outputs the
  /// generator says are fully written (a check of the generator and of
  /// executor a).
  bool check_ranges = true;
};

struct DifferentialResult {
  bool ok = true;
  /// When not ok: what differed (buffer, element, both values, the
  /// tolerance), the seeds, and the kernel's printed IR.
  std::string report;
};

/// Makes fresh random inputs for the kernel's buffers, poisons its outputs,
/// runs `run_a` and `run_b` on separate copies, and compares the outputs.
/// An executor that throws, or writes into an input buffer, is a mismatch.
DifferentialResult compare_runs(const GeneratedKernel &kernel,
                                const Executor &run_a, const Executor &run_b,
                                const CompareOptions &options = {});

/// How far a float output element may be from `reference` under
/// Comparison::Tolerance, given what the generator knows of the value.
double float_tolerance(ir::Scalar s, const ValueFacts &facts, double reference);

} // namespace blocc::differential
