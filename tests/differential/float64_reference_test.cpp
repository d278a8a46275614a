// The generator's error bounds against a float64 reference (see
// float64_reference.h): the tolerances of the differential comparisons
// rest on them.
#include "executors.h"
#include "fixed_batch.h"
#include "float64_reference.h"

#include <gtest/gtest.h>

namespace blocc::differential {
namespace {

TEST(Float64ReferenceTest, InterpreterWithinTheGeneratorsBounds) {
  int failures = 0;
  for (uint64_t seed = kFixedBatchFirstSeed;
       seed < kFixedBatchFirstSeed + kFixedBatchKernels; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    std::string report =
        check_against_float64(kernel, interpreter_executor(), seed);
    if (!report.empty()) {
      ADD_FAILURE() << report;
      if (++failures == 3)
        return;
    }
  }
}

} // namespace
} // namespace blocc::differential
