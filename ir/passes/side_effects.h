// Which operations the generic passes may delete or merge. opcode.h's
// has_side_effects() answers for an opcode alone; these answer for one
// operation, looking at its attributes and at the ops nested in its regions.
#pragma once

#include "ir/function.h"

namespace blocc::ir {

/// A load marked volatile must happen even when nobody reads its result.
inline bool is_volatile_load(const Operation &op) {
  if (op.code() != OpCode::Load)
    return false;
  auto it = op.attributes().find("volatile");
  return it != op.attributes().end() &&
         std::holds_alternative<int64_t>(it->second) &&
         std::get<int64_t>(it->second) != 0;
}

/// True when deleting `op` changes nothing but its results: it is not a
/// terminator, writes no memory, prints nothing, cannot trap on purpose, and
/// neither does any op in its regions (a loop whose body stores must stay).
/// Terminators inside regions only hand values back and do not count.
inline bool is_removable_when_unused(const Operation &op) {
  if (is_terminator(op.code()) || is_volatile_load(op) ||
      has_side_effects(op.code()))
    return false;
  for (size_t r = 0; r < op.num_regions(); ++r)
    for (const auto &inner : op.region(r)->ops())
      if (!is_terminator(inner->code()) && !is_removable_when_unused(*inner))
        return false;
  return true;
}

/// True when an op of `block`, or of a region nested in it, stores or runs
/// an atomic: the block writes memory.
inline bool writes_memory(const Block &block) {
  for (const auto &op : block.ops()) {
    if (is_memory_write(op->code()))
      return true;
    for (size_t i = 0; i < op->num_regions(); ++i)
      if (writes_memory(*op->region(i)))
        return true;
  }
  return false;
}

} // namespace blocc::ir
