#include "backends/nvptx/negated_abs_as_min.h"

#include "backends/nvptx/llvm_rewrite.h"

#include <llvm/IR/PatternMatch.h>

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
  replace_instructions(
      module,
      [](llvm::Instruction &i) { return negated_abs_operand(i) != nullptr; },
      [](llvm::IRBuilder<> &b, llvm::Instruction &i) {
        llvm::Value *x = negated_abs_operand(i);
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x,
                                       b.CreateNeg(x, "negated"), nullptr,
                                       "negated_abs");
      });
}

} // namespace blocc::nvptx
