#include "ir/builder.h"

#include "ir/error.h"

namespace blocc::ir {

Operation *Builder::create(OpCode code, std::vector<Value *> operands,
                           const std::vector<Type> &result_types,
                           Attributes attributes) {
  if (!block_)
    throw Error("internal: Builder has no insertion point");
  auto op = std::make_unique<Operation>(code, std::move(operands), result_types,
                                        std::move(attributes), loc_);
  Operation *raw = op.get();
  block_->insert(point_, std::move(op));
  return raw;
}

Value *Builder::int_constant(int64_t v, Type type) {
  return create_value(OpCode::Constant, {}, type, {{"value", v}});
}

Value *Builder::float_constant(double v, Type type) {
  return create_value(OpCode::Constant, {}, type, {{"value", v}});
}

Value *Builder::cmp(const std::string &predicate, Value *a, Value *b) {
  Type result = a->type().with_element(Type::scalar(Scalar::I1));
  return create_value(OpCode::Cmp, {a, b}, result, {{"predicate", predicate}});
}

namespace {

std::vector<Value *> descriptor_operands(Value *base,
                                         const std::vector<Value *> &shape,
                                         const std::vector<Value *> &strides,
                                         const std::vector<Value *> &offsets) {
  std::vector<Value *> operands{base};
  for (const std::vector<Value *> *part : {&shape, &strides, &offsets})
    operands.insert(operands.end(), part->begin(), part->end());
  return operands;
}

} // namespace

Value *Builder::descriptor_load(Value *base, const std::vector<Value *> &shape,
                                const std::vector<Value *> &strides,
                                const std::vector<Value *> &offsets,
                                const std::vector<int64_t> &tile_shape) {
  Type tile = Type::block(Type::scalar(base->type().pointee()), tile_shape);
  return create_value(OpCode::DescriptorLoad,
                      descriptor_operands(base, shape, strides, offsets), tile);
}

Operation *Builder::descriptor_store(Value *base,
                                     const std::vector<Value *> &shape,
                                     const std::vector<Value *> &strides,
                                     const std::vector<Value *> &offsets,
                                     Value *value) {
  std::vector<Value *> operands =
      descriptor_operands(base, shape, strides, offsets);
  operands.push_back(value);
  return create(OpCode::DescriptorStore, std::move(operands), {});
}

} // namespace blocc::ir
