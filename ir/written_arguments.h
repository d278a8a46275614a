// Which kernel parameters a kernel writes through (an analysis of the
// traced function): a launch refuses a read-only buffer passed where the
// kernel stores, and ahead-of-time launch functions take the others as
// pointers to const.
#pragma once

#include "ir/function.h"

#include <vector>

namespace blocc::ir {

/// For each parameter (by position; `arguments[i]` is its function argument
/// or nullptr for constants): true when a store or atomic may write through
/// a pointer derived from it.
std::vector<bool> arguments_written(Function &fn, size_t num_params,
                                    const std::vector<Value *> &arguments);

} // namespace blocc::ir
