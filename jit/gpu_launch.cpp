#include "gpu_launch.h"

#include "blocc/trace.h"
#include "ir/error.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/device_buffer.h"

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

namespace blocc::detail {

namespace {

const char *backend_name(Backend backend) {
  return backend == Backend::Cpu ? "the CPU backend" : "the interpreter";
}

/// BLOCC_BACKEND=gpu: host launches run on the GPU, staged (gpu_launch.h).
bool staging_requested() {
  const char *env = std::getenv("BLOCC_BACKEND");
  return env && std::string(env) == "gpu";
}

#ifdef BLOCC_HAVE_NVPTX_BACKEND
/// Whether `entry` holds the kernel for a launch on GPU `device` with
/// `options`, compiled since the backend's memory cache was last cleared.
bool serves(const GpuKernelCache::Entry &entry, int device,
            const LaunchOptions &options, uint64_t generation) {
  return entry.device == device && entry.num_warps == options.num_warps &&
         entry.num_stages == options.num_stages &&
         entry.generation == generation;
}

/// The kernel `cache` keeps for GPU `device` and `options`, compiled (and
/// printed for BLOCC_DUMP) the first time.
const nvptx::CompiledKernel &gpu_kernel(const Specialization &specialization,
                                        int device,
                                        const LaunchOptions &options,
                                        GpuKernelCache &cache) {
  const uint64_t generation = nvptx::memory_cache_generation();
  const GpuKernelCache::Entry *last =
      cache.last.load(std::memory_order_acquire);
  if (last && serves(*last, device, options, generation))
    return *last->kernel;
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (const GpuKernelCache::Entry &entry : cache.entries)
    if (serves(entry, device, options, generation)) {
      cache.last.store(&entry, std::memory_order_release);
      return *entry.kernel;
    }
  nvptx::CompileOptions compile_options;
  compile_options.num_warps = options.num_warps;
  compile_options.num_stages = options.num_stages;
  compile_options.arch = nvptx::arch_for_device(device);
  dump_stages(specialization,
              Target::gpu(compile_options.arch.name(), options.num_warps,
                          options.num_stages));
  GpuKernelCache::Entry entry;
  entry.device = device;
  entry.num_warps = options.num_warps;
  entry.num_stages = options.num_stages;
  entry.generation = generation;
  entry.kernel = nvptx::compile(*specialization.function, compile_options);
  const GpuKernelCache::Entry &kept = cache.entries.emplace_back(entry);
  cache.last.store(&kept, std::memory_order_release);
  return *kept.kernel;
}
#endif

} // namespace

bool launch_on_gpu(const std::string &kernel,
                   const std::vector<ParamInfo> &params,
                   const std::vector<ArgValue> &args,
                   const Specialization &specialization, const Grid &grid,
                   std::vector<KernelArg> &runtime_args,
                   const LaunchOptions &options, Caller caller,
                   GpuKernelCache &cache) {
  const bool python = caller == Caller::Python;
  // Made only for a message: the launch's line, as errors start.
  auto site = [&] {
    return grid.loc.line() ? where(grid.loc) + ": error: " : std::string();
  };
  int device = -1;
  size_t device_arg = 0;
  bool host_pointer = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgValue &a = args[i];
    if (a.kind != ArgValue::Kind::Pointer)
      continue;
    if (a.device < 0) {
      host_pointer = true;
      continue;
    }
    if (options.backend == Backend::Cpu ||
        options.backend == Backend::Interpreter)
      throw Error(site() + argument_name(kernel, i, params[i]) + ": " +
                  a.cpp_type + " lives on GPU " + std::to_string(a.device) +
                  ", but the launch asks for " + backend_name(options.backend) +
                  ", which runs on host memory; " +
                  (python ? "launch with backend='gpu' or 'auto', or copy "
                            "the data to the host (tensor.cpu())"
                          : "launch with Backend::Gpu or Backend::Auto, or "
                            "copy the data to the host (to_host())"));
    if (device >= 0 && a.device != device)
      throw Error(site() + argument_name(kernel, i, params[i]) + ": " +
                  a.cpp_type + " lives on GPU " + std::to_string(a.device) +
                  ", but " +
                  argument_name(kernel, device_arg, params[device_arg]) +
                  " lives on GPU " + std::to_string(device) +
                  "; a kernel runs on one GPU: copy the " +
                  (python ? "arrays" : "buffers") + " to one device");
    if (device < 0) {
      device = a.device;
      device_arg = i;
    }
  }
  // Staging concerns host memory only: a launch on device memory alone
  // reads no environment.
  const bool staging = options.backend == Backend::Auto &&
                       (device < 0 || host_pointer) && staging_requested();
  if (device < 0 && options.backend != Backend::Gpu && !staging)
    return false;
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  // Host buffers staged on the GPU, one copy per distinct host buffer.
  struct Staged {
    std::unique_ptr<DeviceAllocation> copy;
    void *host = nullptr;
    size_t bytes = 0;
    bool written = false;
  };
  std::map<void *, Staged> staged;
#endif
  // Every pointer must be device memory; mark each runtime argument with
  // its GPU (runtime arguments leave constants out).
  size_t runtime_index = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (params[i].kind == ParamInfo::Kind::Constant)
      continue;
    const ArgValue &a = args[i];
    if (params[i].kind == ParamInfo::Kind::Pointer) {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
      if (a.device < 0 && staging && a.size_bytes == 0) {
        // An empty buffer: nothing to copy, and nothing may be accessed.
        runtime_args[runtime_index].pointer = nullptr;
        runtime_args[runtime_index].device =
            device >= 0 ? device : cuda::current_device();
        ++runtime_index;
        continue;
      }
      if (a.device < 0 && staging && a.pointer &&
          a.size_bytes != KernelArg::kUnknownSize) {
        int ordinal = device >= 0 ? device : cuda::current_device();
        Staged &s = staged[a.pointer];
        if (!s.copy || s.bytes < a.size_bytes) {
          s.copy = std::make_unique<DeviceAllocation>(
              std::max<size_t>(a.size_bytes, 1), ordinal);
          s.host = a.pointer;
          s.bytes = a.size_bytes;
          s.copy->copy_from_host(a.pointer, a.size_bytes);
        }
        s.written = s.written || !a.read_only;
        runtime_args[runtime_index].pointer =
            reinterpret_cast<void *>(static_cast<uintptr_t>(s.copy->address()));
        runtime_args[runtime_index].device = ordinal;
        runtime_args[runtime_index].context = s.copy->context();
        ++runtime_index;
        continue;
      }
#endif
      if (a.device < 0)
        throw Error(site() + argument_name(kernel, i, params[i]) + ": " +
                    a.cpp_type +
                    " is host memory, but the launch runs on the GPU; " +
                    (python ? "pass GPU memory (a CUDA tensor, or an array "
                              "with __cuda_array_interface__ or a CUDA "
                              "__dlpack__: torch.from_numpy(a).cuda() "
                              "copies a numpy array to the GPU)"
                            : "pass a blocc::DeviceBuffer "
                              "(blocc::DeviceBuffer<T>(host) copies host "
                              "data to the GPU)"));
      runtime_args[runtime_index].device = a.device;
      runtime_args[runtime_index].context = a.context;
    }
    ++runtime_index;
  }
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  int ordinal = device >= 0 ? device : cuda::current_device();
  const nvptx::CompiledKernel &compiled =
      gpu_kernel(specialization, ordinal, options, cache);
  // Staged launches are synchronous. A user stream created with
  // CU_STREAM_NON_BLOCKING is not ordered with the default stream's copies:
  // wait for the copies in, and for the stream before copying out.
  const bool stream_after_copies = !staged.empty() && options.stream;
  if (stream_after_copies)
    cuda::synchronize(ordinal);
  nvptx::run(compiled, grid, runtime_args, options.stream);
  // Staged launches are synchronous, faults included: wait, and report a
  // fault before copying any result back (a failed staged launch leaves
  // the host's memory as it was).
  if (!staged.empty()) {
    if (options.stream)
      cuda::synchronize_stream(options.stream);
    else
      cuda::synchronize(ordinal);
  }
  for (auto &[host, s] : staged)
    if (s.written)
      s.copy->copy_to_host(s.host, s.bytes);
  return true;
#else
  (void)specialization;
  (void)runtime_args;
  (void)cache;
  throw Error(site() + "kernel '" + kernel +
              "': the GPU backend is not part of this build of blocc: "
              "configure with LLVM >= 17 built with the NVPTX target "
              "(llvm-19-dev) and -DBLOCC_NVPTX_BACKEND=ON");
#endif
}

} // namespace blocc::detail
