#include "backends/cpu/compiler_version.h"

#include "source_fingerprint.h" // generated (CMakeLists.txt)

#include <llvm-c/Core.h>

namespace blocc::cpu {

const std::string &compiler_version() {
  static const std::string version = [] {
    // The LLVM that runs, which may be a newer patch release of a shared
    // libLLVM than the headers blocc was built with.
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    return std::string("blocc ") + BLOCC_VERSION + " (cpu sources " +
           BLOCC_CPU_SOURCE_FINGERPRINT + "), LLVM " + std::to_string(major) +
           "." + std::to_string(minor) + "." + std::to_string(patch);
  }();
  return version;
}

} // namespace blocc::cpu
