// The GPU backend on the fixed-seed batch of random kernels, each with 1,
// 2, 4 or 8 warps per program (num_warps_for_seed):
//  - every kernel compiles for sm_80 and sm_90, and ptxas (where it is on
//    PATH) assembles both; no GPU needed, so a kernel the backend cannot
//    lower or PTX the driver would reject fails on any machine;
//  - where a GPU is present, its results equal the CPU backend's (integers
//    and exact floats bit for bit, other floats within the tolerance the
//    generator derives, as the CPU backend against the interpreter) and lie
//    within the float64 reference's bounds. Skipped, with the reason, where
//    no GPU is present.
// Every failing kernel is counted: the first few are printed in full (seeds,
// values, IR), then the seeds of all. `blocc-fuzz --backend gpu --seeds 1
// --start SEED` (or --backend ptx) reruns one.
#include "executors.h"
#include "fixed_batch.h"
#include "gpu_checks.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace blocc::differential {
namespace {

constexpr int kReportsInFull = 3;

/// Failing kernels of a batch: the first few reported in full, all counted.
class Failures {
public:
  void add(uint64_t seed, const std::string &report) {
    if (seeds_.size() < kReportsInFull)
      ADD_FAILURE() << report;
    seeds_.push_back(seed);
  }
  void summarize(const char *what) const {
    if (seeds_.empty())
      return;
    std::string list;
    for (uint64_t seed : seeds_)
      list += " " + std::to_string(seed);
    ADD_FAILURE() << seeds_.size() << " of " << kFixedBatchKernels
                  << " kernels " << what << "; seeds:" << list;
  }

private:
  std::vector<uint64_t> seeds_;
};

TEST(GpuBackendDifferentialTest, EveryKernelCompilesAndPtxasAcceptsIt) {
  std::string unavailable = ptx_check_unavailable_reason();
  if (!unavailable.empty())
    GTEST_SKIP() << unavailable;
  if (!ptxas_present())
    std::cout << "ptxas is not on PATH: the kernels are compiled to PTX, "
                 "not assembled\n";
  // Kernels the backend cannot lower, by its message (which names the op).
  std::map<std::string, std::vector<uint64_t>> unsupported;
  Failures rejected_by_ptxas;
  std::vector<PtxCheck> checks =
      check_ptx_of_seeds(kFixedBatchFirstSeed, kFixedBatchKernels);
  for (uint64_t i = 0; i < checks.size(); ++i) {
    uint64_t seed = kFixedBatchFirstSeed + i;
    if (!checks[i].compile_error.empty())
      unsupported[checks[i].compile_error].push_back(seed);
    else if (!checks[i].ok())
      rejected_by_ptxas.add(seed, checks[i].report(generate_kernel(seed),
                                                   num_warps_for_seed(seed)));
  }
  for (const auto &[message, seeds] : unsupported) {
    std::string list;
    for (uint64_t seed : seeds)
      list += " " + std::to_string(seed);
    ADD_FAILURE() << "the GPU backend cannot compile " << seeds.size()
                  << " kernels of the batch: " << message << "\nseeds:" << list;
  }
  rejected_by_ptxas.summarize("were rejected by ptxas");
}

TEST(GpuBackendDifferentialTest, GpuMatchesTheCpuBackend) {
  std::string unavailable = gpu_unavailable_reason();
  if (!unavailable.empty())
    GTEST_SKIP() << unavailable;
  std::optional<Executor> cpu = cpu_backend_executor();
  ASSERT_TRUE(cpu) << "the GPU backend is built only with the CPU backend";
  Failures failures;
  for (uint64_t seed = kFixedBatchFirstSeed;
       seed < kFixedBatchFirstSeed + kFixedBatchKernels; ++seed) {
    GeneratedKernel kernel = generate_kernel(seed);
    std::string report = check_on_gpu(kernel, *cpu);
    if (!report.empty())
      failures.add(seed, report);
  }
  failures.summarize("differ on the GPU");
}

} // namespace
} // namespace blocc::differential
