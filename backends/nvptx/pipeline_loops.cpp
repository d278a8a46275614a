// The gpu-pipeline-loops pass (gpu_passes.h): the loops pipeline_loads.h
// chooses, written on them and their loads (gpu_ir.h). In the explicit
// form (layout_attrs.h) a load that feeds a dot may reach it through
// convert_layout ops; once it is copied ahead it never lives in registers
// (the dot reads its stage of shared memory in place), so those
// conversions go and the dot, or the bitcast between them, reads the load
// as it is.
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

/// A load copied ahead, or a bitcast of one: it lives in shared memory.
bool is_staged(const ir::Value *v) { return is_landed_tile(v); }

/// Removes the conversions of values that live in shared memory: their
/// users read them as they are.
void read_staged_in_place(ir::Function &function) {
  std::vector<ir::Operation *> conversions;
  function.walk([&](ir::Operation &op) {
    if (op.code() == ir::OpCode::ConvertLayout)
      conversions.push_back(&op);
  });
  // In program order, so that a chain goes link by link.
  for (ir::Operation *convert : conversions)
    if (is_staged(convert->operand(0))) {
      function.replace_all_uses(convert->result(), convert->operand(0));
      convert->parent_block()->erase(convert);
    }
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
    for (const PrefetchedLoad &load : plan.prefetched)
      const_cast<ir::Operation *>(load.load)->set_attr(gpu_attr::kPrefetch,
                                                       int64_t{1});
  }
  read_staged_in_place(function);
}

} // namespace blocc::nvptx
