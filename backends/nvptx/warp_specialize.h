// Warp specialization of a pipelined loop (the gpu-warp-specialize pass,
// gpu_passes.h): a loop that asks for it (bl::LoopOptions::warp_specialize,
// the block IR's `warp_specialize = 1`) and whose tiles the Tensor Memory
// Accelerator copies gets a producer warpgroup of its own, as
// FlashAttention-3 and CUTLASS's warp-specialized mainloops do on Hopper:
//
//   the kernel's num_warps (the consumers) run the kernel as written, but
//   issue no copies: each iteration waits for its stage's `full` mbarrier,
//   multiplies, and once the MMAs that read the stage are done every warp
//   arrives on that stage's `empty` mbarrier (where the loop keeps its
//   accumulating MMAs in flight, once the next iteration's dot has waited
//   for them; else at the end of the iteration, whose MMAs are all waited
//   for there);
//   four more warps (the producer warpgroup, after the consumers) give up
//   registers (setmaxnreg) to the consumers; the first of them waits for
//   a stage's `empty` phase, announces its bytes on `full` and issues its
//   TMA copies, iteration after iteration, as far ahead as the stages
//   reach. No barrier of the whole CTA stands in the loop.
//
// The producer computes the copies' coordinates with the loop's address
// ops (pipeline_loads.h) from values the consumers hand it through shared
// memory before the loop (the loop's bounds, and the values from before
// the loop that those ops read): it runs none of the kernel's other code.
//
// Where a loop asks for it but cannot have it (below), it runs as an
// ordinary pipelined loop: the same kernel compiles for every target.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/pipeline_loads.h"
#include "ir/axis_info.h"
#include "ir/function.h"

#include <string>

namespace blocc::nvptx {

/// Accumulator registers a thread below which a loop is not specialized:
/// without a producer, two CTAs of such a kernel fit an SM.
inline constexpr int64_t kFewAccumulatorRegisters = 96;

/// Warps of the producer warpgroup a warp-specialized loop adds.
inline constexpr int kProducerWarps = 4;
/// Registers per thread: at the entry (what 12 warps can all hold), the
/// producer's after it gives up the rest (enough to issue copies), and
/// the consumers' after they take them (multiples of 8; at most 240,
/// what one or two consumer warpgroups can hold beside the producer).
inline constexpr int kRegistersAtEntry = 168;
inline constexpr int kProducerRegisters = 40;
inline constexpr int consumer_registers(int num_warps) {
  const int share = (65536 - 32 * kProducerWarps * kProducerRegisters) /
                    (32 * num_warps) / 8 * 8;
  return share < 240 ? share : 240;
}

/// Why `loop` cannot be warp-specialized in `function` compiled for
/// `num_warps` warps and `arch`, given its pipelining plan (nullptr: not
/// pipelined); empty where it can. It can where it stands in the kernel's
/// top-level block (every consumer reaches it once), is pipelined with
/// every tile copied by TMA and read by warpgroup MMAs, nothing prefetched, a
/// positive constant step, address ops that compute integer scalars
/// without divisions (whose checks stop the whole CTA) from integer
/// scalars, num_warps is 4 or 8 (one or two consumer warpgroups), and its
/// dots' accumulators take kFewAccumulatorRegisters a thread or more.
std::string why_not_warp_specialized(const ir::Function &function,
                                     const ir::Operation &loop,
                                     const PipelinedLoop *plan,
                                     const ir::AxisInfoAnalysis &axis_info,
                                     int num_warps);

/// The loop of `function` marked warp_specialize (nullptr: none). In GPU
/// IR (after gpu-warp-specialize) at most one loop carries the mark.
const ir::Operation *warp_specialized_loop(const ir::Function &function);

/// The warps a CTA of `function` runs: num_warps, plus the producer
/// warpgroup where a loop is warp-specialized.
int cta_warps(const ir::Function &function, int num_warps);

} // namespace blocc::nvptx
