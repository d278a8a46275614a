// The regression batch (regression_batch.h): every kernel that ever failed,
// checked on every executor present. Where blocc has no GPU backend or no
// GPU, the checks that need one are left out, not the kernels.
#include "executors.h"
#include "fuzz_check.h"
#include "regression_batch.h"

#include <gtest/gtest.h>

namespace blocc::differential {
namespace {

Executors executors_present() {
  Executors e;
  e.cpu = executors_unavailable_reason({.cpu = true}).empty();
  e.ptx = executors_unavailable_reason({.ptx = true}).empty();
  // The GPU's reason covers the CPU backend its results are compared with.
  e.gpu = executors_unavailable_reason({.gpu = true}).empty();
  return e;
}

TEST(RegressionBatch, EveryKernelThatEverFailedPassesOnEveryExecutorPresent) {
  Executors executors = executors_present();
  std::cout << "executors: interpreter" << (executors.cpu ? ", cpu" : "")
            << (executors.ptx ? ", ptx" : "") << (executors.gpu ? ", gpu" : "")
            << "\n";
  for (const RegressionKernel &entry : kRegressionBatch) {
    FuzzKernel what{entry.size, entry.generation};
    GeneratedKernel kernel = generate_fuzz_kernel(entry.seed, what);
    std::string report = check_kernel(kernel, executors);
    EXPECT_EQ(report, "") << "seed " << entry.seed << " (found: " << entry.found
                          << ")\nreproduce: "
                          << reproduce_command(entry.seed, what, executors);
  }
}

} // namespace
} // namespace blocc::differential
