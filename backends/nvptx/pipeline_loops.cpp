// The gpu-pipeline-loops pass (gpu_passes.h): the loops pipeline_loads.h
// chooses, written on them and their loads (gpu_ir.h).
#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/pipeline_loads.h"

namespace blocc::nvptx {

namespace {

/// Whether some loop body holds a dot on tensor cores: the loads of no
/// other loop are pipelined, and most kernels have none, so they skip the
/// analyses below.
bool loop_feeds_tensor_cores(ir::Function &function) {
  bool found = false;
  function.walk([&](ir::Operation &op) {
    const ir::Operation *parent = op.parent_op();
    found = found || (runs_on_tensor_cores(op) && parent &&
                      parent->code() == ir::OpCode::For);
  });
  return found;
}

} // namespace

void pipeline_loops(ir::Function &function, const GpuPassOptions &options) {
  if (options.num_stages < 2 || !loop_feeds_tensor_cores(function))
    return;
  ir::AxisInfoAnalysis axis_info(function);
  std::unique_ptr<LayoutAssignment> layouts = LayoutAssignment::of(
      function, axis_info, options.num_warps, options.arch);
  for (auto &[loop, plan] : choose_pipelined_loops(
           function, *layouts, axis_info, options.num_stages, options.arch)) {
    if (loop->has_attr(gpu_attr::kNumStages))
      continue; // decided already
    auto &annotated = const_cast<ir::Operation &>(*loop);
    annotated.set_attr(gpu_attr::kNumStages, int64_t{plan.stages});
    for (const PipelinedLoad &load : plan.loads)
      const_cast<ir::Operation *>(load.load)->set_attr(gpu_attr::kAsyncCopy,
                                                       int64_t{1});
  }
}

} // namespace blocc::nvptx
