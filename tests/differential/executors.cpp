#include "executors.h"

#include "backends/interpreter/interpreter.h"

#ifdef BLOCC_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#include "ir/error.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/device_buffer.h"

#include <algorithm>
#endif

namespace blocc::differential {

Executor interpreter_executor() {
  return [](const ir::Function &f, Grid grid, std::vector<KernelArg> &args) {
    interp::interpret(f, grid, args);
  };
}

Executor interpreter_running(const ir::Function &replacement) {
  return [&replacement](const ir::Function &, Grid grid,
                        std::vector<KernelArg> &args) {
    interp::interpret(replacement, grid, args);
  };
}

std::optional<Executor> cpu_backend_executor() {
#ifdef BLOCC_HAVE_CPU_BACKEND
  return [](const ir::Function &f, Grid grid, std::vector<KernelArg> &args) {
    cpu::run(*cpu::compile(f), grid, args);
  };
#else
  return std::nullopt;
#endif
}

#ifdef BLOCC_HAVE_NVPTX_BACKEND
namespace {

/// One run on the GPU: every buffer staged in device memory (a copy per
/// argument, as KernelMemory gives each argument its own buffer).
void run_on_gpu(const ir::Function &f, Grid grid, std::vector<KernelArg> &args,
                int num_warps) {
  int device = cuda::current_device();
  nvptx::CompileOptions options;
  options.num_warps = num_warps;
  options.arch = nvptx::arch_for_device(device);
  auto kernel = nvptx::compile(f, options);
  std::vector<KernelArg> device_args = args;
  std::vector<DeviceAllocation> copies(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg &a = args[i];
    if (a.kind != KernelArg::Kind::Pointer)
      continue;
    if (a.size_bytes == KernelArg::kUnknownSize)
      throw Error("argument " + std::to_string(i) +
                  ": a buffer of unknown size cannot be staged on the GPU");
    copies[i] = DeviceAllocation(std::max<size_t>(a.size_bytes, 1), device);
    copies[i].copy_from_host(a.pointer, a.size_bytes);
    device_args[i].pointer =
        reinterpret_cast<void *>(static_cast<uintptr_t>(copies[i].address()));
    device_args[i].device = device;
  }
  nvptx::run(*kernel, grid, device_args);
  cuda::synchronize(device);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == KernelArg::Kind::Pointer)
      copies[i].copy_to_host(args[i].pointer, args[i].size_bytes);
}

} // namespace
#endif

std::optional<Executor> gpu_backend_executor([[maybe_unused]] int num_warps) {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  return [num_warps](const ir::Function &f, Grid grid,
                     std::vector<KernelArg> &args) {
    run_on_gpu(f, grid, args, num_warps);
  };
#else
  return std::nullopt;
#endif
}

std::string gpu_unavailable_reason() {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  if (cuda::is_available())
    return "";
  return "no GPU: " + cuda::unavailable_reason();
#else
  return "blocc is built without the GPU backend (BLOCC_NVPTX_BACKEND=OFF)";
#endif
}

} // namespace blocc::differential
