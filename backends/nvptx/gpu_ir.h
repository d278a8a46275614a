// The GPU level of the IR: the block IR with the GPU backend's decisions
// written on its ops as attributes, so that each decision is made by one
// pass (gpu_passes.h), printed and parsed with the IR, and read by the
// passes after it and by the lowering, which decides nothing these
// attributes say:
//
//   %acc2 = dot %a, %b, %acc {engine = "mma.sync", mma_warps = [2, 2]}
//   %p = dot %s, %v, %z {engine = "mma.sync", mma_a_in_registers = 1,
//                        mma_warps = [4, 1]}
//   %d = dot %x, %y, %z {engine = "fma"}
//   %r = for %lb, %ub, %step, %acc {num_stages = 3} : ...
//     %t = load %ptrs {async_copy = 1} : tensor<128x32xf16>
//
//   - engine (every dot): "mma.sync", the tensor cores' warp-level MMA with
//     the accumulator's 16 x 8 tiles split over the warps as mma_warps
//     says (warps along M, along N); "wgmma", Hopper's warpgroup MMA
//     (sm_90a) reading its operands from shared memory, every warp along
//     M (mma_warps [num_warps, 1]; mma_layouts.h: wgmma_fragments_layout);
//     or "fma", fused multiply-adds on the CUDA cores (lower_dot.cpp).
//   - mma_a_in_registers (a dot on tensor cores of 16-bit A whose warps
//     split M alone): A is computed in registers that are already its
//     fragments (mma_layouts.h: mma_operand_a_layout, and on warpgroups
//     wgmma_operand_a_layout), not read from shared memory.
//   - num_stages (a for): its loads marked async_copy are copied into
//     shared memory with cp.async (or the Tensor Memory Accelerator) that
//     many iterations at a time, the next ones in flight while one is used
//     (pipeline_loads.h).
//   - tma (a descriptor_load a warpgroup MMA reads, or a descriptor_store,
//     sm_90a): its tile is copied by the Tensor Memory Accelerator into
//     shared memory (a store: out of it, where the value is written
//     first), with a tensor map the host encodes at each launch
//     (tensor_descriptors.cpp); a load is marked async_copy too where its
//     pipelined loop copies it ahead.
//
// Which threads hold which elements of each block value (its layouts,
// assign_layouts.h) follows from these and the IR; the gpu-assign-layouts
// pass writes it as attributes too (layout_attrs.h), so that the lowering
// reads every layout from the IR:
//
//   func @k(...) attributes {
//       blocked0 = "blocked<shape=[256] per_thread=[4] threads=[32]
//                   warps=[4]>"} {
//     %x = load %p {home = "#blocked0", layouts = "#blocked0"} : ...
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/layout.h"
#include "backends/nvptx/mma_layouts.h"
#include "backends/nvptx/shared_layouts.h"
#include "ir/function.h"

#include <optional>

namespace blocc::nvptx {

namespace gpu_attr {
inline constexpr const char *kEngine = "engine";
inline constexpr const char *kMma = "mma.sync";
inline constexpr const char *kWgmma = "wgmma";
inline constexpr const char *kFma = "fma";
inline constexpr const char *kMmaWarps = "mma_warps";
inline constexpr const char *kMmaAInRegisters = "mma_a_in_registers";
inline constexpr const char *kNumStages = "num_stages";
inline constexpr const char *kAsyncCopy = "async_copy";
inline constexpr const char *kPrefetch = "prefetch";
inline constexpr const char *kTma = "tma";
} // namespace gpu_attr

/// Whether the GPU passes have annotated `function` (a dot has an engine,
/// a loop its stages, or it carries layouts): then its attributes stand,
/// and the backend runs no pass again but gpu-assign-layouts where it
/// carries no layouts.
bool is_gpu_ir(const ir::Function &function);

/// Whether `dot` runs on tensor cores (engine "mma.sync" or "wgmma").
bool runs_on_tensor_cores(const ir::Operation &dot);

/// Whether `dot` runs as warpgroup MMAs (engine "wgmma").
bool runs_on_warpgroups(const ir::Operation &dot);

/// Whether `v` is a constant +0 (or integer 0), splat or not: what
/// cp.async's zero fill gives a masked-off element, and an accumulator a
/// dot need not read.
bool is_positive_zero(const ir::Value *v);

/// Whether some dot of `function` runs as warpgroup MMAs.
bool uses_warpgroup_mma(const ir::Function &function);

/// The accumulator layout of a dot on tensor cores (the m16n8k16 tiles in
/// its mma_warps grid, or the warpgroups' fragments; mma_layouts.h),
/// nullopt for the others.
std::optional<BlockedLayout> accumulator_layout(const ir::Operation &dot);

/// The tile in shared memory that a dot on tensor cores reads operand
/// `operand` from: fragment_tile for mma.sync, wgmma_operand_tile for
/// warpgroup MMAs.
FragmentTile operand_tile(const ir::Operation &dot, int operand,
                          bool k_fastest);

/// The layout in which a dot marked mma_a_in_registers takes A: its
/// registers are A's fragments. nullopt for the others.
std::optional<BlockedLayout> registers_a_layout(const ir::Operation &dot);

/// Whether a dot on tensor cores reads A, held in `layout` over `parent`,
/// from its registers rather than from a tile in shared memory: it is
/// marked mma_a_in_registers, `layout` is registers_a_layout (every
/// register a fragment element) and K's steps are few enough to be
/// straight-line code (kMaxStepsOfAInRegisters), which the fragments'
/// registers need.
bool takes_a_from_registers(const ir::Operation &dot,
                            const BlockedLayout &parent, const Layout &layout);
inline constexpr int64_t kMaxStepsOfAInRegisters = 8;

/// The stages of a loop (its num_stages; 1: not pipelined).
int loop_stages(const ir::Operation &loop);

/// Whether a pipelined loop copies `load` ahead (async_copy).
bool copied_ahead(const ir::Operation &load);

/// Whether a pipelined loop copies the elements of `load`, a vector no dot
/// reads, into its stages ahead, to be read into registers where the load
/// stands (prefetch).
bool prefetched(const ir::Operation &load);

/// Whether `op` is a descriptor_load whose tile the Tensor Memory
/// Accelerator copies into shared memory, or a descriptor_store whose tile
/// it copies out of it (tma).
bool copied_by_tma(const ir::Operation &op);

/// Whether `op`'s result lands in a tile of shared memory rather than in
/// registers: a load a pipelined loop copies ahead, or a descriptor_load
/// copied by the Tensor Memory Accelerator.
bool lands_in_tile(const ir::Operation &op);

/// Whether `op`, reading a tile in shared memory, is a view of that tile
/// (its result the same bytes, which it moves nowhere): a bitcast to
/// elements of the same width (fp8 loaded as bytes), or a permute of a
/// 2-D value, which a dot then reads with the other dimension fastest
/// (attention backward's Q^T for S^T = K Q^T, from the tile of Q that
/// dK = dS^T Q reads).
bool is_tile_view(const ir::Operation &op);

/// The layout in shared memory of a view's result (is_tile_view) whose
/// operand is in `shared`.
SharedLayout view_layout(const ir::Operation &view, const SharedLayout &shared);

/// The op whose result lands in a tile (lands_in_tile) that `v` is, or is
/// a view of (through views alone); nullptr where none.
const ir::Operation *landed_tile_source(const ir::Value *v);

/// Whether `v` is such a tile or a view of one (landed_tile_source).
bool is_landed_tile(const ir::Value *v);

/// Checks the GPU attributes of `function` for `num_warps` warps on `arch`:
/// known engines, a dot on tensor cores that tensor cores can take in its
/// warp grid (A in registers: 16-bit, warps along M alone), stages from 1
/// to 8 on loops only, async_copy on loads of pipelined loops only; and
/// where it carries layouts, that they are complete and consistent
/// (verify_layouts), values in shared memory included (layout_attrs.h:
/// written by a convert_layout from registers, read by convert_layout ops
/// of its block into registers, in a shared layout of its shape). Throws
/// blocc::Error naming the op.
void verify_gpu_ir(const ir::Function &function, int num_warps,
                   const GpuArch &arch);

} // namespace blocc::nvptx
