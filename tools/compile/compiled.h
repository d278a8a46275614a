// What blocc-compile made of a specialization for each target, before it is
// written out (generated_code.h).
#pragma once

#include "runtime/cpu/program_sites.h"
#include "runtime/cuda/tensor_map.h"
#include "runtime/fault_site.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blocc::compile {

/// x86 object code (backends/cpu's compile_object).
struct CpuCode {
  std::string symbol; ///< the program's function, defined by the object
  std::string object;
  runtime::cpu::ProgramSites sites;
  size_t scratch_bytes = 0;
  std::string target;                ///< "x86_64-... znver4 (512-bit vectors)"
  std::vector<std::string> features; ///< the CPU features the code may use
};

/// One architecture's code for the GPU: PTX, or a cubin ptxas made of it.
struct GpuImage {
  int sm = 90;
  bool arch_specific = false;
  bool cubin = false;
  std::string bytes;
  /// What each launch requests (0 when the kernel's shared memory fits
  /// the static 48 KB; the architecture's lowering decides).
  unsigned dynamic_shared_bytes = 0;
  /// The tensor maps its entry takes after the user's parameters, one per
  /// tile the Tensor Memory Accelerator copies (sm_90a), which each launch
  /// encodes from its arguments.
  std::vector<cuda::TensorMapRequest> tensor_maps;
};

struct GpuCode {
  std::string entry; ///< the PTX entry's name
  int num_warps = 4;
  /// The same for every architecture (the lowering numbers them by op).
  std::vector<runtime::FaultSite> faults;
  std::vector<GpuImage> images;
};

struct Compiled {
  std::optional<CpuCode> cpu;
  std::optional<GpuCode> gpu;
};

} // namespace blocc::compile
