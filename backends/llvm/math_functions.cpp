#include "backends/llvm/math_functions.h"

#include "ir/error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>

namespace blocc::llvm_backend {

using ir::OpCode;

namespace {

/// Calls the C library's `name` (float variant `name` + "f") on every lane.
llvm::Value *call_libm_per_lane(llvm::IRBuilderBase &b, const char *name,
                                llvm::Value *x) {
  llvm::Type *element = x->getType()->getScalarType();
  std::string symbol = name;
  if (element->isFloatTy())
    symbol += "f";
  llvm::Module *module = b.GetInsertBlock()->getModule();
  llvm::FunctionCallee callee = module->getOrInsertFunction(
      symbol, llvm::FunctionType::get(element, {element}, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setOnlyAccessesInaccessibleMemory(); // errno at most
  }
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vector)
    return b.CreateCall(callee, {x});
  llvm::Value *result = llvm::PoisonValue::get(vector);
  for (unsigned lane = 0; lane < vector->getNumElements(); ++lane) {
    llvm::Value *r = b.CreateCall(callee, {b.CreateExtractElement(x, lane)});
    result = b.CreateInsertElement(result, r, lane);
  }
  return result;
}

} // namespace

llvm::Value *emit_math(llvm::IRBuilderBase &b, OpCode op, llvm::Value *x) {
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return b.CreateUnaryIntrinsic(id, x);
  };
  switch (op) {
  case OpCode::Exp:
    return intrinsic(llvm::Intrinsic::exp);
  case OpCode::Exp2:
    return intrinsic(llvm::Intrinsic::exp2);
  case OpCode::Log:
    return intrinsic(llvm::Intrinsic::log);
  case OpCode::Log2:
    return intrinsic(llvm::Intrinsic::log2);
  case OpCode::Sin:
    return intrinsic(llvm::Intrinsic::sin);
  case OpCode::Cos:
    return intrinsic(llvm::Intrinsic::cos);
  case OpCode::Sqrt:
    return intrinsic(llvm::Intrinsic::sqrt);
  case OpCode::Rsqrt:
    return b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                        intrinsic(llvm::Intrinsic::sqrt));
  case OpCode::Floor:
    return intrinsic(llvm::Intrinsic::floor);
  case OpCode::Ceil:
    return intrinsic(llvm::Intrinsic::ceil);
  case OpCode::Tanh:
    return call_libm_per_lane(b, "tanh", x);
  case OpCode::Erf:
    return call_libm_per_lane(b, "erf", x);
  default:
    throw Error("internal: " + std::string(ir::opcode_name(op)) +
                " is not a math function");
  }
}

} // namespace blocc::llvm_backend
