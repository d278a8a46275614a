// Launches on the GPU backend: the launches whose arguments live in device
// memory (Backend::Auto) or that ask for Backend::Gpu. The rest of the
// launch path (jit/kernel.cpp, executor.h) is for host memory.
#pragma once

#include "blocc/kernel.h"
#include "runtime/kernel_args.h"
#include "stages.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blocc::nvptx {
class CompiledKernel;
} // namespace blocc::nvptx

namespace blocc::detail {

/// What GPU launches keep for one specialization between launches: its
/// compiled kernel per device and launch options, so that a relaunch skips
/// the device's architecture, BLOCC_DUMP and the backend's compile cache
/// (a lock and a map keyed by the options). Owned by the JIT's
/// specialization.
struct GpuKernelCache {
  struct Entry {
    int device = 0;
    int num_warps = 0;
    int num_stages = 0;
    uint64_t generation = 0; // nvptx::memory_cache_generation() when made
    std::shared_ptr<const nvptx::CompiledKernel> kernel;
  };
  std::mutex mutex;
  /// Never shrinks, and a deque's elements stay put as it grows, so that
  /// `last` may be read without the mutex.
  std::deque<Entry> entries;
  /// The entry the last launch used (a relaunch with the same options, the
  /// usual case, reads only this).
  std::atomic<const Entry *> last{nullptr};
};

/// Runs the launch on the GPU backend when it belongs there (a device
/// buffer among `args`, or options.backend == Gpu) and returns true;
/// returns false, doing nothing, for launches on host memory. `args` are
/// the launch's arguments, `runtime_args` the values the kernel function
/// takes (constants left out; a GPU launch marks each pointer's device). Throws
/// blocc::Error naming the argument for device memory on a host backend, host
/// memory on the GPU backend, and buffers on two different GPUs, advising as
/// `caller` would act.
///
/// A testing convenience: with BLOCC_BACKEND=gpu, launches that would run
/// on the host (Backend::Auto) run on the GPU instead; each host buffer
/// argument (std::vector, std::span: its size is known) is copied to the
/// GPU, the kernel runs, and the buffers the kernel may write (`written`,
/// per parameter) are copied back before the launch returns. Arguments that
/// alias one host buffer share one device copy. It lets the whole e2e suite run
/// on the GPU (CTest's e2e_on_gpu); it is synchronous and slow, not for
/// programs. $BLOCC_BACKEND is read only for launches that pass host memory.
///
/// `cache` must belong to `specialization`; the first launch on a device
/// with given options compiles (and prints what BLOCC_DUMP asks for), the
/// next ones take the kernel from it.
bool launch_on_gpu(const std::string &kernel,
                   const std::vector<ParamInfo> &params,
                   const std::vector<ArgValue> &args,
                   const std::vector<bool> &written,
                   const Specialization &specialization, const Grid &grid,
                   std::vector<KernelArg> &runtime_args,
                   const LaunchOptions &options, Caller caller,
                   GpuKernelCache &cache);

} // namespace blocc::detail
