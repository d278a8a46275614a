// load, store, atomic_rmw and atomic_cas. Each checks every active lane
// against Memory's rules before it touches memory, then accesses lanes in
// row-major order: duplicate addresses in one store keep the last lane's
// value, and an atomic's lanes see the effects of the lanes before them.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <vector>

namespace blocc::interp {

class Memory;

/// (ptr [, mask [, other]]): masked-off lanes read `other`, or 0.
RuntimeValue eval_load(const ExecutionSite &site, const Memory &memory,
                       const std::vector<const RuntimeValue *> &operands);
class WriteRaces;

/// (ptr, value [, mask]); each written lane is recorded in `races` (when
/// not null) before it is written.
void eval_store(const ExecutionSite &site, const Memory &memory,
                const std::vector<const RuntimeValue *> &operands,
                WriteRaces *races = nullptr);
/// (ptr, value [, mask]) {kind: add|max|min|and|or|xor|xchg}: the old
/// values (0 in masked-off lanes). `add` on floats is a float add; max and
/// min follow the maximum/minimum ops (signedness, NaN-ignoring).
RuntimeValue eval_atomic_rmw(const ExecutionSite &site, const Memory &memory,
                             const std::vector<const RuntimeValue *> &operands);
/// (ptr, compare, value): stores `value` where the old bits equal
/// `compare`'s bits; returns the old values.
RuntimeValue eval_atomic_cas(const ExecutionSite &site, const Memory &memory,
                             const std::vector<const RuntimeValue *> &operands);

} // namespace blocc::interp
