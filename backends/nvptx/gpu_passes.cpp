#include "backends/nvptx/gpu_passes.h"

#include "backends/nvptx/gpu_ir.h"

namespace blocc::nvptx {

const std::vector<GpuPassInfo> &gpu_passes() {
  static const std::vector<GpuPassInfo> passes = {
      {"gpu-tensor-descriptors",
       "descriptor loads a warpgroup MMA reads copied by the Tensor Memory "
       "Accelerator (marked tma); every other descriptor access rewritten "
       "into pointer arithmetic and masked loads and stores",
       tensor_descriptors},
      {"gpu-accelerate-dot",
       "dots on tensor cores (mma.sync) where they fit, with their warp grid "
       "and A's path; the others on CUDA cores",
       accelerate_dot},
      {"gpu-assign-layouts",
       "the layouts of every block value: where it is produced (its home) "
       "and every layout it is needed in",
       assign_layouts},
      {"gpu-explicit-conversions",
       "one layout per block value: an op per layout it is computed in, a "
       "convert_layout op where a value moves between layouts",
       make_conversions_explicit},
      {"gpu-remove-conversions",
       "conversions that move nothing, chains and duplicates of "
       "conversions removed; cheap ops computed again in the target layout "
       "where that costs less than converting",
       remove_conversions},
      {"gpu-pipeline-loops",
       "loops that load the tiles of dots on tensor cores copy them ahead "
       "(cp.async, or TMA for tiles marked tma) in num_stages stages",
       pipeline_loops},
      {"gpu-warp-specialize",
       "a pipelined loop that asks for it and whose tiles TMA copies gets a "
       "producer warpgroup issuing the copies; the mark goes from the "
       "loops that cannot have one",
       warp_specialize},
      {"gpu-stage-dot-operands",
       "the operands of dots on tensor cores as values in swizzled tiles of "
       "shared memory: written by a convert_layout, or landed there by the "
       "copies of a pipelined loop",
       stage_dot_operands},
      {"gpu-stage-conversions",
       "conversions through shared memory split in two: the value written "
       "to shared memory in a shared layout, and its read in the target "
       "layout",
       stage_conversions},
  };
  return passes;
}

void run_gpu_pipeline(ir::Function &function, const GpuPassOptions &options) {
  for (const GpuPassInfo &pass : gpu_passes())
    pass.run(function, options);
  verify_gpu_ir(function, options.num_warps, options.arch);
}

} // namespace blocc::nvptx
