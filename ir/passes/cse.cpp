// cse: common subexpression elimination. An op that computes exactly what an
// earlier op computes (same opcode, operands, attributes and result types,
// and structurally equal regions) is replaced by that earlier op, provided
// the earlier one dominates it: it sits earlier in the same block or in an
// enclosing block. A scoped table gives exactly that: entries made in a
// block are visible to the rest of the block and to regions nested in it,
// and are dropped when the block ends.
//
// What is never merged: ops with side effects (they must all happen), loads
// (memory may change between two loads of one address, and a store or an
// atomic in between is not tracked here), atomics, and terminators. Regions
// are compared op by op, mapping each region's arguments and results onto
// the other's; an op whose regions hold a load or a side effect is not
// merged.
#include "ir/passes.h"

#include <cstring>
#include <functional>
#include <unordered_map>

namespace blocc::ir {

namespace {

bool same_attribute(const Attribute &a, const Attribute &b) {
  if (a.index() != b.index())
    return false;
  // Floats compare by bits: 0.0 and -0.0 are different constants, and a NaN
  // constant equals itself.
  if (const auto *x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

bool same_attributes(const Attributes &a, const Attributes &b) {
  if (a.size() != b.size())
    return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    if (i->first != j->first || !same_attribute(i->second, j->second))
      return false;
  return true;
}

/// Pure, no loads, no terminators, at any depth.
bool is_mergeable(const Operation &op) {
  if (has_side_effects(op.code()) || is_memory_read(op.code()) ||
      is_terminator(op.code()))
    return false;
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto &inner : op.region(r)->ops())
      if (!is_terminator(inner->code()) && !is_mergeable(*inner))
        return false;
  return true;
}

/// Compares two ops and, recursively, their regions. `map` sends values
/// defined inside the first op's regions to their counterparts in the
/// second; any other value must be used by both.
class StructuralEquality {
public:
  bool ops_equal(const Operation &a, const Operation &b) {
    if (a.code() != b.code() || a.num_operands() != b.num_operands() ||
        a.num_results() != b.num_results() ||
        a.num_regions() != b.num_regions() ||
        !same_attributes(a.attributes(), b.attributes()))
      return false;
    for (size_t i = 0; i < a.num_results(); ++i)
      if (a.result(i)->type() != b.result(i)->type())
        return false;
    if (!operands_equal(a, b))
      return false;
    for (size_t r = 0; r < a.num_regions(); ++r)
      if (!blocks_equal(*a.region(r), *b.region(r)))
        return false;
    for (size_t i = 0; i < a.num_results(); ++i)
      map_[a.result(i)] = b.result(i);
    return true;
  }

private:
  const Value *mapped(const Value *v) const {
    auto it = map_.find(v);
    return it == map_.end() ? v : it->second;
  }

  bool operands_equal(const Operation &a, const Operation &b) const {
    bool in_order = true;
    for (size_t i = 0; i < a.num_operands() && in_order; ++i)
      in_order = mapped(a.operand(i)) == b.operand(i);
    if (in_order)
      return true;
    // a + b computes what b + a does.
    return is_commutative(a.code()) && a.num_operands() == 2 &&
           mapped(a.operand(0)) == b.operand(1) &&
           mapped(a.operand(1)) == b.operand(0);
  }

  bool blocks_equal(const Block &a, const Block &b) {
    if (a.num_arguments() != b.num_arguments() ||
        a.ops().size() != b.ops().size())
      return false;
    for (size_t i = 0; i < a.num_arguments(); ++i) {
      if (a.argument(i)->type() != b.argument(i)->type())
        return false;
      map_[a.argument(i)] = b.argument(i);
    }
    for (auto i = a.ops().begin(), j = b.ops().begin(); i != a.ops().end();
         ++i, ++j)
      if (!ops_equal(**i, **j))
        return false;
    return true;
  }

  std::unordered_map<const Value *, const Value *> map_;
};

/// Equal ops hash equally: commutative operands are combined in an
/// order-independent way, and regions contribute only their op count.
size_t hash_op(const Operation &op) {
  size_t h = std::hash<int>()(static_cast<int>(op.code()));
  auto mix = [&](size_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  };
  if (is_commutative(op.code()) && op.num_operands() == 2) {
    mix(std::hash<const void *>()(op.operand(0)) +
        std::hash<const void *>()(op.operand(1)));
  } else {
    for (const Value *v : op.operands())
      mix(std::hash<const void *>()(v));
  }
  for (const Value *r : op.results())
    mix(std::hash<std::string>()(r->type().str()));
  for (size_t r = 0; r < op.num_regions(); ++r)
    mix(op.region(r)->ops().size());
  return h;
}

class CommonSubexpressionEliminator {
public:
  void run(Function &f) {
    process_block(f.body());
    // Every use of a merged op's results came after it and was redirected
    // during the walk; only now is it safe to free them.
    removed_.clear();
  }

private:
  void process_block(Block &block) {
    std::vector<std::pair<size_t, Operation *>> entered;
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Operation &op = **it;
      ++it;
      for (size_t i = 0; i < op.num_operands(); ++i)
        op.set_operand(i, resolve(op.operand(i)));
      for (size_t r = 0; r < op.num_regions(); ++r)
        process_block(*op.region(r));
      if (!is_mergeable(op))
        continue;
      size_t h = hash_op(op);
      if (Operation *earlier = find_equal(h, op)) {
        for (size_t i = 0; i < op.num_results(); ++i)
          replacements_[op.result(i)] = earlier->result(i);
        removed_.push_back(block.remove(&op));
        continue;
      }
      table_.emplace(h, &op);
      entered.emplace_back(h, &op);
    }
    // Leaving the block: its ops no longer dominate what follows.
    for (const auto &[h, op] : entered) {
      auto [first, last] = table_.equal_range(h);
      for (auto i = first; i != last; ++i)
        if (i->second == op) {
          table_.erase(i);
          break;
        }
    }
  }

  Operation *find_equal(size_t h, const Operation &op) const {
    auto [first, last] = table_.equal_range(h);
    for (auto i = first; i != last; ++i)
      if (StructuralEquality().ops_equal(*i->second, op))
        return i->second;
    return nullptr;
  }

  Value *resolve(Value *v) const {
    auto it = replacements_.find(v);
    return it == replacements_.end() ? v : it->second;
  }

  std::unordered_multimap<size_t, Operation *> table_;
  std::unordered_map<Value *, Value *> replacements_;
  std::vector<std::unique_ptr<Operation>> removed_;
};

} // namespace

void cse(Function &f) { CommonSubexpressionEliminator().run(f); }

} // namespace blocc::ir
