// Block pointers (tl.make_block_ptr, tl.advance, and tl.load / tl.store
// with boundary_check): a tile of a strided N-d array, named by the array's
// base, shape and strides and the tile's offsets.
//
//   auto a = bl::make_block_ptr(a_ptr, {M, K}, {K, 1}, {pid_m * BM, 0},
//                               {BM, BK}, {1, 0});
//   auto acc = bl::zeros({BM, BN}, bl::float32);
//   for (auto k : bl::range(0, K, BK)) {
//     acc += bl::dot(bl::load(a, {0, 1}), bl::load(b, {0, 1}));
//     a = bl::advance(a, {0, BK});   // loop-carried, like any Tensor
//     b = bl::advance(b, {BK, 0});
//   }
//
// Design decision: the block IR has no block-pointer type. A BlockPtr is a
// frontend value holding scalar Tensors (the base pointer; the array's shape
// and strides as int64; the tile's offsets, kept as int64) and the static
// block shape and order. A bl::load / bl::store that checks every dimension
// (zero padding, no cache hint, rank up to 3) is one descriptor access in
// the IR (ir/tensor_descriptor.h, with int64 offsets), which a GPU backend
// may copy with the Tensor Memory Accelerator and every other backend
// rewrites into what follows. Every other access desugars at trace time
// into a block of pointers,
//   base + sum_i (offset_i + arange(0, block_shape[i])) * stride_i,
// each term broadcast over the block's other dimensions and computed in
// int64, and, for the dimensions in `boundary_check`, the mask
//   0 <= offset_i + arange_i < shape_i,
// which is exactly what Triton's RewriteTensorPointer pass produces. The
// axis-info analysis then sees the contiguity (stride 1 on the fastest
// dimension) as it would for hand-written pointer arithmetic.
//
// Because the dynamic parts are Tensor variables, assigning a BlockPtr
// (p = bl::advance(p, ...)) rebinds those variables, so a BlockPtr declared
// before a bl::range or bl::if_ and reassigned inside is carried out of it
// like any Tensor. The static parts (element type, block shape, order) may
// not change on assignment: that is what keeps a carried block pointer one
// type.
//
// Semantics follow Triton's: shape and strides may be any integer scalars
// (converted to int64, sign-extended when signed); offsets and advance
// steps must be integers of at most 32 bits (a 64-bit offset is an error,
// as in Triton); `order` must be a permutation of the dimensions (it is a
// layout hint and changes no address); boundary_check lists dimensions,
// each at most once. Where Triton leaves out-of-bounds lanes undefined (no
// padding option), blocc reads zero: Padding::Zero is the default.
#pragma once

#include "blocc/ops.h"

#include <array>
#include <vector>

namespace blocc {

/// What a load through a block pointer reads outside the array's bounds
/// (on the dimensions it checks): zero, or NaN (floating-point only).
enum class Padding { Zero, NaN };

class BlockPtr {
public:
  /// An empty block pointer, to be assigned from bl::make_block_ptr.
  BlockPtr() = default;
  BlockPtr(const BlockPtr &other) = default;
  BlockPtr(BlockPtr &&other) = default;
  /// Rebinds this variable's tensors to `other`'s (so that bl::range and
  /// bl::if_ carry them) and takes its static layout, which must match the
  /// one this variable already holds, if any.
  BlockPtr &operator=(const BlockPtr &other);
  BlockPtr &operator=(BlockPtr &&other) {
    return *this = static_cast<const BlockPtr &>(other);
  }

  /// False for a default-constructed block pointer.
  bool valid() const { return !block_shape_.empty(); }
  int rank() const { return static_cast<int>(block_shape_.size()); }
  /// The tile's shape: what a load returns and a store takes.
  const Shape &block_shape() const { return block_shape_; }
  const std::vector<int> &order() const { return order_; }
  /// The element type the base points to.
  DType dtype() const { return pointer_type_.pointee(); }

  /// The array's base pointer (a scalar pointer).
  const Tensor &base() const { return base_; }
  /// The array's extent along `dim` (int64 scalar).
  const Tensor &shape(int dim) const { return shape_.at(dim); }
  /// The distance in elements between neighbours along `dim` (int64).
  const Tensor &stride(int dim) const { return strides_.at(dim); }
  /// Where the tile starts along `dim` (int64 scalar).
  const Tensor &offset(int dim) const { return offsets_.at(dim); }

private:
  friend struct BlockPtrAccess;
  Tensor base_;
  std::array<Tensor, ir::kMaxRank> shape_, strides_, offsets_;
  Shape block_shape_;
  std::vector<int> order_;
  ir::Type pointer_type_;
  SourceLoc loc_; // where it was made or advanced, for messages
};

/// A block pointer to the tile at `offsets` of size `block_shape` in the
/// array at `base` with `shape` and `strides` (in elements). `order` lists
/// the dimensions from the fastest-varying in memory to the slowest
/// ({1, 0} for a row-major matrix). Every list has one entry per dimension
/// (1 to 3); every block dimension is a power of two.
BlockPtr make_block_ptr(Operand base, const std::vector<Operand> &shape,
                        const std::vector<Operand> &strides,
                        const std::vector<Operand> &offsets,
                        const Shape &block_shape,
                        const std::vector<int> &order);

/// The same block pointer moved by `offsets` (one per dimension, in
/// elements).
BlockPtr advance(const BlockPtr &ptr, const std::vector<Operand> &offsets,
                 BLOCC_HERE);

/// Loads the tile. Lanes outside the array along the dimensions listed in
/// `boundary_check` read `padding` and touch no memory; dimensions not
/// listed are assumed in bounds.
Tensor load(const BlockPtr &ptr, const std::vector<int> &boundary_check = {},
            Padding padding = Padding::Zero, LoadOptions options = {},
            BLOCC_HERE);

/// Stores `value` (of the block's shape, or a scalar, converted to the
/// element type) into the tile, skipping lanes outside the array along the
/// dimensions in `boundary_check`.
void store(const BlockPtr &ptr, Operand value,
           const std::vector<int> &boundary_check = {},
           StoreOptions options = {}, BLOCC_HERE);

} // namespace blocc
