#include "ir/tensor_descriptor.h"

#include "ir/error.h"

namespace blocc::ir {

DescriptorOperands::DescriptorOperands(const Operation &op)
    : op_(op), store_(op.code() == OpCode::DescriptorStore) {
  if (!is_descriptor_access(op.code()))
    throw Error("internal: " + op.describe() +
                " is not a descriptor_load or descriptor_store");
  size_t fixed = store_ ? 2 : 1; // the base, and a store's value
  rank_ = op.num_operands() < fixed
              ? 0
              : static_cast<int>((op.num_operands() - fixed) / 3);
}

const Type &DescriptorOperands::tile_type() const {
  return store_ ? value()->type() : op_.result()->type();
}

} // namespace blocc::ir
