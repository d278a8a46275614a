// The GPU backend's `layouts` stage (BLOCC_DUMP=layouts, blocc::Stage::
// Layouts): the GPU IR lowered (gpu_ir.h: the block IR with the GPU passes'
// decisions as attributes, each block value's layouts among them,
// layout_attrs.h), in the spirit of Triton's TritonGPU IR (ttgir), with
// what its layouts mean as comments: which are converted through shared
// memory and which computed in each, in words. The parents (layout.h) are
// listed first with their linear maps, then the IR:
//
//   // layouts of add for 4 warps:
//   //   #blocked0 = blocked<shape=[1024] per_thread=[4] threads=[32]
//   //   warps=[4]>
//   func @add(%x: ptr<f32> {divisibility = 16}, ...) attributes {
//       blocked0 = "blocked<shape=[1024] per_thread=[4] threads=[32]
//                   warps=[4]>"} {
//     %3 = arange {end = 1024, layouts = "#blocked0", start = 0}
//          : tensor<1024xi32>  // #blocked0
//     %9 = load %8, %7 {home = "#blocked0", layouts = "#blocked0"}
//          : tensor<1024xf32> loc("add.cpp":9)  // #blocked0
//     store %12, %11, %7 {store_layout = "#blocked0"}
//         loc("add.cpp":10)  // stores from #blocked0
//
// A value needed in several layouts lists them all. One with a home
// layout (loads, reduction and scan results, loop-carried values, if
// results) is produced in its home and converted through shared memory
// to the others: "#blocked0, converted to #blocked1"; any other value is
// computed in each: "#blocked0 and #blocked1, computed in each". A layout
// that uses a parent partially says how: "slice(#blocked1, [1])" (parent
// dimension 1 sliced away: a value about to be expanded along it),
// "#blocked0 permuted [1, 0]" (value dimension k on parent dimension
// dims[k]), "#blocked2 with size 1 along [0]" (a value about to be
// broadcast). Stores name the layout they write from, reductions the one
// they read their operands in, and ops with regions the layouts of their
// regions' block arguments ("body argument 1: #blocked0"). Dots say
// whether they run on tensor cores; a software-pipelined loop says in how
// many stages, and each load it pipelines that it is copied ahead into
// shared memory (pipeline_loads.h).
//
// The comments leave valid IR: the text reads back into the same function.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "ir/function.h"

#include <string>

namespace blocc::nvptx {

/// `function` is GPU IR. Throws blocc::Error naming the op for IR the
/// backend cannot lower.
std::string print_layouts(const ir::Function &function, int num_warps,
                          const GpuArch &arch);

} // namespace blocc::nvptx
