#include "backends/nvptx/observed_uses.h"

namespace blocc::nvptx {

namespace {

/// Where the values of a for or if carry operand `operand` of `user` go,
/// unchanged: a loop's init or yielded value becomes its result and the
/// body's argument for the next iteration; an if's yielded value becomes
/// its result. Empty for other ops.
std::vector<const ir::Value *> carried_to(const ir::Operation &user,
                                          size_t operand) {
  using ir::OpCode;
  const ir::Operation *loop = nullptr;
  size_t k = 0;
  if (user.code() == OpCode::For && operand >= 3) {
    loop = &user;
    k = operand - 3;
  } else if (user.code() == OpCode::Yield && user.parent_op()) {
    const ir::Operation *parent = user.parent_op();
    if (parent->code() == OpCode::If && operand < parent->num_results())
      return {parent->result(operand)};
    if (parent->code() == OpCode::For)
      loop = parent;
    k = operand;
  }
  if (!loop || k >= loop->num_results())
    return {};
  return {loop->result(k), loop->region(0)->argument(1 + k)};
}

} // namespace

ObservedUses::ObservedUses(const ir::Function &function, const UseRule &rule) {
  // Each use either observes the detail (its operand is a source), hides
  // it, or passes it on to values (an edge from each of them back to the
  // operand). A value is observed when a source is reachable from it, so
  // a walk backwards from the sources finds them all, loops included.
  std::map<const ir::Value *, std::vector<const ir::Value *>> passed_from;
  std::vector<const ir::Value *> work;
  auto observe = [&](const ir::Value *v) {
    if (observed_.insert(v).second)
      work.push_back(v);
  };
  function.walk([&](const ir::Operation &user) {
    for (size_t i = 0; i < user.num_operands(); ++i) {
      const ir::Value *v = user.operand(i);
      std::vector<const ir::Value *> to = carried_to(user, i);
      if (to.empty()) {
        switch (rule(user, i)) {
        case UseEffect::Hides:
          continue;
        case UseEffect::Observes:
          observe(v);
          continue;
        case UseEffect::PassesOn:
          break;
        }
        if (user.code() == ir::OpCode::Yield) {
          // A combine region's result: its parent's result of that index.
          const ir::Operation *parent = user.parent_op();
          if (!parent || i >= parent->num_results()) {
            observe(v);
            continue;
          }
          to = {parent->result(i)};
        } else {
          std::vector<ir::Value *> results = user.results();
          to.assign(results.begin(), results.end());
        }
      }
      for (const ir::Value *result : to)
        passed_from[result].push_back(v);
    }
  });
  while (!work.empty()) {
    const ir::Value *v = work.back();
    work.pop_back();
    auto sources = passed_from.find(v);
    if (sources != passed_from.end())
      for (const ir::Value *source : sources->second)
        observe(source);
  }
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
