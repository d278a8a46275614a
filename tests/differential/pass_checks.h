// What the generic passes, the printer and the parser must get right on
// every generated kernel. Used by the fixed-seed batch
// (passes_differential_test.cpp) and by tools/blocc-fuzz.
#pragma once

#include "kernel_generator.h"

#include <string>

namespace blocc::differential {

struct CheckResult {
  bool ok = true;
  /// When not ok: which check failed, the seed, and the IR involved.
  std::string report;
};

/// Checks, in order:
///  (a) ir::verify accepts the kernel;
///  (b) print -> parse -> print gives the same text, and the parsed copy
///      verifies;
///  (c) canonicalize, cse and dce (in that order, as the JIT runs
///      them) each leave IR that verifies and round-trips, and the
///      interpreter computes the same bits before and after them (floats
///      too: none of these passes may change rounding). On a difference
///      the report names the first pass after which the results change;
///  (d) every output element the interpreter writes lies within the range
///      the generator derived for it (a check of the generator's facts);
///  (e) the axis-info facts of the address arithmetic, pointers and masks
///      hold on the values the interpreter computes (axis_info_check.h).
CheckResult check_passes(const GeneratedKernel &kernel);

} // namespace blocc::differential
