// Which kernel parameters a kernel writes through, so that a read-only
// buffer passed where the kernel stores is refused before launch.
#pragma once

#include "ir/function.h"

#include <vector>

namespace blocc::detail {

/// For each parameter (by position; `arguments[i]` is its function argument
/// or nullptr for constants): true when a store or atomic may write through
/// a pointer derived from it.
std::vector<bool> arguments_written(ir::Function &fn, size_t num_params,
                                    const std::vector<ir::Value *> &arguments);

} // namespace blocc::detail
