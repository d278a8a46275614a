// The register layouts of the tensor cores' warp-level MMA (mma.sync) as
// linear layouts: which element of a tile each (register, lane) of a warp
// holds for the accumulator and the two operands. They are the layouts a
// dot on tensor cores converts its operands into and its result out of;
// the conversions come from the maps (ir/linear_layout.h), not from a case
// per pair.
//
// m16n8k16 with f16/bf16 operands (the PTX ISA's fragment tables): lanes
// form 8 groups of 4 (group = lane / 4, the row; lane % 4, a pair of
// columns), and a thread's registers add the second element of its pair,
// the row 8 below, and (for A, whose K is 16) the columns 8 to the right.
#pragma once

#include "ir/linear_layout.h"

namespace blocc::nvptx {

/// The 16 x 8 accumulator (C and D, f32 or f16): 4 registers per lane;
/// outputs dim0 (row, m) and dim1 (column, n).
ir::LinearLayout mma_m16n8k16_accumulator();

/// Operand A, 16 x 16 (m x k), f16/bf16: 8 elements per lane (four
/// .f16x2 registers); outputs dim0 (m) and dim1 (k).
ir::LinearLayout mma_m16n8k16_operand_a();

/// Operand B, 16 x 8 (k x n), f16/bf16: 4 elements per lane (two .f16x2
/// registers); outputs dim0 (k) and dim1 (n).
ir::LinearLayout mma_m16n8k16_operand_b();

} // namespace blocc::nvptx
