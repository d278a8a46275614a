// rewrite-tensor-descriptors: each descriptor_load / descriptor_store
// (ir/tensor_descriptor.h) becomes the block of pointers and the bounds mask
// it stands for, and a masked load or store through them:
//
//   index_i  = offset_i + arange(0, tile[i])          (int64, shaped to
//                                                      [1, .., tile[i], .., 1])
//   pointers = base + sum_i index_i * stride_i        (broadcast to the tile)
//   mask     = and_i (0 <= index_i && index_i < shape_i)
//   load pointers, mask       (masked-off lanes read 0, touch no memory)
//   store pointers, value, mask
//
// exactly what a block pointer's bl::load / bl::store builds at trace time
// with every dimension bounds-checked (frontend/block_ptr.cpp), so the
// axis-info analysis sees the unit stride of the last dimension as
// contiguity, and both backends compile the result as any pointer access.
//
// Backends run it, not the default pipeline: the GPU backend copies some
// tiles with the Tensor Memory Accelerator and rewrites only the accesses
// it does not (backends/nvptx/tensor_descriptors.cpp); the CPU backend
// rewrites them all. lower_tensor_descriptors then runs canonicalize, cse
// and dce, which clean up the arithmetic built here (a constant stride of 1
// folds away; the indices of a load and a store of the same tile merge).
#include "ir/builder.h"
#include "ir/passes.h"
#include "ir/tensor_descriptor.h"

namespace blocc::ir {

namespace {

using Shape = std::vector<int64_t>;

/// Builds the pointer arithmetic and mask of one descriptor access in
/// front of it, at its location.
class TileAddressing {
public:
  explicit TileAddressing(Operation &op) : d_(op), tile_(d_.tile_type()) {
    b_.set_insertion_point_before(&op);
    b_.set_location(op.loc());
  }

  Builder &builder() { return b_; }

  /// base + sum_i index_i * stride_i, and the mask of the elements inside
  /// the array.
  std::pair<Value *, Value *> pointers_and_mask() {
    Shape tile = tile_.shape();
    Value *linear = nullptr;
    Value *mask = nullptr;
    for (int dim = 0; dim < d_.rank(); ++dim) {
      Value *index = index_along(dim);
      Value *term = b_.binary(OpCode::Mul, index,
                              to_shape(d_.stride(dim), index->type().shape()));
      term = to_shape(term, tile);
      linear = linear ? b_.binary(OpCode::Add, linear, term) : term;
      Value *inside = to_shape(inside_along(dim, index), tile);
      mask = mask ? b_.binary(OpCode::And, mask, inside) : inside;
    }
    Value *base = to_shape(d_.base(), tile);
    Value *pointers =
        b_.create_value(OpCode::AddPtr, {base, linear}, base->type());
    return {pointers, mask};
  }

private:
  /// offset_dim + arange(0, tile[dim]) in int64, shaped [1, .., tile[dim],
  /// .., 1] so that it broadcasts over the other dimensions.
  Value *index_along(int dim) {
    int64_t extent = tile_.dim(dim);
    Type i32 = Type::scalar(Scalar::I32), i64 = Type::scalar(Scalar::I64);
    Value *range =
        b_.create_value(OpCode::Arange, {}, Type::block(i32, {extent}),
                        {{"start", int64_t{0}}, {"end", extent}});
    range = b_.create_value(OpCode::Cast, {range}, Type::block(i64, {extent}));
    Value *offset = d_.offset(dim);
    if (offset->type() != i64)
      offset = b_.create_value(OpCode::Cast, {offset}, i64);
    Value *index = b_.binary(OpCode::Add, b_.splat(offset, {extent}), range);
    if (d_.rank() == 1)
      return index;
    Shape expanded(d_.rank(), 1);
    expanded[dim] = extent;
    return b_.create_value(OpCode::Reshape, {index},
                           index->type().with_shape(expanded));
  }

  /// 0 <= index && index < shape_dim, in the index's shape.
  Value *inside_along(int dim, Value *index) {
    Shape s = index->type().shape();
    Value *zero = b_.splat(b_.int_constant(0, Type::scalar(Scalar::I64)), s);
    Value *extent = to_shape(d_.shape(dim), s);
    // One statement each: the order of the ops may not depend on the order
    // in which a compiler evaluates arguments.
    Value *above = b_.cmp("ge", index, zero);
    Value *below = b_.cmp("lt", index, extent);
    return b_.binary(OpCode::And, above, below);
  }

  /// A scalar splatted, or a block of the same rank broadcast, to `shape`
  /// (nothing when it already has it).
  Value *to_shape(Value *v, const Shape &shape) {
    if (v->type().shape() == shape)
      return v;
    if (!v->type().is_block())
      return b_.splat(v, shape);
    return b_.create_value(OpCode::Broadcast, {v}, v->type().with_shape(shape));
  }

  DescriptorOperands d_;
  Type tile_;
  Builder b_;
};

void rewrite(Function &f, Operation &op) {
  TileAddressing addressing(op);
  auto [pointers, mask] = addressing.pointers_and_mask();
  Builder &b = addressing.builder();
  if (op.code() == OpCode::DescriptorLoad) {
    Value *loaded =
        b.create_value(OpCode::Load, {pointers, mask}, op.result()->type());
    f.replace_all_uses(op.result(), loaded);
  } else {
    b.create(OpCode::Store, {pointers, DescriptorOperands(op).value(), mask},
             {});
  }
  op.parent_block()->erase(&op);
}

} // namespace

int rewrite_tensor_descriptors(
    Function &f, const std::function<bool(const Operation &)> &which) {
  std::vector<Operation *> accesses;
  f.walk([&](Operation &op) {
    if (is_descriptor_access(op.code()) && (!which || which(op)))
      accesses.push_back(&op);
  });
  for (Operation *op : accesses)
    rewrite(f, *op);
  return static_cast<int>(accesses.size());
}

void rewrite_tensor_descriptors(Function &f) {
  rewrite_tensor_descriptors(f, {});
}

bool lower_tensor_descriptors(
    Function &f, const std::function<bool(const Operation &)> &which) {
  if (rewrite_tensor_descriptors(f, which) == 0)
    return false;
  canonicalize(f);
  cse(f);
  dce(f);
  return true;
}

bool has_tensor_descriptors(const Function &f) {
  bool found = false;
  f.walk([&](const Operation &op) {
    found = found || is_descriptor_access(op.code());
  });
  return found;
}

} // namespace blocc::ir
