// The generic passes, the printer and the parser on a fixed-seed batch of
// random kernels (see pass_checks.h for what is checked). A failure prints
// the seed and the IR; `blocc-fuzz --seeds 1 --start SEED` reruns it.
#include "fixed_batch.h"
#include "pass_checks.h"

#include <gtest/gtest.h>

namespace blocc::differential {
namespace {

TEST(PassesDifferentialTest, FixedSeedBatch) {
  int failures = 0;
  for (uint64_t seed = kFixedBatchFirstSeed;
       seed < kFixedBatchFirstSeed + kFixedBatchKernels; ++seed) {
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
