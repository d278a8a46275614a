// The generic passes, the printer and the parser on a fixed-seed batch of
// random kernels (see pass_checks.h for what is checked). A failure prints
// the seed and the IR; `blocc-fuzz --seeds 1 --start SEED` reruns it.
#include "pass_checks.h"

#include <gtest/gtest.h>

namespace blocc::differential {
namespace {

constexpr uint64_t kFirstSeed = 1;
constexpr int kKernels = 400;

TEST(PassesDifferentialTest, FixedSeedBatch) {
  int failures = 0;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kKernels; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    CheckResult r = check_passes(kernel);
    if (!r.ok) {
      ADD_FAILURE() << r.report;
      if (++failures == 3)
        return;
    }
  }
}

} // namespace
} // namespace blocc::differential
