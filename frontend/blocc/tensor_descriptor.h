// Tensor descriptors (Triton's tl.make_tensor_descriptor, desc.load and
// desc.store): a strided N-d array named by its base, shape and strides,
// read and written a tile of a fixed block shape at a time.
//
//   auto a = bl::make_tensor_descriptor(a_ptr, {M, K}, {K, 1}, {BM, BK});
//   auto b = bl::make_tensor_descriptor(b_ptr, {K, N}, {N, 1}, {BK, BN});
//   auto acc = bl::zeros({BM, BN}, bl::float32);
//   for (auto k : bl::range(0, K, BK))
//     acc += bl::dot(bl::load(a, {pid_m * BM, k}), bl::load(b, {k, pid_n *
//     BN}));
//   bl::store(c, {pid_m * BM, pid_n * BN}, acc);
//
// Every access is bounds-checked in every dimension: elements of the tile
// outside the array read zero and are not written, as the Hopper Tensor
// Memory Accelerator (TMA) fills and clips them.
//
// Design decision: unlike a block pointer (blocc/block_ptr.h), which
// desugars at trace time, a descriptor access stays one op in the block IR,
// descriptor_load or descriptor_store, whose operands are the base, the
// extents and strides (int64) and the tile's offsets (int32), with the block
// shape in the tile's type (ir/tensor_descriptor.h). That keeps what a GPU
// backend needs to use TMA in one place: on Hopper the GPU backend copies
// the tiles warpgroup MMAs read with it (backends/nvptx/tma.h). The pass
// rewrite-tensor-descriptors rewrites every other access, in the backends,
// into the pointer arithmetic and mask a boundary-checked block pointer
// builds, compiled as any masked load or store; the interpreter runs the
// ops directly.
//
// A TensorDescriptor is a frontend value holding scalar Tensors (the base;
// the extents and strides as int64) and the static block shape, so, as for
// a BlockPtr, assigning one descriptor variable from another inside a
// bl::range or bl::if_ rebinds those Tensors and the descriptor is carried
// out of it. Its element type and block shape may not change on
// assignment.
//
// Semantics follow Triton's: rank 1 to 3 (Triton allows up to 5; blocc
// blocks have at most 3 dimensions); shape and strides any integer scalars
// (converted to int64, sign-extended when signed); the last stride must be
// 1, known when tracing (a literal, or an integer argument equal to 1,
// which is traced as the constant 1); each block dimension a power of two,
// with a last dimension of at least 16 bytes; offsets integers of at most
// 32 bits, one per dimension, and may be negative or past the end; a stored
// value has exactly the block shape and is converted to the element type.
// Not supported yet: Triton's padding_option="nan", and cache and eviction
// hints.
#pragma once

#include "blocc/ops.h"

#include <array>
#include <vector>

namespace blocc {

class TensorDescriptor {
public:
  /// An empty descriptor, to be assigned from bl::make_tensor_descriptor.
  TensorDescriptor() = default;
  TensorDescriptor(const TensorDescriptor &other) = default;
  TensorDescriptor(TensorDescriptor &&other) = default;
  /// Rebinds this variable's tensors to `other`'s (so that bl::range and
  /// bl::if_ carry them) and takes its element type and block shape, which
  /// must match the ones this variable already holds, if any.
  TensorDescriptor &operator=(const TensorDescriptor &other);
  TensorDescriptor &operator=(TensorDescriptor &&other) {
    return *this = static_cast<const TensorDescriptor &>(other);
  }

  /// False for a default-constructed descriptor.
  bool valid() const { return !block_shape_.empty(); }
  int rank() const { return static_cast<int>(block_shape_.size()); }
  /// The tile's shape: what a load returns and a store takes.
  const Shape &block_shape() const { return block_shape_; }
  /// The element type the base points to.
  DType dtype() const { return pointer_type_.pointee(); }

  /// The array's base pointer (a scalar pointer).
  const Tensor &base() const { return base_; }
  /// The array's extent along `dim` (int64 scalar).
  const Tensor &shape(int dim) const { return shape_.at(dim); }
  /// The distance in elements between neighbours along `dim` (int64).
  const Tensor &stride(int dim) const { return strides_.at(dim); }

private:
  friend struct TensorDescriptorAccess;
  Tensor base_;
  std::array<Tensor, ir::kMaxRank> shape_, strides_;
  Shape block_shape_;
  ir::Type pointer_type_;
  SourceLoc loc_; // where it was made, for messages
};

/// A descriptor of the array at `base` with `shape` and `strides` (in
/// elements, one entry per dimension, the last stride 1), read and written
/// in tiles of `block_shape`.
TensorDescriptor make_tensor_descriptor(Operand base,
                                        const std::vector<Operand> &shape,
                                        const std::vector<Operand> &strides,
                                        const Shape &block_shape);

/// The tile whose first element is at `offsets` (one per dimension):
/// `block_shape` elements, those outside the array reading zero.
Tensor load(const TensorDescriptor &desc, const std::vector<Operand> &offsets,
            BLOCC_HERE);

/// Stores `value` (of the block shape, converted to the element type) into
/// the tile at `offsets`; elements outside the array are not written.
void store(const TensorDescriptor &desc, const std::vector<Operand> &offsets,
           Operand value, BLOCC_HERE);

} // namespace blocc
