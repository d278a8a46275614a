#include "backends/nvptx/paired_narrowing.h"

#include "backends/nvptx/llvm_rewrite.h"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/PatternMatch.h>

namespace blocc::nvptx {

namespace {

/// The two f32 values a packing narrows, and the 16-bit float type.
struct NarrowedPair {
  llvm::Value *high = nullptr, *low = nullptr;
  llvm::Type *half_type = nullptr;
};

/// Whether `v` is zext(bitcast(fptrunc wide)) to i32 from f32 to f16 or
/// bf16; then `wide` and the narrow `type` are set.
bool narrowed_bits(llvm::Value *v, llvm::Value *&wide, llvm::Type *&type) {
  using namespace llvm::PatternMatch;
  llvm::Value *narrow = nullptr;
  if (!match(v, m_ZExt(m_BitCast(m_Value(narrow)))) ||
      !match(narrow, m_FPTrunc(m_Value(wide))) ||
      !wide->getType()->isFloatTy() || !v->getType()->isIntegerTy(32))
    return false;
  type = narrow->getType();
  return type->isHalfTy() || type->isBFloatTy();
}

/// The operands of a packing `or(shl(zext(bitcast(fptrunc hi)), 16),
/// zext(bitcast(fptrunc lo)))` (either operand order of the or), both
/// narrowed to the same type; nullopt for anything else.
std::optional<NarrowedPair> narrowed_pair(llvm::Instruction &i) {
  using namespace llvm::PatternMatch;
  llvm::Value *shifted = nullptr, *low = nullptr;
  if (!match(&i,
             m_c_Or(m_Shl(m_Value(shifted), m_SpecificInt(16)), m_Value(low))))
    return std::nullopt;
  NarrowedPair pair;
  llvm::Type *low_type = nullptr;
  if (!narrowed_bits(shifted, pair.high, pair.half_type) ||
      !narrowed_bits(low, pair.low, low_type) || low_type != pair.half_type)
    return std::nullopt;
  return pair;
}

} // namespace

void emit_paired_narrowing(llvm::Module &module) {
  replace_instructions(
      module, [](llvm::Instruction &i) { return narrowed_pair(i).has_value(); },
      [](llvm::IRBuilder<> &b, llvm::Instruction &i) {
        NarrowedPair pair = *narrowed_pair(i);
        // cvt.rn.f16x2.f32 d, a, b puts a in the upper half of d.
        llvm::Value *packed = b.CreateIntrinsic(
            pair.half_type->isHalfTy() ? llvm::Intrinsic::nvvm_ff2f16x2_rn
                                       : llvm::Intrinsic::nvvm_ff2bf16x2_rn,
            {}, {pair.high, pair.low});
        return b.CreateBitCast(packed, b.getInt32Ty(), "paired_narrowing");
      });
}

} // namespace blocc::nvptx
