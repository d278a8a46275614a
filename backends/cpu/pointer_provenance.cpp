#include "backends/cpu/pointer_provenance.h"

#include <algorithm>
#include <set>

namespace blocc::cpu {

namespace {

using ir::OpCode;

class OriginWalk {
public:
  explicit OriginWalk(const ir::Function &kernel) : kernel_(kernel) {}

  void visit(const ir::Value *v) {
    if (!v || !v->type().is_pointer() || !seen_.insert(v).second)
      return;
    if (const ir::Operation *def = v->defining_op())
      return visit_result(*def, *v);
    visit_block_argument(*v);
  }

  PointerOrigins result() const {
    PointerOrigins o;
    o.arguments.assign(arguments_.begin(), arguments_.end());
    o.by_address = by_address_ || o.arguments.empty();
    return o;
  }

private:
  void visit_result(const ir::Operation &def, const ir::Value &v) {
    switch (def.code()) {
    case OpCode::IntToPtr:
    case OpCode::Constant:
    case OpCode::Load:
    case OpCode::AtomicRmw:
    case OpCode::AtomicCas:
      by_address_ = true;
      return;
    case OpCode::Cast:
    case OpCode::Bitcast:
      if (!def.operand(0)->type().is_pointer()) {
        by_address_ = true;
        return;
      }
      return visit(def.operand(0));
    case OpCode::For:
      // Result k: the initial value when the loop runs no iteration, else
      // what the body yields.
      visit(def.operand(3 + static_cast<size_t>(v.index())));
      visit_yields(def, v.index());
      return;
    case OpCode::If:
      visit_yields(def, v.index());
      return;
    default:
      // Pointer arithmetic, shape ops, select, hints, reduce/scan: the
      // result's lanes are lanes of the pointer operands.
      for (const ir::Value *operand : def.operands())
        visit(operand);
      return;
    }
  }

  void visit_yields(const ir::Operation &def, int index) {
    for (size_t r = 0; r < def.num_regions(); ++r)
      if (const ir::Operation *yield = def.region(r)->terminator())
        if (static_cast<size_t>(index) < yield->num_operands())
          visit(yield->operand(static_cast<size_t>(index)));
  }

  void visit_block_argument(const ir::Value &v) {
    const ir::Block *block = v.owner_block();
    const ir::Operation *parent = block ? block->parent_op() : nullptr;
    if (!parent) {
      if (block == &kernel_.body()) {
        arguments_.insert(v.index());
        return;
      }
      by_address_ = true;
      return;
    }
    switch (parent->code()) {
    case OpCode::For: {
      // Argument 0 is the induction variable; carried value k starts as
      // init k and then takes what the body yields.
      size_t carried = static_cast<size_t>(v.index()) - 1;
      visit(parent->operand(3 + carried));
      if (const ir::Operation *yield = block->terminator())
        visit(yield->operand(carried));
      return;
    }
    case OpCode::Reduce:
    case OpCode::Scan: {
      // The combine region's 2N arguments are elements of the N operands.
      size_t n = parent->num_operands();
      visit(parent->operand(static_cast<size_t>(v.index()) % n));
      return;
    }
    default:
      by_address_ = true;
      return;
    }
  }

  const ir::Function &kernel_;
  std::set<const ir::Value *> seen_;
  std::set<int> arguments_;
  bool by_address_ = false;
};

} // namespace

PointerOrigins pointer_origins(const ir::Function &kernel,
                               const ir::Value *pointer) {
  OriginWalk walk(kernel);
  walk.visit(pointer);
  return walk.result();
}

} // namespace blocc::cpu
