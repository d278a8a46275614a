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

#include <string>

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

/// "registers", "shuffles" or "shared memory".
std::string describe(ConversionPath path);

} // namespace blocc::nvptx
