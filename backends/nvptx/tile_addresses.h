// The addresses a thread reads or writes in a swizzled tile
// (shared_layouts.h: SharedTile): ldmatrix's row addresses, cp.async's
// destinations and the staging stores of a dot's operands.
//
// Each access is (row, column) = a thread part (from the lane and warp,
// computed once at run time) plus a constant part (a register's offset, a
// step along K, a tile along M or N) with no bit in common with any
// thread's part. The swizzle is linear over GF(2), so the offset of such
// a sum is the XOR of the two parts' offsets. Of the constant's offset,
// the bits no thread's offset can have are added (an immediate of the
// address), and the others are XORed into the thread's offset at run
// time: one base register per distinct pattern (ldmatrix stepping along K
// in a 128-byte swizzle: 4 of them), where Triton keeps a pointer per
// pattern alike. A constant part that shares bits with the thread's (none
// does in the lowering) takes the whole offset at run time instead.
#pragma once

#include "backends/nvptx/shared_layouts.h"
#include "ir/linear_layout.h"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <map>

namespace blocc::nvptx {

/// The offset (in elements, i32) of (row, column) in `tile`, computed at
/// run time: row * columns + ((column / vector) ^ phase(row)) * vector +
/// column % vector (in atoms of W columns where the swizzle has them: the
/// atom's start plus row * W plus the same within it), which is
/// SharedTile::offsets() (tests check it).
llvm::Value *emit_swizzled_offset(llvm::IRBuilder<> &b, const SharedTile &tile,
                                  llvm::Value *row, llvm::Value *column);

/// A thread's part of its accesses: its (row, column) in the tile and the
/// bits any thread's row and column may have.
struct ThreadPart {
  llvm::Value *row = nullptr, *column = nullptr;
  int64_t row_bits = 0, column_bits = 0;
};

/// The thread part that `layout` ((lane, warp) -> (dim0 = row, dim1 =
/// column)) gives, computed from `lane` and `warp` bit by bit.
ThreadPart emit_thread_part(llvm::IRBuilder<> &b,
                            const ir::LinearLayout &layout, llvm::Value *lane,
                            llvm::Value *warp);

/// The thread part of the accesses of a value held in a blocked layout,
/// whose thread's first element the lowering has at run time (`row`,
/// `column` of the tile): `layout` is the value's linear layout
/// (layout.h: register, lane, warp -> its dimensions), `row_dim` the
/// dimension that runs along the tile's rows. Its registers' offsets are
/// the constant parts.
ThreadPart thread_part_of(const ir::LinearLayout &layout, int row_dim,
                          llvm::Value *row, llvm::Value *column);

class TileAddresses {
public:
  /// The address of element `index` (i32, from the tile's start).
  using ElementAt = std::function<llvm::Value *(llvm::Value *index)>;

  TileAddresses(llvm::IRBuilder<> &b, const SharedTile &tile, ThreadPart thread,
                llvm::Type *element, ElementAt element_at);

  /// The index of element (thread row + row, thread column + column).
  llvm::Value *index(int64_t row, int64_t column);
  /// Its address: a base (one per pattern of XORed bits) and an
  /// immediate.
  llvm::Value *at(int64_t row, int64_t column);
  /// The address of (thread row + row, thread column + column), computed
  /// whole at run time (a step along K of a loop).
  llvm::Value *at(llvm::Value *row, llvm::Value *column);

private:
  /// The constant's offset split into the bits XORed into the thread's
  /// offset and those added; nullopt where the constant shares bits with
  /// the thread part.
  std::optional<std::pair<int64_t, int64_t>> split(int64_t row,
                                                   int64_t column) const;
  llvm::Value *base_index(int64_t xored);

  llvm::IRBuilder<> &b_;
  SharedTile tile_;
  ir::LinearLayout offsets_;
  ThreadPart thread_;
  llvm::Type *element_;
  ElementAt element_at_;
  int64_t thread_offset_bits_ = 0; // bits any thread's offset may have
  std::map<int64_t, llvm::Value *> base_index_, base_address_;
};

} // namespace blocc::nvptx
