// Creates operations at an insertion point. The frontend, the parser and the
// passes all build IR through this one class, so every op gets a location
// and lands in exactly one block.
#pragma once

#include "ir/function.h"

namespace blocc::ir {

class Builder {
public:
  Builder() = default;
  /// Inserts at the end of `block`.
  explicit Builder(Block *block) { set_insertion_point_to_end(block); }

  void set_insertion_point_to_end(Block *block) {
    block_ = block;
    point_ = block->ops().end();
  }
  /// Inserts before `op` (which must sit in a block).
  void set_insertion_point_before(Operation *op) {
    block_ = op->parent_block();
    point_ = block_->find(op);
  }
  Block *block() const { return block_; }
  Block::iterator point() const { return point_; }
  void restore(Block *block, Block::iterator point) {
    block_ = block;
    point_ = point;
  }

  void set_location(Location loc) { loc_ = std::move(loc); }
  const Location &location() const { return loc_; }

  /// The general form: every other helper ends here.
  Operation *create(OpCode code, std::vector<Value *> operands,
                    const std::vector<Type> &result_types,
                    Attributes attributes = {});
  /// create() for the common one-result case, returning the result.
  Value *create_value(OpCode code, std::vector<Value *> operands, Type type,
                      Attributes attributes = {}) {
    return create(code, std::move(operands), {type}, std::move(attributes))
        ->result();
  }

  Value *int_constant(int64_t v, Type type);
  Value *float_constant(double v, Type type);
  /// An elementwise op whose result has the type of its first operand.
  Value *binary(OpCode code, Value *a, Value *b) {
    return create_value(code, {a, b}, a->type());
  }
  Value *unary(OpCode code, Value *a) {
    return create_value(code, {a}, a->type());
  }
  Value *cmp(const std::string &predicate, Value *a, Value *b);
  Value *splat(Value *scalar, const std::vector<int64_t> &shape) {
    return create_value(OpCode::Splat, {scalar},
                        Type::block(scalar->type(), shape));
  }
  /// descriptor_load and descriptor_store (ir/tensor_descriptor.h): the
  /// array's `shape` and `strides` and the tile's `offsets` hold one scalar
  /// per dimension of the tile, which the load's result has `tile_shape`.
  Value *descriptor_load(Value *base, const std::vector<Value *> &shape,
                         const std::vector<Value *> &strides,
                         const std::vector<Value *> &offsets,
                         const std::vector<int64_t> &tile_shape);
  Operation *descriptor_store(Value *base, const std::vector<Value *> &shape,
                              const std::vector<Value *> &strides,
                              const std::vector<Value *> &offsets,
                              Value *value);

private:
  Block *block_ = nullptr;
  Block::iterator point_{};
  Location loc_;
};

} // namespace blocc::ir
