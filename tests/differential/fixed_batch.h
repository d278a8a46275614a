// The fixed-seed batch every differential test in CI runs: the same
// kernels for the pass checks, the float64 bounds, the coverage promise
// and the CPU backend comparison. blocc-fuzz runs other ranges.
#pragma once

#include <cstdint>

namespace blocc::differential {

constexpr uint64_t kFixedBatchFirstSeed = 1;
constexpr uint64_t kFixedBatchKernels = 500;

} // namespace blocc::differential
