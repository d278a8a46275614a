// Which loops are software-pipelined: loops whose loads feed dots on tensor
// cores, so that the tiles of the next iterations travel from global to
// shared memory (cp.async) while the current ones are multiplied.
//
// A `for` of the block IR is pipelined in S stages (num_stages, fewer where
// the tiles of S iterations would not fit in shared memory) when a
// descriptor_load marked tma (tma.h) reads tiles for a dot of its body on
// warpgroup MMAs, the Tensor Memory Accelerator then copying them ahead
// (mbarrier completion), or a load of its body:
//   - is read by dots of the same body that run on tensor cores
//     (mma_layouts.h), each as A or B, directly or through views of the
//     tile (gpu_ir.h: is_tile_view; a bitcast to the same width, fp8
//     loaded as bytes; a permute, attention backward's Q^T beside Q), and
//     by nothing else; every dot reads the tile in the same place (its
//     rows along the load's fastest dimension, swizzled alike); its
//     elements are 16-bit (f16, bf16), or its global rows run along K
//     (tf32, int8, fp8: their tiles keep K fastest, since ldmatrix
//     transposes 16-bit elements only, and a 16-byte copy cannot
//     transpose);
//   - has no `other` but 0 (cp.async fills masked-off bytes with zeros),
//     is not volatile, and its layout has no replicas;
//   - moves 4, 8 or 16 bytes per access (cp.async's sizes), with its mask
//     alike over each access;
// and its operands are computed in the body by side-effect-free arithmetic
// (the address ops) from the induction variable, values defined before the
// loop, and carried values whose next values the address ops compute too
// (pointers advanced by a step, as in a matmul's K loop). The loop must
// not store or run atomics: copies issued ahead would read memory before
// the iterations that write it.
//
// The lowering (lower_pipelined_loop.cpp) then computes the address ops
// again for iteration i + S - 1 while it runs iteration i, carrying the
// pointers that far ahead. The other input of such a dot, where it is
// computed before the loop (attention's Q), is written into shared memory
// once, before the loop, rather than at every iteration
// (gpu-stage-dot-operands); the number of stages leaves room for it.
//
// In a loop pipelined for its tiles, a load of a vector (rank 1) that
// meets the same conditions but feeds no dot is prefetched: copied ahead
// into bytes of the same stages, in its pointers' layout (threads holding
// the same element copy the same bytes), and read from its stage into
// registers where the load stands, as Triton does with attention
// backward's per-query statistics. Without it the load waits for global
// memory in every iteration.
#pragma once

#include "backends/nvptx/assign_layouts.h"
#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/mma_layouts.h"
#include "ir/axis_info.h"
#include "ir/function.h"

#include <cstddef>
#include <map>
#include <vector>

namespace blocc::nvptx {

/// A load whose tiles are copied into shared memory ahead of their dots.
struct PipelinedLoad {
  const ir::Operation *load = nullptr;
  /// The views of its tile that dots read (is_tile_view), in program
  /// order: they are the same bytes, and are not lowered either.
  std::vector<const ir::Operation *> views;
  int64_t width = 1; // elements one cp.async moves
  /// The tile it lands in, as the GPU IR spells it (its rows along the
  /// load's fastest dimension), and that tile.
  SharedLayout layout;
  SharedTile tile;
  int64_t offset = 0; // elements from the start of its stage
  /// The bytes its tile starts at a multiple of: 16 for ldmatrix, the
  /// swizzle's pattern for warpgroup MMAs (wgmma_tile_alignment).
  int64_t alignment = 16;
  bool warpgroups = false; // read by warpgroup MMAs
  /// A descriptor_load the Tensor Memory Accelerator copies (tma.h): one
  /// thread issues its boxes, which complete on the stage's mbarrier.
  bool tma = false;
};

/// A load of a vector that no dot reads (attention backward's per-query
/// log-sum-exp and delta), copied ahead like the tiles, into bytes of the
/// same stages, and read into registers where the load stands: its global
/// latency then hides behind the iterations between.
struct PrefetchedLoad {
  const ir::Operation *load = nullptr;
  int64_t width = 1;       // elements one cp.async moves
  int64_t byte_offset = 0; // bytes from the start of its stage
};

struct PipelinedLoop {
  int stages = 1;
  /// Bytes of the dots' inputs written before the loop
  /// (written_before_loop), which take shared memory beside the stages:
  /// up to where the stages start, with the padding before each tile.
  int64_t invariant_bytes = 0;
  /// Bytes of one stage: every pipelined tile of one iteration, a
  /// multiple of `alignment`, where the stages start at a multiple of it.
  int64_t stage_bytes = 0;
  int64_t alignment = 16;
  /// Whether warpgroup MMAs read some of its tiles (through the async
  /// proxy, which the copies must be fenced for).
  bool warpgroups = false;
  /// The body's dot on warpgroup MMAs whose MMAs stay in flight into the
  /// next iteration (nullptr: none): the loop's accumulator, read by it
  /// alone and yielded alone. Its MMAs then overlap the next iteration's
  /// wait and barrier: the dot waits for all but its own group
  /// (wgmma.wait_group 1), the iteration issues its copies after the dot
  /// and a barrier (when every warpgroup is done with the stage they go
  /// to), and the loop waits for the last group after it.
  const ir::Operation *mma_in_flight = nullptr;
  std::vector<PipelinedLoad> loads;
  std::vector<PrefetchedLoad> prefetched;
  /// Bytes the TMA copies of one stage bring (0: none): what the stage's
  /// mbarrier expects before its phase completes.
  int64_t tma_bytes() const {
    int64_t bytes = 0;
    for (const PipelinedLoad &load : loads)
      if (load.tma)
        bytes += load.tile.bytes();
    return bytes;
  }
  /// Whether some load is copied with cp.async (the others with TMA).
  bool copies_with_cp_async() const {
    if (!prefetched.empty())
      return true;
    for (const PipelinedLoad &load : loads)
      if (!load.tma)
        return true;
    return false;
  }
  /// The mbarriers of TMA copies, one of 8 bytes a stage, after the stages.
  int64_t barrier_bytes() const {
    return tma_bytes() ? 8 * int64_t{stages} : 0;
  }
  /// Shared memory the loop keeps: its invariant tiles, stages and
  /// mbarriers.
  int64_t kept_bytes() const {
    return invariant_bytes + stages * stage_bytes + barrier_bytes();
  }
  /// The address ops, in program order.
  std::vector<const ir::Operation *> address_ops;
  /// The carried values (by index among the loop's carried values) that
  /// the address ops read.
  std::vector<size_t> carried;
};

/// The views (gpu_ir.h: is_tile_view) between the op that landed `tile`
/// (landed_tile_source) and `tile`, in order from that op; none where
/// `tile` is its result.
std::vector<const ir::Operation *> views_from_source(const ir::Value *tile);

/// The tile a load copied ahead lands in, in the load's own coordinates,
/// where operand `operand` of `dot` (on tensor cores) reads it through
/// `views` and the load's registers are in `layout` over `parent`: the
/// copies land as those registers run (operand_runs_along_k of the
/// layout seen through the views), which the dot reads as the tile of
/// its operand (operand_tile, shared_layout_of).
SharedLayout landed_tile_layout(const ir::Operation &dot, int operand,
                                const std::vector<const ir::Operation *> &views,
                                const BlockedLayout &parent,
                                const Layout &layout);

/// Whether a tile the Tensor Memory Accelerator copies, which operand
/// `operand` of a dot reads through `views` (2-D permutes transpose it),
/// lands with K fastest: its rows run along the array's last dimension,
/// K for A and N for B as loaded, the other way round transposed.
bool tma_lands_k_fastest(int operand,
                         const std::vector<const ir::Operation *> &views);

/// The tile such a copy lands in, in the load's own coordinates.
SharedLayout landed_tma_layout(const ir::Operation &dot, int operand,
                               const std::vector<const ir::Operation *> &views);

/// Whether operand `operand` of `dot`, a dot on tensor cores in `body`
/// (a pipelined loop's), is written into shared memory once, before the
/// loop, rather than at every iteration: it is defined before the loop
/// and nothing else in the body reads it (where it is in shared memory at
/// all: not A read from registers).
bool written_before_loop(const ir::Operation &dot, int operand,
                         const ir::Block &body);

/// The loops of `function` worth pipelining with up to `num_stages`
/// stages, by their for op (none where num_stages is 1): what the
/// gpu-pipeline-loops pass (gpu_passes.h) writes into the GPU IR.
std::map<const ir::Operation *, PipelinedLoop> choose_pipelined_loops(
    const ir::Function &function, const LayoutAssignment &layouts,
    const ir::AxisInfoAnalysis &axis_info, int num_stages, const GpuArch &arch);

/// The plans of the loops the GPU IR pipelines (gpu_ir.h: num_stages,
/// async_copy), for the lowering. Throws blocc::Error naming the op where
/// a loop or load marked so cannot be pipelined.
std::map<const ir::Operation *, PipelinedLoop>
plan_pipelined_loops(const ir::Function &function,
                     const LayoutAssignment &layouts,
                     const ir::AxisInfoAnalysis &axis_info);

} // namespace blocc::nvptx
