#include "backends/nvptx/a_fragment_registers.h"

#include "backends/nvptx/gpu_ir.h"

namespace blocc::nvptx {

AFragmentRegisters::AFragmentRegisters(KernelLowering &k,
                                       const ir::Operation &dot)
    : b_(k.builder) {
  const ir::Value *a = dot.operand(0);
  const Layout *layout = k.layouts().home(a);
  if (!layout || !takes_a_from_registers(dot, k.parent(*layout), *layout))
    return;
  const BlockedLayout &p = k.parent(*layout);
  registers_ = &k.registers(a, *layout);
  for (int64_t r = 0; r < p.num_registers(); ++r) {
    std::vector<int64_t> offset = p.register_offset(r);
    register_at_[{offset[0], offset[1]}] = r;
  }
  tile_rows_ = p.tile(0);
}

llvm::Value *AFragmentRegisters::word(int64_t row, int64_t column) const {
  auto half_bits = [&](int64_t c) {
    llvm::Value *v = (*registers_)[register_at_.at({row, c})];
    if (!v->getType()->isIntegerTy(16))
      v = b_.CreateBitCast(v, b_.getInt16Ty());
    return b_.CreateZExt(v, b_.getInt32Ty());
  };
  return b_.CreateOr(half_bits(column),
                     b_.CreateShl(half_bits(column + 1), 16));
}

std::array<llvm::Value *, 4>
AFragmentRegisters::fragment(int64_t row, int64_t below, int64_t column) const {
  return {word(row, column), word(row + below, column), word(row, column + 8),
          word(row + below, column + 8)};
}

} // namespace blocc::nvptx
