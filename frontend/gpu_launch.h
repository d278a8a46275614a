// Launches on the GPU backend: the launches whose arguments live in device
// memory (Backend::Auto) or that ask for Backend::Gpu. The rest of the
// launch path (frontend/kernel.cpp, executor.h) is for host memory.
#pragma once

#include "blocc/kernel.h"
#include "runtime/kernel_args.h"
#include "stages.h"

#include <string>
#include <vector>

namespace blocc::detail {

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
/// GPU, the kernel runs, and the buffers the kernel may write are copied
/// back before the launch returns. Arguments that alias one host buffer
/// share one device copy. It lets the whole e2e suite run on the GPU
/// (CTest's e2e_on_gpu); it is synchronous and slow, not for programs.
bool launch_on_gpu(const std::string &kernel,
                   const std::vector<ParamInfo> &params,
                   const std::vector<ArgValue> &args,
                   const Specialization &specialization, const Grid &grid,
                   std::vector<KernelArg> &runtime_args,
                   const LaunchOptions &options, Caller caller);

} // namespace blocc::detail
