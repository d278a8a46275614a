// Runs a traced kernel specialization on the executor a launch asks for
// (LaunchOptions::backend, $BLOCC_BACKEND): the reference interpreter or
// the CPU backend, when blocc was built with it.
#pragma once

#include "blocc/kernel.h"
#include "runtime/kernel_args.h"
#include "stages.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blocc::detail {

/// The executor `requested` resolves to: Auto becomes $BLOCC_BACKEND when
/// set ("interpreter" or "cpu"; anything else is an error), else the
/// default. Asking for the CPU backend where it is not built is an error.
Backend resolve_backend(Backend requested);

/// The checks `requested` resolves to: Default becomes $BLOCC_CHECK when
/// set ("0"/"off", "1"/"bounds", "races"; anything else is an error), else
/// Off. Never Default.
Check resolve_check(Check requested);

/// What executors keep for one specialization between its launches, so
/// that a relaunch skips the compile cache's lookup (whose key is the
/// printed IR: several microseconds): the CPU backend's compiled kernel,
/// per check mode. Owned by the JIT's specialization.
struct ExecutorCache {
  std::mutex mutex;
  std::shared_ptr<const void> cpu[4]; // indexed by the resolved Check
};

/// Runs `specialization` over `grid` on the executor `backend` resolves
/// to, with the checks `check` resolves to; `cache` (optional) must belong
/// to `specialization`. Prints what BLOCC_DUMP asks for as it compiles.
void execute(const Specialization &specialization, const Grid &grid,
             const std::vector<KernelArg> &args, Backend backend, Check check,
             ExecutorCache *cache = nullptr);

} // namespace blocc::detail
