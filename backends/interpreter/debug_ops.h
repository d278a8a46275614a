// print and assert.
#pragma once

#include "backends/interpreter/execution_site.h"
#include "backends/interpreter/runtime_value.h"

#include <iosfwd>
#include <vector>

namespace blocc::interp {

/// (values...) {prefix, hex}: one line per element of each value,
///   pid (x, y, z) idx (i, j) <prefix> <value>
/// with " (operand k)" after the prefix when there are several values.
/// Integers print in decimal, floats as the shortest text that reads back
/// to the same value, pointers in hex; with `hex`, every element prints its
/// bit pattern in hex.
void eval_print(const ExecutionSite &site,
                const std::vector<const RuntimeValue *> &operands,
                std::ostream &out);

/// (cond) {message}: throws when any lane of cond is false.
void eval_assert(const ExecutionSite &site,
                 const std::vector<const RuntimeValue *> &operands);

/// The text print gives one element.
std::string format_element(uint64_t bits, ir::Scalar s, bool hex);

} // namespace blocc::interp
