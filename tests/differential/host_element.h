// Elements of the kernel's buffers as they sit in host memory, read and
// written by the harness. Kept apart from the interpreter's own conversions
// (backends/interpreter/float_format.h) so that the executor under test
// never also decides what its inputs and outputs mean.
#pragma once

#include "ir/type.h"

#include <cstdint>

namespace blocc::differential {

/// Bytes one element of `s` takes in a buffer (i1: one byte, as bool).
int element_bytes(ir::Scalar s);

/// The element's bits, zero-extended.
uint64_t read_bits(ir::Scalar s, const unsigned char *p);

/// The element's value: exact for every float format; integers beyond
/// 2^53 round to the nearest double.
double read_value(ir::Scalar s, const unsigned char *p);

/// True when the element is a NaN (floats only).
bool is_nan(ir::Scalar s, const unsigned char *p);

/// Writes a value that `s` represents exactly (floats) or an integer
/// (truncated to the width of `s`).
void write_float(ir::Scalar s, double value, unsigned char *p);
void write_integer(ir::Scalar s, int64_t value, unsigned char *p);

} // namespace blocc::differential
