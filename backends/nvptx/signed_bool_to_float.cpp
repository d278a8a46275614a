#include "backends/nvptx/signed_bool_to_float.h"

#include "backends/nvptx/llvm_rewrite.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

namespace blocc::nvptx {

namespace {

bool is_signed_bool_to_float(const llvm::Instruction &i) {
  const auto *cast = llvm::dyn_cast<llvm::SIToFPInst>(&i);
  return cast &&
         cast->getOperand(0)->getType()->getScalarType()->isIntegerTy(1);
}

} // namespace

void emit_signed_bool_to_float_as_select(llvm::Module &module) {
  replace_instructions(module, is_signed_bool_to_float,
                       [](llvm::IRBuilder<> &b, llvm::Instruction &i) {
                         llvm::Type *type = i.getType();
                         return b.CreateSelect(
                             i.getOperand(0), llvm::ConstantFP::get(type, -1.0),
                             llvm::ConstantFP::get(type, 0.0), "signed_bool");
                       });
}

} // namespace blocc::nvptx
