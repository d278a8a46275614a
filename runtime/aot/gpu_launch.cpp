#include "runtime/aot/launch.h"

#include "runtime/cuda/context.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/fault_record.h"
#include "runtime/cuda/loaded_kernel.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace blocc::aot {

namespace {

using cuda::driver::CUcontext;

std::string image_name(const GpuImage &image) {
  return "sm_" + std::to_string(image.sm) + (image.arch_specific ? "a" : "") +
         (image.cubin ? " cubin" : " PTX");
}

/// The kernel of one image. A cubin loads as it is; PTX goes without the
/// NUL the image ends with (the driver's JIT needs it, but a PTX assembler
/// named by BLOCC_PTXAS reads it as a stray character).
std::unique_ptr<cuda::LoadedKernel> loaded_kernel(const GpuKernel &kernel,
                                                  const GpuImage &image) {
  std::string bytes(static_cast<const char *>(image.data), image.size);
  if (image.cubin)
    return std::make_unique<cuda::LoadedKernel>(
        kernel.name, std::string(), kernel.entry, image.dynamic_shared_bytes,
        kernel.faults(), std::move(bytes));
  if (!bytes.empty() && bytes.back() == '\0')
    bytes.pop_back();
  return std::make_unique<cuda::LoadedKernel>(
      kernel.name, std::move(bytes), kernel.entry, image.dynamic_shared_bytes,
      kernel.faults());
}

/// The image launches in a context use: its index among the kernel's, and
/// the kernel loaded from it.
struct ImageInUse {
  size_t index = 0;
  const cuda::LoadedKernel *loaded = nullptr;
};

/// What a kernel has loaded: a LoadedKernel per image (made on first use;
/// each loads its module per context), and per context the image launches
/// there use.
struct KernelState {
  std::mutex mutex;
  std::vector<std::unique_ptr<cuda::LoadedKernel>> images;
  std::map<unsigned long long, ImageInUse> by_context;
};

KernelState &state_of(const GpuKernel &kernel) {
  static std::mutex mutex;
  static std::map<const GpuKernel *, std::unique_ptr<KernelState>> states;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<KernelState> &state = states[&kernel];
  if (!state) {
    state = std::make_unique<KernelState>();
    state->images.resize(kernel.num_images);
  }
  return *state;
}

/// The image launches in `context` use, loaded there.
ImageInUse image_loaded_in(const GpuKernel &kernel, CUcontext context) {
  KernelState &state = state_of(kernel);
  std::lock_guard<std::mutex> lock(state.mutex);
  const unsigned long long key = cuda::context_key(context);
  if (auto it = state.by_context.find(key); it != state.by_context.end())
    return it->second;
  const cuda::driver::Api &api = cuda::driver::api();
  const std::string what = "kernel '" + std::string(kernel.name) + "'";
  cuda::driver::CUdevice device = 0;
  {
    cuda::ContextScope scope(context);
    cuda::driver::check(api.cuCtxGetDevice(&device), "cuCtxGetDevice", what);
  }
  const cuda::DeviceProperties gpu = cuda::properties(device);
  std::string tried;
  for (size_t index : image_order(kernel, gpu.compute_capability)) {
    const GpuImage &image = kernel.images[index];
    std::unique_ptr<cuda::LoadedKernel> &loaded = state.images[index];
    if (!loaded)
      loaded = loaded_kernel(kernel, image);
    try {
      cuda::ContextScope scope(context);
      loaded->function_in(context);
    } catch (const Error &e) {
      // A cubin of a newer toolkit than the driver: its PTX may still load.
      tried += "\n  " + image_name(image) + ": " + e.what();
      continue;
    }
    const ImageInUse in_use{index, loaded.get()};
    state.by_context.emplace(key, in_use);
    return in_use;
  }
  std::string compiled;
  for (size_t i = 0; i < kernel.num_images; ++i)
    compiled += (i ? ", " : "") + image_name(kernel.images[i]);
  const std::string cc = std::to_string(gpu.compute_capability / 10) +
                         std::to_string(gpu.compute_capability % 10);
  if (!tried.empty())
    throw Error(what + ": GPU " + std::to_string(device) + " (" + gpu.name +
                ", sm_" + cc + ") loads none of its code:" + tried);
  throw Error(what + " has no code for GPU " + std::to_string(device) + " (" +
              gpu.name + ", sm_" + cc + "): it was compiled for " + compiled +
              "; add --target sm_" + cc +
              " (or an older architecture) to blocc-compile");
}

/// Launches `loaded` with the user's `parameters` followed by the tensor
/// maps of `requests`, encoded from `args` for the device of `context`.
void launch_with_tensor_maps(
    const std::vector<cuda::TensorMapRequest> &requests,
    const cuda::LoadedKernel &loaded, CUcontext context,
    const cuda::LaunchShape &shape, void **parameters,
    cuda::driver::CUstream stream, const std::vector<KernelArg> &args,
    const std::string &name) {
  std::vector<void *> all(parameters, parameters + args.size());
  all.resize(args.size() + requests.size());
  // Each 64-byte aligned (CUtensorMap's alignment), as the PTX declares
  // them.
  std::vector<cuda::driver::CUtensorMap> maps;
  {
    // The driver encodes a map for the current context's device.
    cuda::ContextScope current(context);
    cuda::encode_tensor_map_parameters(requests, args, name, maps,
                                       all.data() + args.size());
  }
  loaded.launch(context, shape, all.data(), stream);
}

} // namespace

std::vector<size_t> image_order(const GpuKernel &kernel, int cc) {
  std::vector<size_t> cubins, ptx;
  for (size_t i = 0; i < kernel.num_images; ++i) {
    const GpuImage &image = kernel.images[i];
    if (image.arch_specific ? image.sm != cc : image.sm > cc)
      continue;
    if (!image.cubin)
      ptx.push_back(i);
    else if (image.sm / 10 == cc / 10) // machine code of the same major
      cubins.push_back(i);
  }
  auto newest_first = [&](size_t a, size_t b) {
    const GpuImage &x = kernel.images[a], &y = kernel.images[b];
    return x.sm != y.sm ? x.sm > y.sm : x.arch_specific > y.arch_specific;
  };
  std::stable_sort(cubins.begin(), cubins.end(), newest_first);
  std::stable_sort(ptx.begin(), ptx.end(), newest_first);
  cubins.insert(cubins.end(), ptx.begin(), ptx.end());
  return cubins;
}

void launch_gpu(const GpuKernel &kernel, const Grid &grid, void **parameters,
                const uint64_t *pointers, size_t num_pointers, void *stream,
                const KernelArg *args, size_t num_args) {
  const std::string name = kernel.name;
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] < 0)
      throw Error("kernel '" + name + "': grid dimension " +
                  std::to_string(axis) + " is negative (" +
                  std::to_string(grid[axis]) + ")");
  CUcontext context = nullptr;
  for (size_t i = 0; i < num_pointers && !context; ++i)
    if (pointers[i])
      context = cuda::context_of_pointer(pointers[i], name);
  auto cu_stream = static_cast<cuda::driver::CUstream>(stream);
  CUcontext stream_context =
      cu_stream ? cuda::context_of_stream(cu_stream, name) : nullptr;
  if (context && stream_context && stream_context != context)
    throw Error("kernel '" + name +
                "': the stream belongs to another CUDA context than the "
                "kernel's buffers; create the stream in the context the "
                "buffers were allocated in");
  if (!context)
    context = stream_context ? stream_context
                             : cuda::context_for_device(cuda::current_device());
  if (grid.count() == 0)
    return;
  const ImageInUse image = image_loaded_in(kernel, context);
  cuda::LaunchShape shape;
  shape.grid = {grid.x, grid.y, grid.z};
  shape.threads = 32 * kernel.num_warps;
  const GpuImage &code = kernel.images[image.index];
  if (!code.tensor_maps) {
    image.loaded->launch(context, shape, parameters, cu_stream);
    return;
  }
  if (!args)
    throw Error("internal: kernel '" + name +
                "' takes tensor maps, which its launch passed no arguments "
                "to encode from (generated code of another blocc-compile?)");
  launch_with_tensor_maps(code.tensor_maps(), *image.loaded, context, shape,
                          parameters, cu_stream,
                          std::vector<KernelArg>(args, args + num_args), name);
}

} // namespace blocc::aot
