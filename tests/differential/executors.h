// The executors the differential tests compare: the reference interpreter,
// and the CPU backend where it is built.
#pragma once

#include "differential.h"

#include <optional>

namespace blocc::differential {

/// The reference interpreter (backends/interpreter): the oracle.
Executor interpreter_executor();

/// The interpreter running `replacement` instead of the function it is
/// handed: how a transformed copy of a kernel (after a pass) is compared
/// with the original on the same arguments.
Executor interpreter_running(const ir::Function &replacement);

/// The CPU backend (backends/cpu) as an Executor:
/// compile the function for the host and run it over the grid on the given
/// arguments. Empty where blocc is built without the CPU backend
/// (BLOCC_CPU_BACKEND=OFF); the differential tests and `blocc-fuzz
/// --backend cpu` use it.
std::optional<Executor> cpu_backend_executor();

} // namespace blocc::differential
