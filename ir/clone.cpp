#include "ir/clone.h"

#include <map>

namespace blocc::ir {

namespace {

class Cloner {
public:
  void copy_block(const Block &from, Block &to) {
    for (const Value *argument : from.arguments())
      mapped_[argument] = to.add_argument(argument->type());
    copy_ops(from, to);
  }

  /// The ops of `from` appended to `to`, whose arguments are mapped.
  void copy_ops(const Block &from, Block &to) {
    for (const auto &op : from.ops())
      to.append(copy_op(*op));
  }

  void map(const Value *from, Value *to) { mapped_[from] = to; }

private:
  std::unique_ptr<Operation> copy_op(const Operation &op) {
    std::vector<Value *> operands;
    operands.reserve(op.num_operands());
    for (const Value *operand : op.operands())
      operands.push_back(mapped_.at(operand));
    std::vector<Type> result_types;
    for (size_t i = 0; i < op.num_results(); ++i)
      result_types.push_back(op.result(i)->type());
    auto copy =
        std::make_unique<Operation>(op.code(), std::move(operands),
                                    result_types, op.attributes(), op.loc());
    for (size_t i = 0; i < op.num_results(); ++i)
      mapped_[op.result(i)] = copy->result(i);
    for (size_t i = 0; i < op.num_regions(); ++i)
      copy_block(*op.region(i), *copy->add_region());
    return copy;
  }

  std::map<const Value *, Value *> mapped_;
};

} // namespace

std::unique_ptr<Function> clone(const Function &function) {
  auto copy = std::make_unique<Function>(function.name());
  Cloner cloner;
  for (size_t i = 0; i < function.num_arguments(); ++i)
    cloner.map(function.argument(i),
               copy->add_argument(function.argument(i)->type(),
                                  function.argument_info(i)));
  cloner.copy_ops(function.body(), copy->body());
  copy->attributes() = function.attributes();
  return copy;
}

} // namespace blocc::ir
