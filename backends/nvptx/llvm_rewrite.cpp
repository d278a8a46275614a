#include "backends/nvptx/llvm_rewrite.h"

#include <llvm/IR/InlineAsm.h>

namespace blocc::nvptx {

llvm::Value *elementwise(llvm::IRBuilder<> &b, llvm::Type *type,
                         const std::vector<llvm::Value *> &operands,
                         const ScalarRewrite &scalar) {
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (!vector)
    return scalar(operands);
  llvm::Value *result = llvm::PoisonValue::get(vector);
  for (unsigned k = 0; k < vector->getNumElements(); ++k) {
    std::vector<llvm::Value *> elements;
    for (llvm::Value *v : operands)
      elements.push_back(b.CreateExtractElement(v, uint64_t(k)));
    result = b.CreateInsertElement(result, scalar(elements), uint64_t(k));
  }
  return result;
}

llvm::Value *call_pure_asm(llvm::IRBuilder<> &b, llvm::InlineAsm *code,
                           const std::vector<llvm::Value *> &operands) {
  llvm::CallInst *call = b.CreateCall(code, operands);
  call->setDoesNotThrow();
  call->setDoesNotAccessMemory();
  return call;
}

} // namespace blocc::nvptx
