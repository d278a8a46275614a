// dce: dead code elimination. Removes
//  - ops whose results nobody uses and whose removal changes nothing else
//    (side_effects.h: no stores, atomics, prints, asserts or volatile loads,
//    also not inside their regions). This covers an `if` or a `for` with no
//    results whose regions hold nothing that matters, e.g. only a yield;
//  - loop-carried values of `for` that nothing observes: the loop's result
//    is unused and the body argument only feeds a chain of removable ops
//    that ends in the yield slot of that same value (an accumulator that is
//    never read after the loop).
// Repeats until nothing more can be removed, since each removal can make
// the operands of the removed op dead.
#include "ir/passes.h"
#include "ir/passes/side_effects.h"

#include <unordered_map>
#include <unordered_set>

namespace blocc::ir {

namespace {

struct Use {
  Operation *user;
  size_t index;
};

class DeadCodeEliminator {
public:
  explicit DeadCodeEliminator(Function &f) : function_(f) {}

  void run() {
    bool changed = true;
    while (changed) {
      collect_uses();
      changed = sweep(function_.body());
      if (!changed) {
        changed = remove_one_dead_carried_value();
      }
    }
  }

private:
  void collect_uses() {
    uses_.clear();
    function_.walk([&](Operation &op) {
      for (size_t i = 0; i < op.num_operands(); ++i)
        uses_[op.operand(i)].push_back({&op, i});
    });
  }

  size_t use_count(const Value *v) const {
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second.size();
  }

  /// Forgets the uses made by `op` and the ops nested in it, so that their
  /// operands can be found dead in the same sweep.
  void forget_uses_of(Operation &op) {
    op.walk([&](Operation &inner) {
      for (size_t i = 0; i < inner.num_operands(); ++i) {
        auto &list = uses_[inner.operand(i)];
        for (size_t k = 0; k < list.size(); ++k)
          if (list[k].user == &inner && list[k].index == i) {
            list.erase(list.begin() + static_cast<long>(k));
            break;
          }
      }
    });
  }

  bool is_dead(const Operation &op) const {
    if (!is_removable_when_unused(op))
      return false;
    for (size_t i = 0; i < op.num_results(); ++i)
      if (use_count(op.result(i)) != 0)
        return false;
    return true;
  }

  /// Walks backwards so that a chain of dead ops goes in one sweep: the
  /// last user disappears before its operands are looked at.
  bool sweep(Block &block) {
    bool changed = false;
    auto &ops = block.ops();
    for (auto it = ops.end(); it != ops.begin();) {
      --it;
      Operation &op = **it;
      for (size_t r = 0; r < op.num_regions(); ++r)
        changed |= sweep(*op.region(r));
      if (is_dead(op)) {
        forget_uses_of(op);
        it = ops.erase(it);
        changed = true;
      }
    }
    return changed;
  }

  bool remove_one_dead_carried_value() {
    std::vector<Operation *> loops;
    function_.walk([&](Operation &op) {
      if (op.code() == OpCode::For)
        loops.push_back(&op);
    });
    for (Operation *loop : loops)
      for (size_t i = loop->num_results(); i-- > 0;)
        if (try_remove_carried(*loop, i))
          return true;
    return false;
  }

  /// Removes carried value `slot` of `loop` when nothing observes it.
  bool try_remove_carried(Operation &loop, size_t slot) {
    if (use_count(loop.result(slot)) != 0)
      return false;
    Block *body = loop.region(0);
    Operation *yield = body->terminator();
    Value *arg = body->argument(slot + 1);
    // The ops the argument flows into, transitively. Each must be removable
    // and may hand its value on only to other such ops or to the yield slot
    // of this same carried value.
    std::unordered_set<Operation *> chain;
    std::vector<Value *> work{arg};
    while (!work.empty()) {
      Value *v = work.back();
      work.pop_back();
      auto it = uses_.find(v);
      if (it == uses_.end())
        continue;
      for (const Use &use : it->second) {
        if (use.user == yield && use.index == slot)
          continue;
        if (is_terminator(use.user->code()) || use.user->num_regions() != 0 ||
            !is_removable_when_unused(*use.user))
          return false;
        if (chain.insert(use.user).second)
          for (Value *r : use.user->results())
            work.push_back(r);
      }
    }
    // Cut the slot out of the yield, then delete the chain users-first so
    // that nothing is destroyed while still in use.
    std::vector<Value *> yielded = yield->operands();
    yielded.erase(yielded.begin() + static_cast<long>(slot));
    yield->set_operands(yielded);
    std::vector<Operation *> in_order;
    body->parent_op()->walk([&](Operation &op) {
      if (chain.count(&op))
        in_order.push_back(&op);
    });
    for (auto it = in_order.rbegin(); it != in_order.rend(); ++it)
      (*it)->parent_block()->erase(*it);
    body->erase_argument(slot + 1);
    loop.erase_result(slot);
    std::vector<Value *> operands = loop.operands();
    operands.erase(operands.begin() + 3 + static_cast<long>(slot));
    loop.set_operands(operands);
    return true;
  }

  Function &function_;
  std::unordered_map<const Value *, std::vector<Use>> uses_;
};

} // namespace

void dce(Function &f) { DeadCodeEliminator(f).run(); }

} // namespace blocc::ir
