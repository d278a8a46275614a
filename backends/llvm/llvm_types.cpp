#include "backends/llvm/llvm_types.h"

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Type.h>

namespace blocc::llvm_backend {

using ir::Scalar;

bool is_narrow_float(Scalar s) { return s == Scalar::F16 || s == Scalar::BF16; }

int storage_bytes(Scalar s) {
  int bits = s == Scalar::Ptr ? 64 : ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

llvm::Type *storage_type(llvm::LLVMContext &context, Scalar s) {
  switch (s) {
  case Scalar::F32:
    return llvm::Type::getFloatTy(context);
  case Scalar::F64:
    return llvm::Type::getDoubleTy(context);
  case Scalar::Ptr:
    return llvm::PointerType::get(context, 0);
  default:
    return llvm::IntegerType::get(context, 8 * storage_bytes(s));
  }
}

llvm::Type *register_type(llvm::LLVMContext &context, Scalar s) {
  if (s == Scalar::I1)
    return llvm::Type::getInt1Ty(context);
  return storage_type(context, s);
}

} // namespace blocc::llvm_backend
