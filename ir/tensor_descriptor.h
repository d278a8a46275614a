// Tensor descriptors in the block IR: the operand layout of descriptor_load
// and descriptor_store, in one place for every reader (verifier,
// interpreter, the rewrite pass, and a GPU lowering to TMA).
//
// A descriptor names a tile of a strided array of rank r (1 to 3):
//
//   %t = descriptor_load %base, %shape0, %shape1, %stride0, %stride1,
//                        %offset0, %offset1 : tensor<64x32xf16>
//   descriptor_store %base, %shape0, %shape1, %stride0, %stride1,
//                    %offset0, %offset1, %t
//
// Operands, in order: the base (a scalar pointer), the array's extents
// (r i64 scalars), its strides in elements (r i64 scalars), the tile's
// first element (r i32 scalars; or i64, as a block pointer's offsets are),
// and for a store the value. The tile's shape
// is the loaded result's (or the stored value's) shape, so the rank comes
// from the type and the operand count must agree with it.
//
// Element (j_0, .., j_{r-1}) of the tile is the array element at
// index_i = offset_i + j_i (computed in int64), at address
// base + sum_i index_i * stride_i; it is inside the array when
// 0 <= index_i < shape_i for every i. Outside, a load reads 0 and a store
// writes nothing (the zero fill of the Hopper Tensor Memory Accelerator).
//
// Why the descriptor stays visible in the IR, instead of being desugared at
// trace time like a block pointer: a GPU backend can map a descriptor whose
// base, shape and strides are kernel arguments (or constants) to one TMA
// descriptor and each access to one bulk copy. The pass
// rewrite-tensor-descriptors (ir/passes/rewrite_tensor_descriptors.cpp)
// turns every access into pointer arithmetic, a mask and a plain load or
// store for the backends that do not.
#pragma once

#include "ir/function.h"

namespace blocc::ir {

/// A read-only view of a descriptor_load or descriptor_store's operands.
/// The op's rank comes from its operand count (1 + 3r for a load, 2 + 3r
/// for a store); the verifier checks that it matches the tile's type.
class DescriptorOperands {
public:
  explicit DescriptorOperands(const Operation &op);

  bool is_store() const { return store_; }
  int rank() const { return rank_; }
  Value *base() const { return op_.operand(0); }
  Value *shape(int dim) const { return op_.operand(1 + dim); }
  Value *stride(int dim) const { return op_.operand(1 + rank_ + dim); }
  Value *offset(int dim) const { return op_.operand(1 + 2 * rank_ + dim); }
  /// The stored value (descriptor_store only): the last operand.
  Value *value() const { return op_.operand(op_.num_operands() - 1); }
  /// The tile's type: the load's result or the stored value's type.
  const Type &tile_type() const;

private:
  const Operation &op_;
  bool store_;
  int rank_;
};

/// True for descriptor_load and descriptor_store.
inline bool is_descriptor_access(OpCode code) {
  return code == OpCode::DescriptorLoad || code == OpCode::DescriptorStore;
}

} // namespace blocc::ir
