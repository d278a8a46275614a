// ptxas (the CUDA toolkit's PTX assembler), where one is on PATH: it turns
// blocc-compile's PTX into cubins, and in doing so validates the PTX at
// build time rather than at the first launch on a GPU.
#pragma once

#include <optional>
#include <string>

namespace blocc::compile {

/// The ptxas on PATH, if any.
std::optional<std::string> find_ptxas();

/// The cubin `ptxas` assembles from `ptx` for `arch` ("sm_90a"). Throws
/// blocc::Error with ptxas's own complaint when it rejects the PTX.
std::string assemble_cubin(const std::string &ptxas, const std::string &ptx,
                           const std::string &arch);

} // namespace blocc::compile
