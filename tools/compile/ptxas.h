// The PTX assembler blocc-compile makes cubins with: the one BLOCC_PTXAS
// names (runtime/cuda/ptx_assembler.h), else the ptxas on PATH (the CUDA
// toolkit's). Assembling validates the PTX at build time rather than at
// the first launch on a GPU.
#pragma once

#include "runtime/cuda/ptx_assembler.h"

#include <optional>
#include <string>

namespace blocc::compile {

/// BLOCC_PTXAS's assembler, else the ptxas on PATH, if any. Throws
/// blocc::Error when the one found does not run as a ptxas.
std::optional<cuda::PtxAssembler> find_ptxas();

} // namespace blocc::compile
