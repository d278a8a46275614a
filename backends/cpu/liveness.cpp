#include "backends/cpu/liveness.h"

#include <algorithm>

namespace blocc::cpu {

namespace {

int number(const ir::Block &block, int next,
           std::unordered_map<const ir::Operation *, int> &positions,
           std::unordered_map<const ir::Operation *, int> &ends) {
  for (const auto &owned : block.ops()) {
    const ir::Operation *op = owned.get();
    positions[op] = next++;
    for (size_t r = 0; r < op->num_regions(); ++r)
      next = number(*op->region(r), next, positions, ends);
    ends[op] = next - 1;
  }
  return next;
}

} // namespace

Liveness::Liveness(const ir::Function &f) {
  number(f.body(), 0, positions_, ends_);
  for (const auto &[op, position] : positions_) {
    for (const ir::Value *v : op->operands()) {
      std::vector<const ir::Operation *> &users = users_[v];
      if (std::find(users.begin(), users.end(), op) == users.end())
        users.push_back(op);
      // Extend over every enclosing loop that does not define v.
      int last = position;
      for (const ir::Operation *parent = op->parent_op(); parent;
           parent = parent->parent_op()) {
        if (parent->code() != ir::OpCode::For)
          continue;
        if (v->owner_block()->is_nested_in(parent->region(0)))
          break;
        last = std::max(last, ends_.at(parent));
      }
      int &known = last_use_.try_emplace(v, -1).first->second;
      known = std::max(known, last);
    }
  }
  for (auto &[v, users] : users_)
    std::sort(users.begin(), users.end(),
              [&](const ir::Operation *a, const ir::Operation *b) {
                return positions_.at(a) < positions_.at(b);
              });
}

int Liveness::last_use(const ir::Value *v) const {
  auto it = last_use_.find(v);
  return it == last_use_.end() ? -1 : it->second;
}

const std::vector<const ir::Operation *> &
Liveness::users(const ir::Value *v) const {
  static const std::vector<const ir::Operation *> none;
  auto it = users_.find(v);
  return it == users_.end() ? none : it->second;
}

} // namespace blocc::cpu
