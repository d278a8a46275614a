#include "backends/nvptx/gpu_arch.h"

#include "ir/error.h"

#include <array>

namespace blocc::nvptx {

namespace {

constexpr std::array<int, 4> kSupported = {80, 86, 89, 90};

bool is_supported(int sm) {
  for (int s : kSupported)
    if (s == sm)
      return true;
  return false;
}

} // namespace

std::string GpuArch::name() const {
  return "sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
}

int64_t GpuArch::max_shared_bytes() const {
  switch (sm) {
  case 80:
    return 163 * 1024;
  case 86:
  case 89:
    return 99 * 1024;
  default:
    return 227 * 1024;
  }
}

std::string supported_archs() { return "sm_80, sm_86, sm_89, sm_90, sm_90a"; }

GpuArch GpuArch::parse(std::string_view text) {
  std::string_view digits = text;
  if (digits.substr(0, 3) == "sm_")
    digits.remove_prefix(3);
  GpuArch arch;
  if (!digits.empty() && digits.back() == 'a') {
    arch.arch_specific = true;
    digits.remove_suffix(1);
  }
  bool numeric = digits.size() == 2 && digits[0] >= '0' && digits[0] <= '9' &&
                 digits[1] >= '0' && digits[1] <= '9';
  if (numeric)
    arch.sm = (digits[0] - '0') * 10 + (digits[1] - '0');
  if (!numeric || !is_supported(arch.sm) ||
      (arch.arch_specific && arch.sm != 90))
    throw Error("'" + std::string(text) +
                "' is not a GPU architecture the NVPTX backend compiles "
                "for; expected one of " +
                supported_archs());
  return arch;
}

GpuArch GpuArch::for_compute_capability(int cc) {
  if (cc < kSupported.front())
    throw Error("the GPU has compute capability " + std::to_string(cc / 10) +
                "." + std::to_string(cc % 10) +
                "; blocc's GPU backend needs sm_80 (Ampere) or newer");
  GpuArch arch;
  for (int s : kSupported)
    if (s <= cc)
      arch.sm = s;
  // A Hopper device runs its own architecture's features (wgmma): code for
  // sm_90a runs on sm_90 devices only, so newer ones get plain sm_90.
  arch.arch_specific = cc == 90;
  return arch;
}

} // namespace blocc::nvptx
