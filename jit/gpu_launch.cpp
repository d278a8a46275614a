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

namespace {

/// What a launch's pointer arguments say about where it runs.
struct ArgumentDevices {
  int device = -1;          // the GPU of the device buffers, -1: none
  bool host_memory = false; // some pointer is host memory
};

/// The GPU of the launch's device buffers. Throws for a device buffer on
/// a launch that asks for a host backend, and for buffers on two GPUs.
ArgumentDevices argument_devices(const std::string &kernel,
                                 const std::vector<ParamInfo> &params,
                                 const std::vector<ArgValue> &args,
                                 const LaunchOptions &options, bool python,
                                 const std::string &site) {
  ArgumentDevices found;
  size_t first = 0; // the argument on found.device
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgValue &a = args[i];
    if (a.kind != ArgValue::Kind::Pointer)
      continue;
    if (a.device < 0) {
      found.host_memory = true;
      continue;
    }
    if (options.backend == Backend::Cpu ||
        options.backend == Backend::Interpreter)
      throw Error(site + argument_name(kernel, i, params[i]) + ": " +
                  a.cpp_type + " lives on GPU " + std::to_string(a.device) +
                  ", but the launch asks for " + backend_name(options.backend) +
                  ", which runs on host memory; " +
                  (python ? "launch with backend='gpu' or 'auto', or copy "
                            "the data to the host (tensor.cpu())"
                          : "launch with Backend::Gpu or Backend::Auto, or "
                            "copy the data to the host (to_host())"));
    if (found.device >= 0 && a.device != found.device)
      throw Error(site + argument_name(kernel, i, params[i]) + ": " +
                  a.cpp_type + " lives on GPU " + std::to_string(a.device) +
                  ", but " + argument_name(kernel, first, params[first]) +
                  " lives on GPU " + std::to_string(found.device) +
                  "; a kernel runs on one GPU: copy the " +
                  (python ? "arrays" : "buffers") + " to one device");
    if (found.device < 0) {
      found.device = a.device;
      first = i;
    }
  }
  return found;
}

/// The error for host memory passed to a launch on the GPU.
Error host_memory_on_gpu(const std::string &kernel, size_t i,
                         const ParamInfo &param, const ArgValue &a, bool python,
                         const std::string &site) {
  return Error(site + argument_name(kernel, i, param) + ": " + a.cpp_type +
               " is host memory, but the launch runs on the GPU; " +
               (python ? "pass GPU memory (a CUDA tensor, or an array with "
                         "__cuda_array_interface__ or a CUDA __dlpack__: "
                         "torch.from_numpy(a).cuda() copies a numpy array to "
                         "the GPU)"
                       : "pass a blocc::DeviceBuffer "
                         "(blocc::DeviceBuffer<T>(host) copies host data to "
                         "the GPU)"));
}

#ifdef BLOCC_HAVE_NVPTX_BACKEND
/// Host buffers copied to one GPU for a staged launch: one copy per
/// distinct host buffer, and back to the host, after the launch, of those
/// the kernel writes.
class StagedBuffers {
public:
  /// On GPU `device`, or (-1) the current one, asked for only when needed:
  /// a launch that fails on its arguments needs no driver.
  explicit StagedBuffers(int device) : device_(device) {}

  bool empty() const { return copies_.empty(); }
  int device() {
    if (device_ < 0)
      device_ = cuda::current_device();
    return device_;
  }

  /// The device copy of host buffer `a` (copied in at its first use) as
  /// the kernel's argument; `written`: the kernel writes through it.
  void stage(const ArgValue &a, bool written, KernelArg &runtime_arg) {
    runtime_arg.device = device();
    // An empty buffer: nothing to copy, and nothing may be accessed.
    if (a.size_bytes == 0) {
      runtime_arg.pointer = nullptr;
      return;
    }
    Copy &c = copies_[a.pointer];
    if (!c.device || c.bytes < a.size_bytes) {
      c.device = std::make_unique<DeviceAllocation>(
          std::max<size_t>(a.size_bytes, 1), device());
      c.bytes = a.size_bytes;
      c.device->copy_from_host(a.pointer, a.size_bytes);
    }
    c.written = c.written || written;
    runtime_arg.pointer =
        reinterpret_cast<void *>(static_cast<uintptr_t>(c.device->address()));
    runtime_arg.context = c.device->context();
  }

  /// Copies back what the kernel wrote.
  void copy_back() {
    for (auto &[host, c] : copies_)
      if (c.written)
        c.device->copy_to_host(host, c.bytes);
  }

private:
  struct Copy {
    std::unique_ptr<DeviceAllocation> device;
    size_t bytes = 0;
    bool written = false;
  };
  int device_;
  std::map<void *, Copy> copies_;
};

/// Compiles (or finds) the kernel, runs it and, for a staged launch,
/// waits and copies back. Staged launches are synchronous, faults
/// included: a fault is reported before any result is copied back (a
/// failed staged launch leaves the host's memory as it was).
void run_on_gpu(const Specialization &specialization, const Grid &grid,
                std::vector<KernelArg> &runtime_args,
                const LaunchOptions &options, GpuKernelCache &cache,
                StagedBuffers &staged) {
  const int device = staged.device();
  const nvptx::CompiledKernel &compiled =
      gpu_kernel(specialization, device, options, cache);
  // A user stream created with CU_STREAM_NON_BLOCKING is not ordered with
  // the default stream's copies: wait for the copies in, and for the
  // stream before copying out.
  if (!staged.empty() && options.stream)
    cuda::synchronize(device);
  nvptx::run(compiled, grid, runtime_args, options.stream);
  if (staged.empty())
    return;
  if (options.stream)
    cuda::synchronize_stream(options.stream);
  else
    cuda::synchronize(device);
  staged.copy_back();
}
#endif

} // namespace

bool launch_on_gpu(const std::string &kernel,
                   const std::vector<ParamInfo> &params,
                   const std::vector<ArgValue> &args,
                   const std::vector<bool> &written,
                   const Specialization &specialization, const Grid &grid,
                   std::vector<KernelArg> &runtime_args,
                   const LaunchOptions &options, Caller caller,
                   GpuKernelCache &cache) {
  const bool python = caller == Caller::Python;
  // Made only for a message: the launch's line, as errors start.
  const std::string site =
      grid.loc.line() ? where(grid.loc) + ": error: " : std::string();
  const ArgumentDevices devices =
      argument_devices(kernel, params, args, options, python, site);
  // Staging concerns host memory only: a launch on device memory alone
  // reads no environment.
  const bool staging = options.backend == Backend::Auto &&
                       (devices.device < 0 || devices.host_memory) &&
                       staging_requested();
  if (devices.device < 0 && options.backend != Backend::Gpu && !staging)
    return false;
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  StagedBuffers staged(devices.device);
#endif
  // Every pointer must be device memory (or staged); mark each runtime
  // argument with its GPU (runtime arguments leave constants out).
  size_t runtime_index = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (params[i].kind == ParamInfo::Kind::Constant)
      continue;
    KernelArg &runtime_arg = runtime_args[runtime_index++];
    if (params[i].kind != ParamInfo::Kind::Pointer)
      continue;
    const ArgValue &a = args[i];
    if (a.device >= 0) {
      runtime_arg.device = a.device;
      runtime_arg.context = a.context;
      continue;
    }
#ifdef BLOCC_HAVE_NVPTX_BACKEND
    if (staging && (a.size_bytes == 0 ||
                    (a.pointer && a.size_bytes != KernelArg::kUnknownSize))) {
      // (A read-only buffer the kernel writes was refused before.)
      staged.stage(a, written[i], runtime_arg);
      continue;
    }
#endif
    throw host_memory_on_gpu(kernel, i, params[i], a, python, site);
  }
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  run_on_gpu(specialization, grid, runtime_args, options, cache, staged);
  return true;
#else
  (void)specialization;
  (void)written;
  (void)cache;
  throw Error(site + "kernel '" + kernel +
              "': the GPU backend is not part of this build of blocc: "
              "configure with LLVM >= 17 built with the NVPTX target "
              "(llvm-19-dev) and -DBLOCC_NVPTX_BACKEND=ON");
#endif
}

} // namespace blocc::detail
