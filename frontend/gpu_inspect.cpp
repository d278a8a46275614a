// The GPU backend's output for inspection (KernelBase::ptx, gpu_llvm_ir):
// compile-only, so it works where no GPU or CUDA driver is present.
#include "gpu_launch.h"

#include "ir/error.h"

#ifdef BLOCC_HAVE_NVPTX_BACKEND
#include "backends/nvptx/gpu_backend.h"
#endif

namespace blocc::detail {

std::string gpu_inspect(const ir::Function &function, const std::string &arch,
                        int num_warps, GpuStage stage) {
#ifdef BLOCC_HAVE_NVPTX_BACKEND
  if (num_warps <= 0 || num_warps > 32 || (num_warps & (num_warps - 1)))
    throw Error("kernel '" + function.name() +
                "': num_warps must be a power of two from 1 to 32, got " +
                std::to_string(num_warps));
  nvptx::CompileOptions options;
  options.num_warps = num_warps;
  options.arch = nvptx::GpuArch::parse(arch);
  if (stage == GpuStage::LlvmIr)
    return nvptx::llvm_ir(function, options);
  return nvptx::ptx_of(*nvptx::compile(function, options));
#else
  throw Error("kernel '" + function.name() +
              "': the GPU backend is not part of this build of blocc "
              "(configure with LLVM >= 17 built with its NVPTX target)");
#endif
}

} // namespace blocc::detail
