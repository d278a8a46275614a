// The frame every GPU benchmark program's main shares: GPU 0 with its
// primary context current for the whole run (as in a program that uses the
// CUDA runtime API: events need one, and launches then find their context
// current), the device printed, the records written as JSON when asked,
// blocc errors reported under the program's name.
#pragma once

#include "results_json.h"
#include "runtime/cuda/context.h"
#include <blocc/blocc.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace gpu_bench {

/// Runs `measure`, which appends its records and returns false on a
/// failure it has reported; writes the records to `json` unless empty.
/// Returns main's exit status.
inline int
run_on_gpu0(const char *program, const std::string &json,
            const std::string &command,
            const std::function<bool(std::vector<Record> &records)> &measure) {
  try {
    if (!blocc::cuda::is_available()) {
      std::cerr << program << ": no GPU: " << blocc::cuda::unavailable_reason()
                << "\n";
      return 1;
    }
    blocc::cuda::ContextScope context(blocc::cuda::context_for_device(0));
    blocc::cuda::DeviceProperties device = blocc::cuda::properties(0);
    std::printf("device: %s (sm_%d, %d SMs)\n", device.name.c_str(),
                device.compute_capability, device.multiprocessors);
    std::vector<Record> records;
    if (!measure(records))
      return 1;
    if (!json.empty() && !write_results(json, device.name, command, records)) {
      std::cerr << program << ": cannot write " << json << "\n";
      return 1;
    }
  } catch (const blocc::Error &e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace gpu_bench
