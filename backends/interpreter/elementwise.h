// Elementwise ops on whole values: cast .. select in ir/opcode.h, lane by
// lane. A rank-0 operand next to block operands acts as a splat.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <vector>

namespace blocc::interp {

class Memory;

/// Evaluates `site.op` (an elementwise op) on `operands`. `memory` gives
/// int_to_ptr (and casts to pointers) the provenance of the address.
RuntimeValue
eval_elementwise(const ExecutionSite &site, const Memory &memory,
                 const std::vector<const RuntimeValue *> &operands);

/// "lane 5" or "lane 5 (index (0, 5))" for a lane of a value of `shape`.
std::string lane_str(int64_t lane, const std::vector<int64_t> &shape);

} // namespace blocc::interp
