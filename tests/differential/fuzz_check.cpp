#include "fuzz_check.h"

#include "differential.h"
#include "executors.h"
#include "float64_reference.h"
#include "gpu_checks.h"
#include "pass_checks.h"

namespace blocc::differential {

std::string executors_unavailable_reason(const Executors &executors) {
  if ((executors.cpu || executors.gpu) && !cpu_backend_executor())
    return "blocc is built without the CPU backend (BLOCC_CPU_BACKEND=OFF)";
  if (executors.ptx)
    if (std::string why = ptx_check_unavailable_reason(); !why.empty())
      return why;
  if (executors.gpu)
    return gpu_unavailable_reason();
  return "";
}

int size_for_seed(uint64_t seed, int lo, int hi) {
  return lo + static_cast<int>(seed % static_cast<uint64_t>(hi - lo + 1));
}

GeneratedKernel generate_fuzz_kernel(uint64_t seed, const FuzzKernel &kernel) {
  GeneratorOptions options;
  options.size = kernel.size;
  options.generation = kernel.generation;
  return generate_kernel(seed, options);
}

namespace {

std::string interpreter_against_cpu(const GeneratedKernel &kernel) {
  CompareOptions compare;
  compare.name_a = "interpreter";
  compare.name_b = "cpu";
  DifferentialResult r = compare_runs(kernel, interpreter_executor(),
                                      *cpu_backend_executor(), compare);
  return r.ok ? "" : r.report;
}

std::string ptx_failures(const GeneratedKernel &kernel) {
  int num_warps = num_warps_for_seed(kernel.seed);
  PtxCheck ptx = check_ptx(kernel, num_warps);
  return ptx.ok() ? "" : ptx.report(kernel, num_warps);
}

} // namespace

std::string check_kernel(const GeneratedKernel &kernel,
                         const Executors &executors) {
  std::string report = check_passes(kernel).report;
  if (report.empty())
    report = check_against_float64(kernel, interpreter_executor(), kernel.seed);
  if (report.empty() && executors.cpu)
    report = interpreter_against_cpu(kernel);
  if (report.empty() && executors.ptx)
    report = ptx_failures(kernel);
  if (report.empty() && executors.gpu)
    report = check_on_gpu(kernel, *cpu_backend_executor());
  return report;
}

std::string reproduce_command(uint64_t seed, const FuzzKernel &kernel,
                              const Executors &executors) {
  std::string command = "blocc-fuzz --seeds 1 --start " + std::to_string(seed) +
                        " --size " + std::to_string(kernel.size) +
                        " --generation " + std::to_string(kernel.generation);
  if (executors.cpu)
    command += " --backend cpu";
  if (executors.ptx)
    command += " --backend ptx";
  if (executors.gpu)
    command += " --backend gpu";
  return command;
}

} // namespace blocc::differential
