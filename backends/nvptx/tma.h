// Copies of descriptor tiles by Hopper's Tensor Memory Accelerator (TMA):
// which descriptor_loads it can copy, and what the host encodes for each
// (runtime/cuda/tensor_map.h) and the kernel issues.
//
// A descriptor_load (ir/tensor_descriptor.h) is copied by TMA where a
// warpgroup MMA reads its tile from shared memory (sm_90a): its tile then
// lands where the MMA reads it, in the operand's canonical swizzled tile
// (wgmma_operand_tile), which is exactly what a TMA box with the same
// swizzling mode writes: rows of 128, 64 or 32 bytes whose 16-byte vectors
// are XORed with the row's phase, a tile whose rows are longer in atoms of
// 128 bytes, one box each. The tile's rows run along the array's last
// dimension, so A [M, K] lands K-major and B [K, N] N-major (16-bit B
// only: warpgroup MMAs transpose no other width). A tile the dot reads
// through a permute (attention's K^T from a tile of K's rows: B given as
// [N, K]) lands the other way round, B K-major (and A M-major, 16-bit
// only), the permute a view of the same bytes (gpu_ir.h: is_tile_view).
//
// The host encodes one tensor map per such load at every launch: the base
// must be a pointer argument aligned to 16 bytes, the extents and the
// outer stride integer arguments or constants (the outer stride a multiple
// of 16 bytes, as the argument's divisibility proves), the last stride 1.
// Elements of a box outside the array read zero, as a descriptor_load's
// do.
#pragma once

#include "backends/nvptx/gpu_arch.h"
#include "backends/nvptx/mma_layouts.h"
#include "ir/function.h"
#include "runtime/cuda/tensor_map.h"

#include <optional>
#include <string>

namespace blocc::nvptx {

/// One descriptor_load (or descriptor_store) as TMA copies it.
struct TmaCopy {
  const ir::Operation *op = nullptr;
  const ir::Operation *dot = nullptr; // a load's reader
  int operand = 0;                    // 0: the dot's A, 1: its B
  /// Where a load lands; where a store's value is staged for the copy.
  FragmentTile tile;
  /// What the host encodes: box = one atom (columns of an atom x rows).
  cuda::TensorMapRequest map;
  /// Boxes a copy issues: one per atom along the rows.
  int64_t boxes = 1;
  /// Elements of the array's last dimension one box covers.
  int64_t box_columns = 0;
  int64_t bytes() const { return tile.bytes(); }
};

/// The TMA copy of `load`, a descriptor_load of `function`, for a kernel of
/// `num_warps` warps on `arch`; nullopt, with the reason in `why` where
/// given, where TMA cannot copy it (not sm_90a, not rank 2, not read by
/// one dot on warpgroup MMAs as A or 16-bit B from shared memory, a base,
/// extent or stride the host cannot encode, a tile whose rows fit no
/// swizzling mode).
std::optional<TmaCopy> tma_copy(const ir::Function &function,
                                const ir::Operation &load, int num_warps,
                                const GpuArch &arch,
                                std::string *why = nullptr);

/// The TMA copy of a descriptor_load marked tma in GPU IR (its dot has
/// its engine): as tma_copy decides it. Throws blocc::Error naming the op
/// where TMA cannot copy it.
TmaCopy marked_tma_copy(const ir::Function &function, const ir::Operation &load,
                        int num_warps, const GpuArch &arch);

} // namespace blocc::nvptx
