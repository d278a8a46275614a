// The gpu-accelerate-dot pass (gpu_passes.h): the decision of mma_layouts.h
// for each dot, written on it (gpu_ir.h).
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/mma_layouts.h"

namespace blocc::nvptx {

void accelerate_dot(ir::Function &function, const GpuPassOptions &options) {
  function.walk([&](ir::Operation &dot) {
    if (dot.code() != ir::OpCode::Dot || dot.has_attr(gpu_attr::kEngine))
      return;
    // Hopper's warpgroup MMA where the dot can take it: it reads B (and
    // A, but for a chain's later link) from shared memory itself, at twice
    // mma.sync's rate.
    if (wgmma_accumulator_layout(dot, options.num_warps, options.arch)) {
      dot.set_attr(gpu_attr::kEngine, std::string(gpu_attr::kWgmma));
      dot.set_attr(gpu_attr::kMmaWarps,
                   std::vector<int64_t>{options.num_warps, 1});
      if (wgmma_operand_a_layout(dot, options.num_warps, options.arch))
        dot.set_attr(gpu_attr::kMmaAInRegisters, int64_t{1});
      return;
    }
    std::optional<BlockedLayout> mma =
        mma_accumulator_layout(dot, options.num_warps, options.arch);
    if (!mma) {
      dot.set_attr(gpu_attr::kEngine, std::string(gpu_attr::kFma));
      return;
    }
    dot.set_attr(gpu_attr::kEngine, std::string(gpu_attr::kMma));
    dot.set_attr(gpu_attr::kMmaWarps, mma->warps_per_cta);
    if (mma_operand_a_layout(dot, options.num_warps, options.arch))
      dot.set_attr(gpu_attr::kMmaAInRegisters, int64_t{1});
  });
}

} // namespace blocc::nvptx
