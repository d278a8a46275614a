// What the passes that rewrite LLVM IR before PTX emission share: finding
// the instructions of one form and replacing each, and building a scalar
// rewrite element by element for vectors.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <vector>

namespace blocc::nvptx {

/// Replaces every instruction of `module` for which `matches` holds with
/// the value `rewrite` builds (an IRBuilder before the instruction). All
/// are found first, and each reads its operands when it is rewritten, so
/// that one rewritten instruction may feed another.
template <typename Matches, typename Rewrite>
void replace_instructions(llvm::Module &module, Matches matches,
                          Rewrite rewrite) {
  std::vector<llvm::Instruction *> found;
  for (llvm::Function &f : module)
    for (llvm::BasicBlock &block : f)
      for (llvm::Instruction &i : block)
        if (matches(i))
          found.push_back(&i);
  for (llvm::Instruction *i : found) {
    llvm::IRBuilder<> b(i);
    i->replaceAllUsesWith(rewrite(b, *i));
    i->eraseFromParent();
  }
}

using ScalarRewrite =
    std::function<llvm::Value *(const std::vector<llvm::Value *> &)>;

/// `scalar` of `operands` for a result of `type`: once for scalars, and
/// element by element (extract, rewrite, insert) for fixed vectors.
llvm::Value *elementwise(llvm::IRBuilder<> &b, llvm::Type *type,
                         const std::vector<llvm::Value *> &operands,
                         const ScalarRewrite &scalar);

/// A call of side-effect-free inline asm that neither throws nor touches
/// memory.
llvm::Value *call_pure_asm(llvm::IRBuilder<> &b, llvm::InlineAsm *code,
                           const std::vector<llvm::Value *> &operands);

} // namespace blocc::nvptx
