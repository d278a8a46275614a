#include "ir/written_arguments.h"

#include <set>

namespace blocc::ir {

namespace {

/// Collects the function arguments a pointer value may derive from, walking
/// back through pointer arithmetic, shape ops, selects and loop arguments.
void pointer_roots(ir::Value *v, std::set<ir::Value *> &roots,
                   std::set<ir::Value *> &seen) {
  if (!v || !seen.insert(v).second)
    return;
  if (ir::Operation *def = v->defining_op()) {
    for (ir::Value *operand : def->operands())
      if (operand->type().is_pointer())
        pointer_roots(operand, roots, seen);
    // Results of for/if come from their yields.
    for (size_t r = 0; r < def->num_regions(); ++r)
      if (ir::Operation *term = def->region(r)->terminator())
        if (static_cast<size_t>(v->index()) < term->num_operands())
          pointer_roots(term->operand(v->index()), roots, seen);
    return;
  }
  ir::Block *block = v->owner_block();
  ir::Operation *parent = block ? block->parent_op() : nullptr;
  if (!parent) {
    roots.insert(v); // a function argument
    return;
  }
  if (parent->code() == ir::OpCode::For && v->index() > 0) {
    // Loop argument i (after the induction variable) starts as init i and
    // then takes the yielded value.
    size_t carried = static_cast<size_t>(v->index()) - 1;
    pointer_roots(parent->operand(3 + carried), roots, seen);
    if (ir::Operation *term = block->terminator())
      pointer_roots(term->operand(carried), roots, seen);
  }
}

} // namespace

std::vector<bool> arguments_written(ir::Function &fn, size_t num_params,
                                    const std::vector<ir::Value *> &arguments) {
  std::set<ir::Value *> written;
  fn.walk([&](ir::Operation &op) {
    if (ir::is_memory_write(op.code())) { // operand 0: the pointer or base
      std::set<ir::Value *> seen;
      pointer_roots(op.operand(0), written, seen);
    }
  });
  std::vector<bool> out(num_params, false);
  for (size_t i = 0; i < num_params && i < arguments.size(); ++i)
    out[i] = arguments[i] && written.count(arguments[i]);
  return out;
}

} // namespace blocc::ir
