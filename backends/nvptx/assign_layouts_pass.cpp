// The gpu-assign-layouts pass (gpu_passes.h): the layouts LayoutAssignment
// (assign_layouts.h) chooses for every block value, written on the ops
// (layout_attrs.h) for the passes after it and the lowering to read.
#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/gpu_passes.h"
#include "backends/nvptx/layout_attrs.h"

namespace blocc::nvptx {

void assign_layouts(ir::Function &function, const GpuPassOptions &options) {
  // Layouts already written stand, as a whole: they depend on each other
  // (a value's operands are needed in the layouts it is), so a kernel has
  // all of its layouts chosen by one walk or none.
  if (carries_layouts(function))
    return;
  // The layouts follow the decisions before them (a dot's engine and warp
  // grid): those must hold, and a message about them is the clearer one.
  verify_gpu_ir(function, options.num_warps, options.arch);
  ir::AxisInfoAnalysis axis_info(function);
  LayoutAssignment layouts(function, axis_info, options.num_warps,
                           options.arch);
  write_layouts(function, layouts);
}

} // namespace blocc::nvptx
