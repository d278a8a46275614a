// descriptor_load and descriptor_store (operand layout and semantics in
// ir/tensor_descriptor.h), executed directly: the reference for the
// rewrite-tensor-descriptors pass and for any TMA lowering.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <vector>

namespace blocc::interp {

class Memory;
class WriteRaces;

/// The tile at the op's offsets; elements outside the array read 0 and
/// touch no memory. Accessed elements get every check a load gets.
RuntimeValue
eval_descriptor_load(const ExecutionSite &site, const Memory &memory,
                     const std::vector<const RuntimeValue *> &operands);
/// Writes the tile's elements that lie inside the array (checked and
/// recorded for races as a store's are); the others are dropped.
void eval_descriptor_store(const ExecutionSite &site, const Memory &memory,
                           const std::vector<const RuntimeValue *> &operands,
                           WriteRaces *races);

} // namespace blocc::interp
