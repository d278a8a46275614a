// The GPU backend's passes over the GPU level of the IR (gpu_ir.h): each
// makes one kind of decision and writes it on the ops as attributes, for
// the passes after it and the lowering to read. blocc-opt runs them by
// name (--pass=gpu-accelerate-dot) or all of them (--pipeline=gpu), so
// that each has golden tests of its own (tests/lit/nvptx/gpu_*.bir).
//
//   gpu-tensor-descriptors
//                       which descriptor loads the Tensor Memory
//                       Accelerator copies (tma); the other descriptor
//                       accesses as pointer arithmetic and masked loads
//                       and stores (tensor_descriptors.cpp, tma.h)
//   gpu-accelerate-dot  which dots run on tensor cores, in which warp grid,
//                       and which take A from registers (accelerate_dot.cpp)
//   gpu-assign-layouts  which threads hold which elements of every block
//                       value: its home and the layouts it is needed in
//                       (assign_layouts_pass.cpp, layout_attrs.h)
//   gpu-explicit-conversions
//                       the layouts in the explicit form (layout_attrs.h):
//                       one layout per block value, an op per layout it is
//                       computed in, a convert_layout op per conversion
//                       (explicit_conversions.cpp)
//   gpu-remove-conversions
//                       conversions that cost more than they must: those
//                       between equal linear layouts, chains, duplicates,
//                       and values cheaper to compute again in the target
//                       layout than to convert (remove_conversions.cpp)
//   gpu-pipeline-loops  which loops copy the tiles of their dots ahead, in
//                       how many stages; the conversions between a copied
//                       load and its dot go (pipeline_loops.cpp)
//   gpu-warp-specialize the loop (asking for it) whose TMA copies a
//                       producer warpgroup issues (warp_specialize.cpp)
//   gpu-stage-dot-operands
//                       the operands of dots on tensor cores as values in
//                       swizzled tiles of shared memory: a copied load
//                       lands in its tile, any other operand is written
//                       there by a convert_layout (stage_dot_operands.cpp)
//   gpu-stage-conversions
//                       the shared memory of conversions made explicit:
//                       each conversion through shared memory becomes the
//                       value written there in a shared layout and its
//                       read in the target layout (stage_conversions.cpp)
//
// A pass leaves what the IR already says: an op that carries its
// attributes keeps them, so a hand-written decision stands.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "ir/function.h"

#include <string>
#include <vector>

namespace blocc::nvptx {

/// What the GPU passes decide for.
struct GpuPassOptions {
  int num_warps = 4;
  /// The most stages a pipelined loop may have (1: none).
  int num_stages = 3;
  GpuArch arch;
};

/// Marks the descriptor loads that the Tensor Memory Accelerator copies
/// (tma.h: tiles warpgroup MMAs read, on sm_90a) and rewrites every other
/// descriptor access into pointer arithmetic, a bounds mask and a masked
/// load or store (ir::lower_tensor_descriptors). Runs first, on block IR.
void tensor_descriptors(ir::Function &function, const GpuPassOptions &options);
/// Gives every dot its engine: tensor cores (mma.sync) where the dot's
/// types and shape and the warps allow, with the warp grid of
/// mma_layouts.h and A in registers for chained dots; else the CUDA cores.
void accelerate_dot(ir::Function &function, const GpuPassOptions &options);

/// Writes the layouts of every block value (assign_layouts.h) into the IR
/// (layout_attrs.h). Reads the dots' engines: run accelerate_dot first.
void assign_layouts(ir::Function &function, const GpuPassOptions &options);

/// Marks the loops worth pipelining (pipeline_loads.h) with their stages
/// and the loads they copy ahead, seeing through the conversions between
/// a load and its dot in the explicit form, which it then removes (a
/// copied load lives in shared memory, where the dot reads it). Reads the
/// dots' engines and the layouts: run accelerate_dot and assign_layouts
/// (and the explicit form's passes, or none of them) first.
void pipeline_loops(ir::Function &function, const GpuPassOptions &options);

/// Keeps the warp_specialize mark (warp_specialize.h) on the first loop
/// that asks for it and can have a producer warpgroup, and takes it off
/// every other loop, which then runs as an ordinary pipelined loop. Run
/// pipeline_loops first.
void warp_specialize(ir::Function &function, const GpuPassOptions &options);

/// Rewrites the layouts gpu-assign-layouts wrote (homes and the layouts
/// each value is needed in) into the explicit form: every block value in
/// one layout, ops computed per layout cloned, conversions as
/// convert_layout ops where the lowering converted. A load that IR marks
/// as copied ahead is used as it is (gpu-pipeline-loops, run after it,
/// removes the conversions of the loads it marks).
void make_conversions_explicit(ir::Function &function,
                               const GpuPassOptions &options);

/// Removes the convert_layout ops of the explicit form that cost more than
/// they must: a conversion between two layouts that are the same linear
/// layout, a conversion of a conversion (folded into one from the first
/// source), a second conversion of one value to one layout; and a
/// conversion of a value that cheap ops compute from values already held
/// in the target layout, where computing them again there costs less than
/// the conversion (conversion_path.h tells registers, shuffles or shared
/// memory apart). Loads, reductions, scans, dots, atomics and loop or if
/// results are never computed again, nor anything from another block.
/// Run make_conversions_explicit first; IR without explicit layouts is
/// left as it is.
void remove_conversions(ir::Function &function, const GpuPassOptions &options);

/// Puts each operand of a dot on tensor cores that ldmatrix reads (all but
/// A taken from registers: takes_a_from_registers) in a swizzled tile of
/// shared memory, the function's shared layout of the tile
/// (shared_layout_of): a load copied ahead (or a bitcast of one) takes
/// that layout itself; any other operand is converted to it right before
/// the dot, or before its pipelined loop where it is written once
/// (written_before_loop). Operands in shared memory already, and IR
/// without explicit layouts, are left as they are.
void stage_dot_operands(ir::Function &function, const GpuPassOptions &options);

/// Splits each convert_layout that goes through shared memory (no
/// warp_route: conversion_path.h) into a convert_layout to the function's
/// shared layout of its shape (layout_attrs.h: `#sharedN`, row by row, one
/// pad element every 32) and a convert_layout of that to the target
/// layout, right after it. Conversions within registers or warps, and IR
/// without explicit layouts, are left as they are. Run it last: the other
/// passes read conversions as single ops.
void stage_conversions(ir::Function &function, const GpuPassOptions &options);

struct GpuPassInfo {
  std::string name; // as blocc-opt's --pass names it
  std::string description;
  void (*run)(ir::Function &, const GpuPassOptions &);
};
/// Every GPU pass, in pipeline order.
const std::vector<GpuPassInfo> &gpu_passes();

/// Runs every GPU pass on `function`, in order, and checks the result
/// (verify_gpu_ir).
void run_gpu_pipeline(ir::Function &function, const GpuPassOptions &options);

} // namespace blocc::nvptx
