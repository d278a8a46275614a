// The CPU backend against the reference interpreter on the fixed-seed
// batch of random kernels: integers exactly, floats within the tolerance
// the generator derives for each output (see differential.h). A failure
// prints both values, the seeds and the IR; `blocc-fuzz --backend cpu
// --seeds 1 --start SEED` reruns it, and a longer range hunts for more.
#include "executors.h"
#include "fixed_batch.h"

#include <gtest/gtest.h>

namespace blocc::differential {
namespace {

TEST(BackendDifferentialTest, CpuBackendMatchesTheInterpreter) {
  std::optional<Executor> cpu = cpu_backend_executor();
  if (!cpu)
    GTEST_SKIP() << "blocc is built without the CPU backend "
                    "(BLOCC_CPU_BACKEND=OFF)";
  int failures = 0;
  for (uint64_t seed = kFixedBatchFirstSeed;
       seed < kFixedBatchFirstSeed + kFixedBatchKernels; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    CompareOptions options;
    options.name_a = "interpreter";
    options.name_b = "cpu";
    DifferentialResult r =
        compare_runs(kernel, interpreter_executor(), *cpu, options);
    if (!r.ok) {
      ADD_FAILURE() << r.report;
      if (++failures == 3)
        return;
    }
  }
}

} // namespace
} // namespace blocc::differential
