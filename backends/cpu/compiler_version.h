// Which compiler produced a kernel's code, as part of its compile-cache key
// (in memory and on disk): code from another blocc or LLVM is never reused.
#pragma once

#include <string>

namespace blocc::cpu {

/// "blocc 0.1.0 (cpu sources 0123456789abcdef), LLVM 19.1.7": blocc's
/// version, a hash of the sources that decide generated code (computed at
/// build time, so a rebuilt blocc with an edited lowering gets new keys
/// even at the same version), and the version of the LLVM library it runs.
const std::string &compiler_version();

} // namespace blocc::cpu
