// Ops that combine many lanes: reduce and scan (whose combine function is
// a region the interpreter runs on scalar values) and dot.
//
// Orders are fixed and sequential, so that the reference result is one
// well-defined number: reduce folds along the axis in index order,
// acc = combine(acc, x[k]) for k = 1, 2, ...; scan does the same and
// records every partial result (from the end when `reverse`); dot
// accumulates a fused multiply-add per k, in increasing k, in the
// accumulator's element type, after converting the inputs to it (with the
// cast op's rules). `input_precision` (tf32 and friends) is not emulated:
// the interpreter computes at full precision and backends that use tf32
// compare against it with a tolerance.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <functional>
#include <vector>

namespace blocc::ir {
class Block;
}

namespace blocc::interp {

/// Runs a region's block with these argument values; returns what its
/// terminator yields.
using RegionRunner = std::function<std::vector<RuntimeValue>(
    const ir::Block &, std::vector<RuntimeValue>)>;

/// (x1..xN) {axis} region(2N args) -> N results. Without an `axis`
/// attribute the whole block is folded in row-major order to scalars.
std::vector<RuntimeValue>
eval_reduce(const ExecutionSite &site,
            const std::vector<const RuntimeValue *> &operands,
            const RegionRunner &run);

/// (x1..xN) {axis, reverse} region(2N args) -> N inclusive scans.
std::vector<RuntimeValue>
eval_scan(const ExecutionSite &site,
          const std::vector<const RuntimeValue *> &operands,
          const RegionRunner &run);

/// (a MxK, b KxN, acc MxN) -> acc + a @ b; also batched (BxMxK, BxKxN,
/// BxMxN).
RuntimeValue eval_dot(const ExecutionSite &site,
                      const std::vector<const RuntimeValue *> &operands);

} // namespace blocc::interp
