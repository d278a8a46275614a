// How many lanes a chunk loop processes per iteration.
//
// One native vector of the loop's main element type (its compute type:
// f16/bf16 count as f32, booleans as 32-bit masks, pointers as 64 bits),
// at most 32 lanes, and no more than the block holds. When the innermost
// dimension has at least 4 elements the width stays within it, so that
// every chunk lies in one row: that keeps accesses along rows contiguous
// (one vector load) where the axis-info analysis proves them so, instead
// of gathers across rows.
#include "backends/cpu/kernel_lowering.h"

#include <algorithm>

namespace blocc::cpu {

int KernelLowering::vector_width(const ir::Type &type) const {
  ir::Scalar s = type.element();
  int bits;
  if (s == ir::Scalar::Ptr)
    bits = 64;
  else if (s == ir::Scalar::I1 || s == ir::Scalar::F16 || s == ir::Scalar::BF16)
    bits = 32;
  else
    bits = std::max(16, ir::scalar_bits(s));
  int64_t lanes = std::min(32, target.vector_bits / bits);
  lanes = std::min<int64_t>(lanes, type.num_elements());
  int64_t innermost = type.rank() > 0 ? type.dim(type.rank() - 1) : 1;
  if (innermost >= 4)
    lanes = std::min(lanes, innermost);
  return static_cast<int>(std::max<int64_t>(lanes, 1));
}

} // namespace blocc::cpu
