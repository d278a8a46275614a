#include "backends/nvptx/observed_uses.h"

namespace blocc::nvptx {

ObservedUses::ObservedUses(const ir::Function &function, UseRule rule)
    : rule_(std::move(rule)) {
  // walk is not const; nothing here changes the function.
  const_cast<ir::Function &>(function).walk([&](ir::Operation &op) {
    for (size_t i = 0; i < op.num_operands(); ++i)
      users_[op.operand(i)].push_back(Use{&op, i});
  });
}

bool ObservedUses::observed(const ir::Value *v) {
  auto known = memo_.find(v);
  if (known != memo_.end())
    return known->second;
  bool seen = false;
  auto users = users_.find(v);
  if (users != users_.end())
    for (const Use &use : users->second)
      if (observes(*use.user, use.operand)) {
        seen = true;
        break;
      }
  memo_[v] = seen;
  return seen;
}

bool ObservedUses::observes(const ir::Operation &user, size_t operand) {
  switch (rule_(user, operand)) {
  case UseEffect::Hides:
    return false;
  case UseEffect::Observes:
    return true;
  case UseEffect::PassesOn:
    break;
  }
  if (user.code() == ir::OpCode::Yield) {
    const ir::Operation *parent = user.parent_op();
    return !parent || operand >= parent->num_results() ||
           observed(parent->result(operand));
  }
  for (size_t i = 0; i < user.num_results(); ++i)
    if (observed(user.result(i)))
      return true;
  return false;
}

bool is_reduce_of(const ir::Operation &op,
                  const std::function<bool(ir::OpCode)> &allowed) {
  if (op.code() != ir::OpCode::Reduce || op.num_operands() != 1)
    return false;
  for (const auto &inner : op.region(0)->ops())
    if (inner->code() != ir::OpCode::Yield && !allowed(inner->code()))
      return false;
  return true;
}

} // namespace blocc::nvptx
