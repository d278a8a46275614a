// Shared-memory layouts as linear layouts: which tile element each offset
// (in elements) of a shared buffer holds. A row-major tile whose rows are
// XOR-swizzled keeps a warp's reads of one column of 16-byte vectors (as
// ldmatrix and MMA operand loads make them) on distinct banks, where a
// plain row-major tile with rows of 128 bytes puts all of them on the same
// banks.
#pragma once

#include "ir/linear_layout.h"

#include <cstdint>

namespace blocc::nvptx {

/// How the rows of a tile are swizzled: a row's vectors of `vector`
/// elements are permuted by XOR with its phase, (row / per_phase) %
/// max_phase. max_phase 1 is no swizzle. All powers of two.
struct Swizzle {
  int64_t vector = 1;
  int64_t per_phase = 1;
  int64_t max_phase = 1;
};

/// offset -> (dim0 = row, dim1 = column) for a rows x cols tile stored row
/// by row, each row swizzled by `swizzle`: the element at (row, col) sits
/// at offset row * cols + ((col / vector) ^ phase(row)) * vector + col %
/// vector.
ir::LinearLayout swizzled_shared_layout(int64_t rows, int64_t cols,
                                        const Swizzle &swizzle);

} // namespace blocc::nvptx
