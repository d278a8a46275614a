// How a block value moves from one layout to another, read off the linear
// layouts: for each index of the destination, the source index holding the
// same element (the source's inverse after the destination) tells whether
// a thread already holds what it needs (a renumbering of its registers),
// whether it comes from another lane of the same warp (warp shuffles), or
// from another warp (a trip through shared memory). Deriving this from the
// maps covers every pair of layouts, MMA operands and slices included,
// with one rule.
#pragma once

#include "ir/linear_layout.h"

#include <optional>
#include <string>
#include <vector>

namespace blocc::nvptx {

enum class ConversionPath {
  Registers,   // every thread already holds its elements
  Shuffles,    // elements move between the lanes of a warp
  SharedMemory // elements move between warps
};

/// The cheapest path that converts a value held in `from` to `to`. Both
/// map (register, lane, warp) to the same coordinates; where `from`
/// replicates an element, the copy with the replicated bits 0 is the one
/// read, so a replicated source may be routed through more than it needs.
ConversionPath conversion_path(const ir::LinearLayout &from,
                               const ir::LinearLayout &to);

/// A conversion that stays within each warp, read off the two layouts:
/// destination register r of the thread in lane `lane` holds source
/// register `source_register[r]` of lane `lane_of(lane) ^ lane_xor[r]`,
/// where lane_of maps lane bit b to `lane_images[b]` (the identity for a
/// thread that keeps its lane). It exists where neither a destination
/// thread's lane nor its warp changes which source register it reads: all
/// lanes then hand over the same register, one shuffle per register (none
/// where every element stays in its lane).
struct WarpRoute {
  std::vector<int64_t> source_register;
  std::vector<int64_t> lane_xor;
  std::vector<int64_t> lane_images;
  /// Whether any element changes lanes.
  bool crosses_lanes() const;
  /// Whether lane_of is the identity: shuffles by XOR of the lane.
  bool keeps_lanes() const;
};

/// The route from `from` to `to` within each warp, or nullopt where the
/// conversion needs shared memory (elements cross warps, or which register
/// a thread reads depends on its lane).
std::optional<WarpRoute> warp_route(const ir::LinearLayout &from,
                                    const ir::LinearLayout &to);

/// "registers", "shuffles" or "shared memory".
std::string describe(ConversionPath path);

} // namespace blocc::nvptx
