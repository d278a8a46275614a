#include "backends/nvptx/negated_abs_as_min.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>

#include <vector>

namespace blocc::nvptx {

namespace {

/// x when `i` is sub(0, abs(x)), else nullptr.
llvm::Value *negated_abs_operand(llvm::Instruction &i) {
  using namespace llvm::PatternMatch;
  llvm::Value *x = nullptr;
  if (match(&i,
            m_Sub(m_ZeroInt(), m_Intrinsic<llvm::Intrinsic::abs>(m_Value(x)))))
    return x;
  return nullptr;
}

} // namespace

void emit_negated_abs_as_min(llvm::Module &module) {
  std::vector<llvm::Instruction *> found;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &i : block)
        if (negated_abs_operand(i))
          found.push_back(&i);
  for (llvm::Instruction *i : found) {
    llvm::Value *x = negated_abs_operand(*i);
    llvm::IRBuilder<> b(i);
    llvm::Value *minimum = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x,
                                                   b.CreateNeg(x, "negated"),
                                                   nullptr, "negated_abs");
    i->replaceAllUsesWith(minimum);
    i->eraseFromParent();
  }
}

} // namespace blocc::nvptx
