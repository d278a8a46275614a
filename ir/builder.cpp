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

} // namespace blocc::ir
