// The axis-info analysis (ir/axis_info.h) checked on a generated kernel:
// every fact it derives for the address arithmetic (the offsets and
// results of addptr), the pointers and the masks of loads and stores (the
// values that decide vector widths and contiguous vs gather accesses) must
// hold on the values the interpreter computes, in every program and every
// loop iteration.
#pragma once

#include "kernel_generator.h"

#include <string>

namespace blocc::differential {

/// "" when every fact holds, else the first broken one with the seed and
/// the IR annotated with the analysis.
std::string check_axis_info(const GeneratedKernel &kernel, uint64_t input_seed);

} // namespace blocc::differential
