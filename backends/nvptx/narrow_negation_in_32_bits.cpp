#include "backends/nvptx/narrow_negation_in_32_bits.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>

#include <string>
#include <vector>

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

llvm::Value *widened(llvm::IRBuilder<> &b, Negation n, llvm::Value *x) {
  llvm::CallInst *call = b.CreateCall(widened_asm(b.getContext(), n), {x});
  call->setDoesNotThrow();
  call->setDoesNotAccessMemory();
  return call;
}

llvm::Value *emit_widened(llvm::Instruction &at, Negation n, llvm::Value *x) {
  llvm::IRBuilder<> b(&at);
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(at.getType());
  if (!vector)
    return widened(b, n, x);
  llvm::Value *result = llvm::PoisonValue::get(vector);
  for (unsigned k = 0; k < vector->getNumElements(); ++k)
    result = b.CreateInsertElement(
        result, widened(b, n, b.CreateExtractElement(x, uint64_t(k))),
        uint64_t(k));
  return result;
}

} // namespace

void emit_narrow_negation_in_32_bits(llvm::Module &module) {
  std::vector<llvm::Instruction *> found;
  llvm::Value *x = nullptr;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &i : block)
        if (as_narrow_negation(i, x) != Negation::None)
          found.push_back(&i);
  for (llvm::Instruction *i : found) {
    Negation n = as_narrow_negation(*i, x);
    i->replaceAllUsesWith(emit_widened(*i, n, x));
    i->eraseFromParent();
  }
}

} // namespace blocc::nvptx
