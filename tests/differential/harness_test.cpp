// The harness must catch what it exists to catch: wrong values, missing
// writes, writes into inputs, executors that fail; and must not report
// two runs of the same executor.
#include "differential.h"
#include "executors.h"
#include "host_element.h"
#include "ir/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace blocc::differential {
namespace {

constexpr int kSeeds = 60;

/// The first output element the interpreter wrote that is not a NaN (all
/// NaNs compare equal, so a NaN cannot be corrupted observably).
struct WrittenElement {
  size_t argument;
  int64_t element;
};
std::optional<WrittenElement> first_written(const GeneratedKernel &kernel,
                                            std::vector<KernelArg> &args) {
  for (size_t i = 0; i < kernel.arguments.size(); ++i) {
    const ArgumentSpec &a = kernel.arguments[i];
    if (a.kind != ArgumentSpec::Kind::Buffer || !a.buffer.is_output)
      continue;
    int bytes = element_bytes(a.buffer.dtype);
    auto *p = static_cast<unsigned char *>(args[i].pointer);
    for (int64_t e = 0; e < a.buffer.elements; ++e) {
      bool poison = true;
      for (int b = 0; b < bytes; ++b)
        poison = poison && p[e * bytes + b] == kPoisonByte;
      if (!poison && !is_nan(a.buffer.dtype, p + e * bytes))
        return WrittenElement{i, e};
    }
  }
  return std::nullopt;
}

/// The interpreter, then `corrupt` applied to the first written element.
Executor corrupting(const GeneratedKernel &kernel,
                    std::function<void(ir::Scalar, unsigned char *)> corrupt) {
  return [&kernel, corrupt](const ir::Function &f, Grid grid,
                            std::vector<KernelArg> &args) {
    interpreter_executor()(f, grid, args);
    if (auto w = first_written(kernel, args)) {
      ir::Scalar s = kernel.arguments[w->argument].buffer.dtype;
      auto *p = static_cast<unsigned char *>(args[w->argument].pointer);
      corrupt(s, p + w->element * element_bytes(s));
    }
  };
}

TEST(HarnessTest, TheInterpreterAgreesWithItself) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    DifferentialResult r =
        compare_runs(kernel, interpreter_executor(), interpreter_executor());
    EXPECT_TRUE(r.ok) << r.report;
  }
}

TEST(HarnessTest, ALowBitFlipIsCaughtBitwise) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    Executor flip = corrupting(kernel, [](ir::Scalar, unsigned char *p) {
      p[0] ^= 1; // the last bit of the significand, or of the integer
    });
    CompareOptions options;
    options.comparison = Comparison::Bitwise;
    options.name_b = "corrupted";
    DifferentialResult r =
        compare_runs(kernel, interpreter_executor(), flip, options);
    ASSERT_FALSE(r.ok) << "seed " << seed;
    EXPECT_NE(r.report.find("corrupted = "), std::string::npos) << r.report;
  }
}

TEST(HarnessTest, AWrongValueIsCaughtWithinTolerance) {
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    // Off by far more than any tolerance: 0 becomes 1, small values
    // become 8 of the other sign, larger ones 0 (integers: the low bit).
    Executor wrong = corrupting(kernel, [](ir::Scalar s, unsigned char *p) {
      if (ir::is_float(s)) {
        double v = read_value(s, p);
        write_float(s, v == 0 ? 1 : std::fabs(v) < 8 ? (v < 0 ? 8 : -8) : 0, p);
      } else {
        p[0] ^= 1;
      }
    });
    DifferentialResult r = compare_runs(kernel, interpreter_executor(), wrong);
    EXPECT_FALSE(r.ok) << "seed " << seed;
  }
}

TEST(HarnessTest, AMissingProgramIsCaught) {
  int caught = 0, possible = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    if (kernel.grid.count() < 2)
      continue;
    ++possible;
    Executor lazy = [](const ir::Function &f, Grid grid,
                       std::vector<KernelArg> &args) {
      Grid fewer = grid;
      fewer.x -= 1; // the last column of programs never runs
      interpreter_executor()(f, fewer, args);
    };
    // The missing program's elements stay poisoned (and num_programs
    // changes what the others compute).
    caught += !compare_runs(kernel, interpreter_executor(), lazy).ok;
  }
  // Programs past the end (all lanes masked) may write nothing, but most
  // write their rows of masked outputs or their own chunk of per-program
  // ones.
  EXPECT_GE(caught, possible * 9 / 10) << caught << " of " << possible;
}

TEST(HarnessTest, AnOmissionBothExecutorsShareIsCaught) {
  // Both runs skip the last column of programs: the outputs agree, but
  // elements the kernel always writes stay poisoned.
  Executor lazy = [](const ir::Function &f, Grid grid,
                     std::vector<KernelArg> &args) {
    Grid fewer = grid;
    fewer.x -= 1;
    interpreter_executor()(f, fewer, args);
  };
  int never_written = 0, possible = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    if (kernel.grid.count() < 2)
      continue;
    ++possible;
    // (Values computed from num_programs may also leave their range.)
    DifferentialResult r = compare_runs(kernel, lazy, lazy);
    never_written += r.report.find("never written") != std::string::npos;
  }
  // Caught where a 32- or 64-bit output is written by the last programs.
  EXPECT_GE(never_written, possible / 2) << never_written << " of " << possible;
}

TEST(HarnessTest, AWriteIntoAnInputIsCaught) {
  GeneratedKernel kernel = generate_kernel(3);
  size_t input = 0;
  while (kernel.arguments[input].kind != ArgumentSpec::Kind::Buffer ||
         kernel.arguments[input].buffer.is_output)
    ++input;
  Executor scribbler = [input](const ir::Function &f, Grid grid,
                               std::vector<KernelArg> &args) {
    interpreter_executor()(f, grid, args);
    static_cast<unsigned char *>(args[input].pointer)[0] ^= 0x10;
  };
  CompareOptions options;
  options.name_b = "scribbler";
  DifferentialResult r =
      compare_runs(kernel, interpreter_executor(), scribbler, options);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.report.find("scribbler wrote into input buffer '" +
                          kernel.arguments[input].name + "'"),
            std::string::npos)
      << r.report;
}

TEST(HarnessTest, AFailingExecutorIsReportedWithSeedAndKernel) {
  GeneratedKernel kernel = generate_kernel(5);
  Executor failing = [](const ir::Function &, Grid, std::vector<KernelArg> &) {
    throw Error("cannot compile this");
  };
  CompareOptions options;
  options.name_b = "backend";
  options.input_seed = 77;
  DifferentialResult r =
      compare_runs(kernel, interpreter_executor(), failing, options);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.report.find("backend failed: cannot compile this"),
            std::string::npos)
      << r.report;
  EXPECT_NE(r.report.find("kernel seed 5, input seed 77"), std::string::npos)
      << r.report;
  EXPECT_NE(r.report.find("func @fuzz_5("), std::string::npos) << r.report;
}

TEST(HarnessTest, InputsDependOnTheInputSeed) {
  GeneratedKernel kernel = generate_kernel(11);
  std::vector<std::vector<unsigned char>> seen;
  for (uint64_t input_seed : {1, 2}) {
    Executor capture = [&](const ir::Function &, Grid,
                           std::vector<KernelArg> &args) {
      for (size_t i = 0; i < args.size(); ++i)
        if (args[i].kind == KernelArg::Kind::Pointer &&
            !kernel.arguments[i].buffer.is_output) {
          auto *p = static_cast<unsigned char *>(args[i].pointer);
          seen.emplace_back(p, p + args[i].size_bytes);
          return;
        }
    };
    CompareOptions options;
    options.input_seed = input_seed;
    options.check_ranges = false;
    compare_runs(kernel, capture, capture, options);
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], seen[1]); // both executors see the same inputs
  EXPECT_NE(seen[0], seen[2]); // another seed, other inputs
}

TEST(HarnessTest, ToleranceFollowsTheFacts) {
  ValueFacts exact = ValueFacts::range(-4, 4, -4);
  EXPECT_EQ(float_tolerance(ir::Scalar::F32, exact, 3.0), 0);
  ValueFacts rounded = exact;
  rounded.error = 1e-3;
  // Twice the error (each executor may be off by it, in either direction),
  // plus a few ulps of the format, more for narrow formats and values.
  double f16 = float_tolerance(ir::Scalar::F16, rounded, 3.0);
  double f32 = float_tolerance(ir::Scalar::F32, rounded, 3.0);
  EXPECT_GE(f32, 2e-3);
  EXPECT_LT(f32, 2.001e-3);
  EXPECT_GT(f16, f32);
  EXPECT_LT(f16, 1e-2);
  EXPECT_GT(float_tolerance(ir::Scalar::F16, rounded, 30.0), f16);
}

} // namespace
} // namespace blocc::differential
