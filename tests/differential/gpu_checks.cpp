#include "gpu_checks.h"

#include "executors.h"
#include "float64_reference.h"
#include "ir/printer.h"

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "tests/nvptx/ptxas.h"
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace blocc::differential {

std::string ptx_check_unavailable_reason() {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  return "";
#else
  return "blocc is built without the GPU backend (BLOCC_NVPTX_BACKEND=OFF)";
#endif
}

bool ptxas_present() {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  return gpu_testing::ptxas().has_value();
#else
  return false;
#endif
}

std::string PtxCheck::report(const GeneratedKernel &kernel,
                             int num_warps) const {
  std::string text = "kernel seed " + std::to_string(kernel.seed) +
                     ", num_warps " + std::to_string(num_warps) + ": ";
  if (!compile_error.empty())
    text += "the GPU backend cannot compile it: " + compile_error + "\n";
  else
    text += ptxas_error + "\n";
  return text + "kernel:\n" + ir::print(*kernel.function);
}

PtxCheck check_ptx([[maybe_unused]] const GeneratedKernel &kernel,
                   [[maybe_unused]] int num_warps) {
  PtxCheck check;
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  try {
    check.ptxas_error =
        gpu_testing::ptx_assembly_errors(*kernel.function, num_warps);
  } catch (const std::exception &e) {
    check.compile_error = e.what();
  }
#else
  check.compile_error = ptx_check_unavailable_reason();
#endif
  return check;
}

std::vector<PtxCheck> check_ptx_of_seeds(uint64_t first, uint64_t count) {
  // Kernels are generated here, one thread, and only compiled and
  // assembled on the workers (the GPU backend's compile is thread-safe).
  std::vector<GeneratedKernel> kernels;
  kernels.reserve(count);
  for (uint64_t seed = first; seed < first + count; ++seed)
    kernels.push_back(generate_kernel(seed));
  std::vector<PtxCheck> checks(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++)
      checks[i] = check_ptx(kernels[i], num_warps_for_seed(first + i));
  };
  unsigned threads = std::clamp(std::thread::hardware_concurrency(), 2u, 16u);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back(work);
  for (std::thread &worker : workers)
    worker.join();
  return checks;
}

std::string check_on_gpu(const GeneratedKernel &kernel, const Executor &cpu) {
  int num_warps = num_warps_for_seed(kernel.seed);
  std::optional<Executor> gpu = gpu_backend_executor(num_warps);
  if (!gpu)
    return gpu_unavailable_reason();
  CompareOptions options;
  options.name_a = "gpu (num_warps " + std::to_string(num_warps) + ")";
  options.name_b = "cpu";
  DifferentialResult r = compare_runs(kernel, *gpu, cpu, options);
  if (!r.ok)
    return r.report;
  std::string report = check_against_float64(kernel, *gpu, kernel.seed);
  return report.empty() ? "" : options.name_a + ": " + report;
}

} // namespace blocc::differential
