// Layout arithmetic for the ops that move elements between positions of a
// block: reshape, permute, join, split and cat (lower_shape.cpp).
//
// Every block dimension is a power of two, so a layout (layout.h) sends
// each bit of a thread's register number, lane id and warp id to one bit of
// the row-major index of the element it holds, or to none (a replica or a
// slice): its *bit images*. Such a layout survives a reshape unchanged —
// the row-major index is what a reshape keeps — and the reshaped value
// needs no data movement whenever some blocked layout of the new shape has
// the same images (registers may be renumbered: they are a thread's own).
// `reshaped_parent` builds that layout where one exists.
//
// Permute, join, split and cat never need one: a permuted value is the
// operand with its dimensions relabelled; a join's operands are the result
// sliced along its last dimension; a split's operand is the result's parent
// with a dimension of 2 added inside each thread; a cat's operands are the
// result's parent halved along the axis (where the halves differ by a lane
// or warp bit, each thread holds both and selects its own).
//
// Whether a result register is an operand register in every thread — and
// which — is checked by running the layouts' thread arithmetic for every
// thread of the CTA (`register_sources`), so the lowering relies on no
// reasoning above but what it verifies.
#pragma once

#include "backends/nvptx/layout.h"
#include "ir/function.h"

#include <functional>
#include <optional>
#include <vector>

namespace blocc::nvptx {

/// A reshape that only adds or drops dimensions of size 1: lowered like
/// expand_dims (assign_layouts.h), not by lower_shape.cpp.
bool only_adds_or_drops_ones(const ir::Operation &reshape);
/// The ops lower_shape.cpp lowers: permute, join, split, cat and the
/// reshapes that move elements between dimensions.
bool moves_elements(const ir::Operation &op);
/// True when `layout` visits its parent's dimensions out of order (a
/// permuted value): a load in it would not be coalesced.
bool is_transposed(const Layout &layout);

/// A value of `shape` on every dimension of parent `parent` in order.
Layout whole_layout(int parent, const std::vector<int64_t> &shape);

/// The value coordinates of register r's element in `thread` of the CTA,
/// exactly as kernel_lowering.cpp computes them (replicas wrap around).
std::vector<int64_t> element_coordinates(const BlockedLayout &parent,
                                         const Layout &layout, int64_t thread,
                                         int64_t r);

/// A blocked layout of `shape` whose threads hold the same elements (by
/// row-major index) as the threads of `layout`, or nullopt when none does.
std::optional<BlockedLayout> reshaped_parent(const BlockedLayout &parent,
                                             const Layout &layout,
                                             const std::vector<int64_t> &shape,
                                             int num_warps);
/// True when the two layouts of one shape put every element in the same
/// threads, with the same number of registers.
bool same_threads(const BlockedLayout &a, const BlockedLayout &b,
                  int num_warps);
/// `parent` with a last dimension of 2 held in each thread (a split's
/// operand).
BlockedLayout with_pair_dimension(const BlockedLayout &parent);
/// `parent` with dimension d halved (a cat's operands).
BlockedLayout halved(const BlockedLayout &parent, int d);

/// Where an element of an op's result comes from: which operand, and its
/// coordinates there.
struct ElementSource {
  int operand = 0;
  std::vector<int64_t> coordinates;
};
using SourceMap =
    std::function<ElementSource(const std::vector<int64_t> &result)>;
/// The source of each result element of a reshape, permute, join, cat, or
/// of result `result` of a split.
SourceMap source_map(const ir::Operation &op, size_t result);

/// For one result register: the operand register holding its element in
/// every thread, and the operand it comes from (-1: it differs between
/// threads, as the element's index along the joined or concatenated
/// dimension says).
struct RegisterSource {
  int64_t reg = 0;
  int operand = 0;
};
/// The source of every register of `result` in the operand layouts, or
/// nullopt when some element is not in the same thread's registers.
std::optional<std::vector<RegisterSource>>
register_sources(const std::vector<BlockedLayout> &parents,
                 const Layout &result, const std::vector<Layout> &operands,
                 const SourceMap &source, int num_warps);

} // namespace blocc::nvptx
