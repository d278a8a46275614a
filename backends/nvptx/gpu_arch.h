// The NVIDIA GPU architectures the NVPTX backend compiles for: sm_80,
// sm_86, sm_89, sm_90 and sm_90a (Hopper's architecture-specific features,
// such as wgmma, which run on sm_90 devices only). No LLVM here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace blocc::nvptx {

struct GpuArch {
  int sm = 90;                // compute capability, major * 10 + minor
  bool arch_specific = false; // the 'a' targets (sm_90a)

  /// "sm_90", "sm_90a"
  std::string name() const;
  /// Parses "sm_80" .. "sm_90a" (also "80", "90a"); throws blocc::Error
  /// listing the supported architectures otherwise.
  static GpuArch parse(std::string_view text);
  /// The architecture to compile for a device of compute capability `cc`
  /// (major * 10 + minor): the newest supported one not newer than the
  /// device (newer devices run its PTX through the driver's JIT), sm_90a
  /// for a Hopper device (sm_90) itself. Throws blocc::Error for devices
  /// older than sm_80.
  static GpuArch for_compute_capability(int cc);
  /// The most shared memory one CTA may use on this architecture once a
  /// kernel opts in above 48 KB (the CUDA programming guide's table:
  /// sm_80 163 KB, sm_86 and sm_89 99 KB, sm_90 227 KB). A device may
  /// allow less than its architecture (a newer device running older PTX):
  /// the runtime checks the device's own limit when it loads the kernel.
  int64_t max_shared_bytes() const;

  friend bool operator==(const GpuArch &, const GpuArch &) = default;
};

/// "sm_80, sm_86, sm_89, sm_90, sm_90a"
std::string supported_archs();

} // namespace blocc::nvptx
