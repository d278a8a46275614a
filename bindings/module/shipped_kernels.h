// The kernels that ship with blocc (every tutorial's), for blocc.kernels.
#pragma once

#include "blocc/kernel_abi.h"

#include <vector>

namespace blocc::python {

std::vector<const blocc_kernel_v1 *> shipped_kernels();

} // namespace blocc::python
