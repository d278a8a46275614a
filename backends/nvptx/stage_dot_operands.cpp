// gpu-stage-dot-operands: the shared memory of dots on tensor cores, made
// explicit. A dot on tensor cores reads A and B from swizzled tiles in
// shared memory with ldmatrix (mma_layouts.h: FragmentTile), unless A's
// registers are its fragments already (takes_a_from_registers). This pass
// gives each such operand its tile as a value in shared memory, in the
// function's shared layout of that tile (`swizzled<...>`, K fastest for
// elements other than 16 bits):
//
//   - a load a pipelined loop copies ahead (async_copy) lands in its tile:
//     the load itself takes the shared layout (its pointers keep theirs,
//     which say which thread copies which bytes), and each view of it
//     that the dot reads (gpu_ir.h: a bitcast, a permute), which moves
//     nothing, takes that tile as it sees it (permuted);
//   - any other operand is written there by a convert_layout to the shared
//     layout, in the orientation its registers run so that each thread
//     writes whole runs: right before the dot, or, where the dot is in a
//     pipelined loop and the operand is defined before it and read by
//     nothing else in it (attention's Q), right before the loop, so that
//     it is written once (and where an earlier loop's dot had it written
//     so already, that tile is read again).
//
//   %sa = convert_layout %a {layout = "#shared0"} : tensor<128x32xf16>
//   %c = dot %sa, %b, %acc {engine = "mma.sync", ...}
//
// Operands in shared memory already are left as they are: run twice, the
// pass changes nothing more.
#include "backends/nvptx/gpu_passes.h"

#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/gpu_ir.h"
#include "backends/nvptx/layout_attrs.h"
#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/pipeline_loads.h"
#include "ir/error.h"

#include <memory>

namespace blocc::nvptx {

using ir::OpCode;

namespace {

class DotOperandStager {
public:
  DotOperandStager(ir::Function &function, const GpuPassOptions &options)
      : function_(function), layouts_(LayoutAssignment::read(
                                 function, options.num_warps, options.arch)),
        known_(layouts_->shared_layouts()) {}

  void stage(ir::Operation &dot) {
    for (int side = 0; side < 2; ++side) {
      ir::Value *v = dot.operand(static_cast<size_t>(side));
      if (layouts_->shared_layout(v))
        continue; // in its tile already
      if (const ir::Operation *copied = landed_tile_source(v);
          copied && copied_by_tma(*copied)) {
        land_tma_copy(dot, side, const_cast<ir::Operation &>(*copied), v);
        continue;
      }
      ir::Operation *load = copied_load(v);
      // A copied load's elements are copied as its layout holds them.
      const Layout *layout = layouts_->home(load ? load->result() : v);
      if (!layout)
        throw Error("internal: GPU IR: " + dot.describe() + ": operand " +
                    std::to_string(side) + " has no layout");
      const BlockedLayout &parent = layouts_->parent(*layout);
      if (side == 0 && takes_a_from_registers(dot, parent, *layout))
        continue;
      if (load) {
        land_copy(dot, side, *load, v, parent, *layout);
        continue;
      }
      write_tile(dot, side, v, parent, *layout);
    }
  }

private:
  /// The load copied ahead that `v` is, or a view of; nullptr if none.
  static ir::Operation *copied_load(ir::Value *v) {
    const ir::Operation *op = landed_tile_source(v);
    return op && op->code() == OpCode::Load ? const_cast<ir::Operation *>(op)
                                            : nullptr;
  }

  std::string tile_name(const FragmentTile &tile, int side) {
    return shared_layout_name(function_, known_, shared_layout_of(tile, side));
  }

  /// The copies of `load`, held in `layout` over `parent`, land in the
  /// tile the dot reads (`v`: the load, or a view of it) as its registers
  /// run, as pipeline_loads.h copies it; each view between is in that
  /// tile too, as it sees it.
  /// The Tensor Memory Accelerator writes the tile as the dot reads it
  /// (tma.h, landed_tma_layout).
  void land_tma_copy(ir::Operation &dot, int side, ir::Operation &load,
                     ir::Value *v) {
    const std::vector<const ir::Operation *> views = views_from_source(v);
    set_layouts(load, views, landed_tma_layout(dot, side, views));
  }

  /// `load`'s tile in `tile`, and each of its views in the tile as it sees
  /// it.
  void set_layouts(ir::Operation &load,
                   const std::vector<const ir::Operation *> &views,
                   SharedLayout tile) {
    load.set_attr(gpu_attr::kLayout,
                  shared_layout_name(function_, known_, tile));
    for (const ir::Operation *view : views) {
      tile = view_layout(*view, tile);
      const_cast<ir::Operation *>(view)->set_attr(
          gpu_attr::kLayout, shared_layout_name(function_, known_, tile));
    }
  }

  void land_copy(ir::Operation &dot, int side, ir::Operation &load,
                 ir::Value *v, const BlockedLayout &parent,
                 const Layout &layout) {
    const std::vector<const ir::Operation *> views = views_from_source(v);
    set_layouts(load, views,
                landed_tile_layout(dot, side, views, parent, layout));
  }

  void write_tile(ir::Operation &dot, int side, ir::Value *v,
                  const BlockedLayout &parent, const Layout &layout) {
    const std::string name = tile_name(
        operand_tile(dot, side,
                     fragment_tile_k_fastest(dot, parent, layout, side)),
        side);
    ir::Operation *before = &dot;
    if (ir::Operation *loop = dot.parent_op();
        loop && loop->code() == OpCode::For && loop_stages(*loop) >= 2 &&
        written_before_loop(dot, side, *loop->region(0)))
      before = loop;
    ir::Block *block = before->parent_block();
    ir::Value *tile =
        before != &dot ? tile_written_before(v, name, *before) : nullptr;
    if (!tile) {
      auto write = make_convert_layout(v, name, dot.loc());
      tile = write->result();
      block->insert(block->find(before), std::move(write));
    }
    dot.set_operand(static_cast<size_t>(side), tile);
  }

  /// The tile of `v` in layout `name` that an earlier loop's dot had
  /// written before it, in the block of `loop` and ahead of it (attention's
  /// Q, read by the loop over the unmasked blocks and the loop over the
  /// masked ones); nullptr if none. Reading that tile again, rather than
  /// writing another, leaves no register of `v` live across the loops.
  static ir::Value *tile_written_before(const ir::Value *v,
                                        const std::string &name,
                                        const ir::Operation &loop) {
    for (const auto &op : loop.parent_block()->ops()) {
      if (op.get() == &loop)
        break;
      if (op->code() == OpCode::ConvertLayout && op->operand(0) == v &&
          op->string_attr_or(gpu_attr::kLayout, "") == name)
        return op->result();
    }
    return nullptr;
  }

  ir::Function &function_;
  std::unique_ptr<LayoutAssignment> layouts_;
  std::vector<SharedLayout> known_;
};

} // namespace

void stage_dot_operands(ir::Function &function, const GpuPassOptions &options) {
  if (!carries_explicit_layouts(function))
    return;
  std::vector<ir::Operation *> dots;
  function.walk([&](ir::Operation &op) {
    if (runs_on_tensor_cores(op))
      dots.push_back(&op);
  });
  if (dots.empty())
    return;
  DotOperandStager stager(function, options);
  for (ir::Operation *dot : dots)
    stager.stage(*dot);
}

} // namespace blocc::nvptx
