// A check of the generator's error bounds, and so of the tolerances the
// differential comparisons use: the kernel is run once as generated and
// once with every f16, bf16 and f32 value (buffers included) widened to
// f64, on the same input values. The wide run is a near-exact reference:
// every float output of the generated kernel must lie within the error
// its facts claim of it (and equal it where they claim exactness), and
// every integer output must equal it (integers depend on floats only
// through exact values).
#pragma once

#include "differential.h"

#include <string>

namespace blocc::differential {

/// "" when the outputs of `run` (the interpreter by default) are within
/// the facts of the float64 reference, else a report with the seed, the
/// element, both values and the IR. Kernels that reinterpret float bits
/// (bitcast) have no wide twin and pass.
std::string check_against_float64(const GeneratedKernel &kernel,
                                  const Executor &run, uint64_t input_seed);

} // namespace blocc::differential
