// Ops that move elements without changing them: splat, broadcast,
// expand_dims, reshape, permute, join, split, cat. Each result lane is a
// copy (bits and pointer provenance) of one operand lane; shapes are
// row-major throughout.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <vector>

namespace blocc::interp {

/// Evaluates `site.op` (a shape op) on `operands`; one value per result.
std::vector<RuntimeValue>
eval_shape_op(const ExecutionSite &site,
              const std::vector<const RuntimeValue *> &operands);

} // namespace blocc::interp
