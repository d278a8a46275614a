// gpu-stage-conversions: the shared memory of layout conversions, made
// explicit. A convert_layout whose elements cannot stay within each warp
// (conversion_path.h: no warp_route, as elements cross warps or a thread's
// lane decides which register it reads) goes through shared memory; this
// pass splits it into the value in shared memory and its read:
//
//   %s = convert_layout %v {layout = "#shared0"}  // %v written to shared
//   %w = convert_layout %s {layout = "#blocked1"} // read back in #blocked1
//
// #shared0 is the function's shared layout (layout_attrs.h) that the
// lowering writes conversions through: row by row, padded after every 32
// elements by the shorter of the runs the write and the read move as
// vectors (SharedLayout::for_conversion), one per shape and pad. The write
// takes the conversion's place, right before its read, so that nothing
// else uses the kernel's shared buffer between them. Conversions within
// registers or warps stay single ops.
#include "backends/nvptx/gpu_passes.h"

#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/conversion_path.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/layout_attrs.h"
#include "backends/nvptx/shared_layouts.h"

#include "backends/llvm/llvm_types.h"

#include <memory>

namespace blocc::nvptx {

using ir::OpCode;

void stage_conversions(ir::Function &function, const GpuPassOptions &options) {
  if (!carries_explicit_layouts(function))
    return;
  std::unique_ptr<LayoutAssignment> layouts =
      LayoutAssignment::read(function, options.num_warps, options.arch);
  std::vector<SharedLayout> known = layouts->shared_layouts();
  std::vector<ir::Operation *> converts;
  function.walk([&](ir::Operation &op) {
    if (op.code() == OpCode::ConvertLayout)
      converts.push_back(&op);
  });
  for (ir::Operation *convert : converts) {
    ir::Value *v = convert->operand(0);
    const Layout *from = layouts->home(v);
    const Layout *to = layouts->home(convert->result());
    if (!from || !to || from->shape != to->shape)
      continue; // a half already, or nothing reads it
    if (const ir::Operation *load = v->defining_op();
        load && lands_in_tile(*load))
      continue; // read in place from its stage (gpu-pipeline-loops)
    if (warp_route(linear_layout_of(layouts->parent(*from), *from),
                   linear_layout_of(layouts->parent(*to), *to)))
      continue;
    auto write = make_convert_layout(
        v,
        shared_layout_name(
            function, known,
            SharedLayout::for_conversion(
                layouts->parent(*from), *from, layouts->parent(*to), *to,
                llvm_backend::storage_bytes(v->type().element()))),
        convert->loc());
    ir::Value *shared = write->result();
    ir::Block *block = convert->parent_block();
    block->insert(block->find(convert), std::move(write));
    convert->set_operand(0, shared);
  }
}

} // namespace blocc::nvptx
