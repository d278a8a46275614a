#include "backends/nvptx/narrow_negation_in_32_bits.h"

#include "backends/nvptx/llvm_rewrite.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/PatternMatch.h>

#include <string>

namespace blocc::nvptx {

namespace {

enum class Negation { None, Neg, Abs };

/// What `i` is, and its operand, for i16 (or vectors of i16) values.
Negation as_narrow_negation(llvm::Instruction &i, llvm::Value *&x) {
  if (!i.getType()->getScalarType()->isIntegerTy(16))
    return Negation::None;
  using namespace llvm::PatternMatch;
  if (match(&i, m_Sub(m_ZeroInt(), m_Value(x))))
    return Negation::Neg;
  if (match(&i, m_Intrinsic<llvm::Intrinsic::abs>(m_Value(x))))
    return Negation::Abs;
  return Negation::None;
}

/// "{ .reg .b32 %w; cvt.s32.s16 %w, $1; neg.s32 %w, %w; cvt.u16.u32 $0,
/// %w; }" (abs.s32 for Abs) on one i16.
llvm::InlineAsm *widened_asm(llvm::LLVMContext &context, Negation n) {
  std::string op = n == Negation::Neg ? "neg.s32" : "abs.s32";
  std::string text = "{ .reg .b32 %w; cvt.s32.s16 %w, $1; " + op +
                     " %w, %w; cvt.u16.u32 $0, %w; }";
  llvm::Type *i16 = llvm::Type::getInt16Ty(context);
  auto *type = llvm::FunctionType::get(i16, {i16}, false);
  return llvm::InlineAsm::get(type, text, "=h,h", /*hasSideEffects=*/false);
}

} // namespace

void emit_narrow_negation_in_32_bits(llvm::Module &module) {
  llvm::Value *x = nullptr;
  replace_instructions(
      module,
      [&](llvm::Instruction &i) {
        return as_narrow_negation(i, x) != Negation::None;
      },
      [&](llvm::IRBuilder<> &b, llvm::Instruction &i) {
        Negation n = as_narrow_negation(i, x);
        return elementwise(b, i.getType(), {x},
                           [&](const std::vector<llvm::Value *> &element) {
                             return call_pure_asm(
                                 b, widened_asm(b.getContext(), n), element);
                           });
      });
}

} // namespace blocc::nvptx
