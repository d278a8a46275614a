#include "backends/llvm/math_functions.h"

#include "backends/llvm/math_implementations.h"
#include "ir/error.h"

#include <llvm/IR/IRBuilder.h>

#include <string>

namespace blocc::llvm_backend {

using ir::OpCode;

llvm::Value *emit_math(llvm::IRBuilderBase &b, OpCode op, llvm::Value *x) {
  llvm::Type *element = x->getType()->getScalarType();
  if (!element->isFloatTy() && !element->isDoubleTy())
    throw Error("internal: " + std::string(ir::opcode_name(op)) +
                " on an element that is neither f32 nor f64");
  math::FloatLanes f = math::FloatLanes::of(b, x);
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return b.CreateUnaryIntrinsic(id, x);
  };
  switch (op) {
  case OpCode::Exp:
    return math::exp(f, x, false);
  case OpCode::Exp2:
    return math::exp(f, x, true);
  case OpCode::Log:
    return math::log(f, x, false);
  case OpCode::Log2:
    return math::log(f, x, true);
  case OpCode::Sin:
    return math::sin_cos(f, x, false);
  case OpCode::Cos:
    return math::sin_cos(f, x, true);
  case OpCode::Tanh:
    return math::tanh(f, x);
  case OpCode::Erf:
    return math::erf(f, x);
  case OpCode::Sqrt:
    return intrinsic(llvm::Intrinsic::sqrt);
  case OpCode::Rsqrt:
    return b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                        intrinsic(llvm::Intrinsic::sqrt));
  case OpCode::Floor:
    return f.floor(x);
  case OpCode::Ceil:
    return f.ceil(x);
  default:
    throw Error("internal: " + std::string(ir::opcode_name(op)) +
                " is not a math function");
  }
}

} // namespace blocc::llvm_backend
