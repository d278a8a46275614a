// Random well-typed kernels for differential testing: a seed and a size
// budget give an ir::Function (built with ir::Builder, valid for ir::verify)
// plus what it needs to run: its arguments (buffers with dtype and element
// count, scalar integers) and a grid.
//
// A generated kernel looks like a Triton kernel: program ids and aranges
// make offsets and masks over odd sizes (1, primes, non-multiples of the
// block), masked loads with `other` read the inputs, then random code
// combines them: elementwise arithmetic, comparisons and selects, casts
// among i8/i16/i32/i64/u32/f16/bf16/f32/f64, float math, bitwise ops and
// shifts, broadcasts of 1-D values to 2-D blocks, transposes, reshapes,
// join/split/cat, dot, reductions (sum, max, min, argmax, argmin, xor, or)
// and scans (cumsum, cummax, cummin) along an axis, also with custom
// combines (argmax/argmin through an `if`, integer division and remainder
// by constants, three operands; scans of several operands), `for` loops
// (counting up or down, zero-trip, trip counts from arguments or the
// program id) with loop-carried values (including pointers advanced each
// iteration), and `if` with results; a quarter of the kernels also see
// infinities and NaNs. Forms aimed at the passes are mixed in: identities
// canonicalize rewrites and repeated ops cse merges. Results are stored to
// output buffers so that every output element is written by exactly one
// program instance or left as it was (no races between programs).
//
// Every op is admitted only if value_facts.h shows that two correct
// executors must agree on its result (to within a tolerance the facts
// give): no division by zero on any lane, shift amounts inside the width,
// no float comparison or truncation of a value rounding could change, no
// log of a value near 0, magnitudes far from overflow. So a mismatch
// between executors is a bug in one of them, never in the kernel.
#pragma once

#include "ir/function.h"
#include "runtime/kernel_args.h"
#include "value_facts.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blocc::differential {

struct BufferSpec {
  ir::Scalar dtype = ir::Scalar::F32;
  int64_t elements = 0;
  bool is_output = false;
  /// Inputs: the values random data is drawn from (floats: multiples of
  /// 2^quantum in [lo, hi], exact in dtype; integers: [lo, hi]). Outputs:
  /// what every element the kernel writes holds, with the error a correct
  /// executor may make.
  ValueFacts values;
  /// Outputs: every element is written (no data-dependent store mask).
  bool fully_written = false;
};

struct ArgumentSpec {
  enum class Kind { Buffer, Int };
  Kind kind = Kind::Int;
  std::string name;
  BufferSpec buffer; // Kind::Buffer
  int64_t value = 0; // Kind::Int: the value to pass
};

struct GeneratedKernel {
  uint64_t seed = 0;
  std::unique_ptr<ir::Function> function;
  /// One per function argument, in order.
  std::vector<ArgumentSpec> arguments;
  Grid grid;
};

struct GeneratorOptions {
  /// How many random actions (an elementwise op, a cast, a reduction, a
  /// loop, ...) the kernel body gets; loops and ifs spend part of it on
  /// their regions.
  int size = 12;
  /// Whether some kernels (a quarter) get infinities and NaNs in their
  /// float inputs and constants.
  bool special_values = true;
  /// Which features kernels may use, by the generation that added them:
  /// 1, the first; 2, atomics (add, max, min, and, or, xor of integers into
  /// a few slots every program and lane shares); 3, three-dimensional
  /// blocks over a three-dimensional grid; 4, matmul loops (a tile of A
  /// times B accumulated by dots over K in steps with a masked tail); 5,
  /// tensor-core tiles (some two-dimensional kernels get 16 or 32 x 8 to
  /// 64 blocks, whose matmul loops take f16 and bf16 more often, in steps
  /// of 16 or 32 along K: the shapes dots run on tensor cores in); 6,
  /// int8 tensor-core tiles too (32 or 64 along K, into int32). A
  /// new generation changes the kernels of many seeds, so a recorded seed
  /// (the regression batch) keeps the generation it was found in; an older
  /// generation gives the kernels it always gave.
  int generation = 1;
};

/// The newest generation (GeneratorOptions::generation).
inline constexpr int kLatestGeneration = 6;

/// The same seed and options give the same kernel on every machine.
GeneratedKernel generate_kernel(uint64_t seed,
                                const GeneratorOptions &options = {});

} // namespace blocc::differential
