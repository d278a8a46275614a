#include "backends/llvm/element_ops.h"

#include "backends/llvm/llvm_types.h"
#include "backends/llvm/math_functions.h"
#include "backends/llvm/math_lanes.h"
#include "backends/llvm/narrow_float.h"
#include "ir/error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

namespace blocc::llvm_backend {

using ir::OpCode;
using ir::Scalar;

namespace {

[[noreturn]] void unsupported(const std::string &what) {
  throw Error("the LLVM backends do not support " + what);
}

std::string name(Scalar s) { return std::string(ir::scalar_name(s)); }

/// `scalar_type` with the lane count of `like`.
llvm::Type *like_shape(llvm::Type *scalar_type, llvm::Value *like) {
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(like->getType()))
    return llvm::VectorType::get(scalar_type, v->getElementCount());
  return scalar_type;
}

llvm::Value *all_ones_like(llvm::Value *x) {
  return llvm::Constant::getAllOnesValue(x->getType());
}

/// The integer with x's float bits.
llvm::Value *float_bits(llvm::IRBuilderBase &b, llvm::Value *x) {
  unsigned width = x->getType()->getScalarSizeInBits();
  return b.CreateBitCast(x, like_shape(b.getIntNTy(width), x));
}

/// x > y ? x : y (max) or x < y ? x : y (min): x86's MAXPS/MINPS.
llvm::Value *plain_min_max(llvm::IRBuilderBase &b, bool is_max, llvm::Value *x,
                           llvm::Value *y) {
  return b.CreateSelect(is_max ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y),
                        x, y);
}

/// minimum/maximum of floats, as fmin/fmax but with -0 < +0: a NaN operand
/// yields the other operand (a when both are NaN, b's NaN when only... see
/// below), equal operands differ at most in the sign of zero.
llvm::Value *float_min_max(llvm::IRBuilderBase &b, bool is_max, llvm::Value *x,
                           llvm::Value *y) {
  llvm::Value *r = plain_min_max(b, is_max, x, y);
  // Equal values: the sign bits decide (min ORs them, max ANDs them).
  llvm::Value *xb = float_bits(b, x), *yb = float_bits(b, y);
  llvm::Value *zero_sign = is_max ? b.CreateAnd(xb, yb) : b.CreateOr(xb, yb);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, y),
                     b.CreateBitCast(zero_sign, x->getType()), r);
  // The interpreter: if x is NaN return y; else if y is NaN return x.
  r = b.CreateSelect(b.CreateFCmpUNO(y, y), x, r);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), y, r);
}

llvm::Value *integer_binary(llvm::IRBuilderBase &b, OpCode op, Scalar s,
                            llvm::Value *x, llvm::Value *y) {
  bool is_signed = ir::is_signed(s);
  llvm::Type *type = x->getType();
  unsigned width = type->getScalarSizeInBits();
  switch (op) {
  case OpCode::Add:
    return b.CreateAdd(x, y);
  case OpCode::Sub:
    return b.CreateSub(x, y);
  case OpCode::Mul:
    return b.CreateMul(x, y);
  case OpCode::Div:
  case OpCode::Rem: {
    llvm::Value *zero = llvm::Constant::getNullValue(type);
    llvm::Value *one = llvm::ConstantInt::get(type, 1);
    llvm::Value *unsafe = b.CreateICmpEQ(y, zero);
    if (is_signed) {
      // INT_MIN / -1 overflows (and traps on x86); dividing by 1 instead
      // gives the wrapped quotient INT_MIN and the remainder 0.
      llvm::Value *min =
          llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(width));
      llvm::Value *overflow = b.CreateAnd(b.CreateICmpEQ(x, min),
                                          b.CreateICmpEQ(y, all_ones_like(y)));
      unsafe = b.CreateOr(unsafe, overflow);
    }
    llvm::Value *divisor = b.CreateSelect(unsafe, one, y);
    if (op == OpCode::Div)
      return is_signed ? b.CreateSDiv(x, divisor) : b.CreateUDiv(x, divisor);
    return is_signed ? b.CreateSRem(x, divisor) : b.CreateURem(x, divisor);
  }
  case OpCode::And:
    return b.CreateAnd(x, y);
  case OpCode::Or:
    return b.CreateOr(x, y);
  case OpCode::Xor:
    return b.CreateXor(x, y);
  case OpCode::Shl:
  case OpCode::Shr: {
    // The amount is an unsigned number of the operand's width; LLVM's
    // shifts by >= width are poison, so those lanes select the defined
    // result (the shift of the other arm is never observed).
    llvm::Value *too_far =
        b.CreateICmpUGE(y, llvm::ConstantInt::get(type, width));
    if (op == OpCode::Shl)
      return b.CreateSelect(too_far, llvm::Constant::getNullValue(type),
                            b.CreateShl(x, y));
    if (!is_signed)
      return b.CreateSelect(too_far, llvm::Constant::getNullValue(type),
                            b.CreateLShr(x, y));
    llvm::Value *sign_fill =
        b.CreateAShr(x, llvm::ConstantInt::get(type, width - 1));
    return b.CreateSelect(too_far, sign_fill, b.CreateAShr(x, y));
  }
  case OpCode::Minimum:
    return b.CreateBinaryIntrinsic(
        is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, x, y);
  case OpCode::Maximum:
    return b.CreateBinaryIntrinsic(
        is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, x, y);
  case OpCode::Umulhi: {
    llvm::Type *wide = like_shape(b.getIntNTy(2 * width), x);
    llvm::Value *product =
        b.CreateMul(b.CreateZExt(x, wide), b.CreateZExt(y, wide));
    return b.CreateTrunc(b.CreateLShr(product, width), type);
  }
  default:
    unsupported(std::string(ir::opcode_name(op)) + " on " + name(s));
  }
}

llvm::Value *float_binary(llvm::IRBuilderBase &b, OpCode op, Scalar s,
                          llvm::Value *x, llvm::Value *y) {
  switch (op) {
  case OpCode::Add:
    return b.CreateFAdd(x, y);
  case OpCode::Sub:
    return b.CreateFSub(x, y);
  case OpCode::Mul:
    return b.CreateFMul(x, y);
  case OpCode::Div:
    return b.CreateFDiv(x, y);
  case OpCode::Rem:
    return b.CreateFRem(x, y); // fmod, as the interpreter
  case OpCode::Minimum:
    return float_min_max(b, false, x, y);
  case OpCode::Maximum:
    return float_min_max(b, true, x, y);
  default:
    unsupported(std::string(ir::opcode_name(op)) + " on " + name(s));
  }
}

void reject_fp8(Scalar s, const char *what) {
  if (ir::is_fp8(s))
    unsupported(std::string(what) + " on " + name(s) +
                " (fp8 is a storage format)");
}

/// x + y rounded to odd (both f64): the neighbour with an odd last bit
/// when the sum is inexact. Knuth's TwoSum gives the rounding error.
llvm::Value *add_round_to_odd(llvm::IRBuilderBase &b, llvm::Value *x,
                              llvm::Value *y) {
  llvm::Value *sum = b.CreateFAdd(x, y);
  llvm::Value *y_part = b.CreateFSub(sum, x);
  llvm::Value *x_part = b.CreateFSub(sum, y_part);
  llvm::Value *error =
      b.CreateFAdd(b.CreateFSub(x, x_part), b.CreateFSub(y, y_part));
  llvm::Type *i64 = like_shape(b.getInt64Ty(), sum);
  llvm::Value *bits = b.CreateBitCast(sum, i64);
  llvm::Value *zero = llvm::ConstantFP::get(sum->getType(), 0.0);
  llvm::Value *one = llvm::ConstantInt::get(i64, 1);
  llvm::Value *even =
      b.CreateICmpEQ(b.CreateAnd(bits, one), llvm::Constant::getNullValue(i64));
  llvm::Value *finite =
      b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, sum),
                      llvm::ConstantFP::getInfinity(sum->getType()));
  llvm::Value *adjust =
      b.CreateAnd(b.CreateAnd(finite, even), b.CreateFCmpONE(error, zero));
  // Toward the error: away from zero when error and sum share a sign.
  llvm::Value *same_sign =
      b.CreateICmpEQ(b.CreateFCmpOLT(error, zero), b.CreateFCmpOLT(sum, zero));
  llvm::Value *step =
      b.CreateSelect(same_sign, one, llvm::Constant::getAllOnesValue(i64));
  llvm::Value *moved = b.CreateAdd(bits, step);
  return b.CreateBitCast(b.CreateSelect(adjust, moved, bits), sum->getType());
}

} // namespace

llvm::Value *to_compute(llvm::IRBuilderBase &b, Scalar s, llvm::Value *x) {
  return is_narrow_float(s) ? widen_narrow_float(b, x, s) : x;
}

llvm::Value *from_compute(llvm::IRBuilderBase &b, Scalar s, llvm::Value *x) {
  return is_narrow_float(s) ? narrow_from_f32(b, x, s) : x;
}

llvm::Value *emit_fold_min_max(llvm::IRBuilderBase &b, bool is_max,
                               llvm::Value *x, llvm::Value *y) {
  llvm::Value *fast = plain_min_max(b, is_max, x, y);
  // Unordered or equal to zero: the lanes where the plain rule may differ.
  llvm::Value *special = b.CreateOrReduce(
      b.CreateFCmpUEQ(y, llvm::Constant::getNullValue(y->getType())));
  llvm::BasicBlock *from = b.GetInsertBlock();
  llvm::Function *f = from->getParent();
  auto *slow = llvm::BasicBlock::Create(b.getContext(), "minmax.slow", f);
  auto *join = llvm::BasicBlock::Create(b.getContext(), "minmax.join", f);
  llvm::MDBuilder weights(b.getContext());
  b.CreateCondBr(special, slow, join, weights.createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(slow);
  llvm::Value *exact = float_min_max(b, is_max, x, y);
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode *result = b.CreatePHI(x->getType(), 2);
  result->addIncoming(fast, from);
  result->addIncoming(exact, slow);
  return result;
}

llvm::Value *emit_binary(llvm::IRBuilderBase &b, OpCode op, Scalar s,
                         llvm::Value *lhs, llvm::Value *rhs) {
  reject_fp8(s, std::string(ir::opcode_name(op)).c_str());
  if (s == Scalar::Ptr)
    unsupported(std::string(ir::opcode_name(op)) + " on pointers");
  if (ir::is_integer(s))
    return integer_binary(b, op, s, lhs, rhs);
  return from_compute(
      b, s,
      float_binary(b, op, s, to_compute(b, s, lhs), to_compute(b, s, rhs)));
}

llvm::Value *flush_subnormals(llvm::IRBuilderBase &b, llvm::Value *x) {
  llvm::Value *smallest_normal = llvm::ConstantFP::get(x->getType(), 0x1p-126);
  llvm::Value *tiny = b.CreateFCmpOLT(
      b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), smallest_normal);
  return b.CreateSelect(tiny, llvm::Constant::getNullValue(x->getType()), x);
}

llvm::Value *emit_unary(llvm::IRBuilderBase &b, OpCode op, Scalar s,
                        llvm::Value *x) {
  reject_fp8(s, std::string(ir::opcode_name(op)).c_str());
  if (s == Scalar::Ptr)
    unsupported(std::string(ir::opcode_name(op)) + " on pointers");
  llvm::Type *type = x->getType();
  if (ir::is_integer(s)) {
    switch (op) {
    case OpCode::Neg:
      return b.CreateNeg(x);
    case OpCode::Not:
      return b.CreateNot(x);
    case OpCode::Abs:
      if (!ir::is_signed(s))
        return x;
      return b.CreateSelect(
          b.CreateICmpSLT(x, llvm::Constant::getNullValue(type)),
          b.CreateNeg(x), x); // abs(INT_MIN) wraps to INT_MIN
    default:
      unsupported(std::string(ir::opcode_name(op)) + " on " + name(s));
    }
  }
  // neg and abs only touch the sign bit (also of NaN), on the bits.
  if (op == OpCode::Neg || op == OpCode::Abs) {
    unsigned width = type->getScalarSizeInBits();
    llvm::Value *bits = is_narrow_float(s) ? x : float_bits(b, x);
    llvm::Value *sign = llvm::ConstantInt::get(bits->getType(),
                                               llvm::APInt::getSignMask(width));
    llvm::Value *r = op == OpCode::Neg ? b.CreateXor(bits, sign)
                                       : b.CreateAnd(bits, b.CreateNot(sign));
    return is_narrow_float(s) ? r : b.CreateBitCast(r, type);
  }
  if (op == OpCode::Not)
    unsupported("not on " + name(s));
  return from_compute(b, s, emit_math(b, op, to_compute(b, s, x)));
}

llvm::Value *emit_fma(llvm::IRBuilderBase &b, Scalar s, llvm::Value *a,
                      llvm::Value *m, llvm::Value *c) {
  reject_fp8(s, "fma");
  if (ir::is_integer(s))
    return b.CreateAdd(b.CreateMul(a, m), c);
  if (s == Scalar::F64 || (s == Scalar::F32 && math::target_has_fma(b)))
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, m, c});
  // Narrow formats, and f32 on targets without FMA (where llvm.fma would
  // call fmaf per lane): the product of two significands is exact in f64;
  // their sum rounded to odd then rounds to the format exactly once.
  llvm::Type *f64 = like_shape(b.getDoubleTy(), a);
  auto wide = [&](llvm::Value *v) {
    return b.CreateFPExt(to_compute(b, s, v), f64);
  };
  llvm::Value *product = b.CreateFMul(wide(a), wide(m));
  llvm::Value *sum = add_round_to_odd(b, product, wide(c));
  if (s == Scalar::F32)
    return b.CreateFPTrunc(sum, a->getType());
  return narrow_from_f64(b, sum, s);
}

llvm::Value *emit_compare(llvm::IRBuilderBase &b, const std::string &predicate,
                          Scalar s, llvm::Value *lhs, llvm::Value *rhs) {
  reject_fp8(s, "cmp");
  using P = llvm::CmpInst::Predicate;
  struct Row {
    const char *name;
    P ordered_float, signed_int, unsigned_int;
  };
  static const Row rows[] = {
      {"eq", P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ},
      {"ne", P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE},
      {"lt", P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT},
      {"le", P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE},
      {"gt", P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT},
      {"ge", P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE},
  };
  for (const Row &row : rows) {
    if (predicate != row.name)
      continue;
    if (s != Scalar::Ptr && ir::is_float(s))
      return b.CreateFCmp(row.ordered_float, to_compute(b, s, lhs),
                          to_compute(b, s, rhs));
    bool is_signed = s != Scalar::Ptr && ir::is_signed(s);
    return b.CreateICmp(is_signed ? row.signed_int : row.unsigned_int, lhs,
                        rhs);
  }
  unsupported("the cmp predicate '" + predicate + "'");
}

llvm::Value *emit_cast(llvm::IRBuilderBase &b, Scalar from, Scalar to,
                       llvm::Value *x) {
  if (from == to)
    return x;
  if (from == Scalar::Ptr || to == Scalar::Ptr)
    unsupported("casts between pointers and numbers (use ptr_to_int)");
  llvm::LLVMContext &context = b.getContext();
  llvm::Type *target = like_shape(register_type(context, to), x);
  bool from_float = ir::is_float(from), to_float = ir::is_float(to);
  if (!from_float && !to_float) {
    if (to == Scalar::I1)
      return b.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    return ir::is_signed(from) ? b.CreateSExtOrTrunc(x, target)
                               : b.CreateZExtOrTrunc(x, target);
  }
  if (!from_float)
    return integer_to_float(b, x, from, to);
  // The exact value: f16, bf16 and fp8 are exact in f32.
  llvm::Value *value =
      ir::is_fp8(from) ? fp8_to_f32(b, x, from) : to_compute(b, from, x);
  if (!to_float) {
    if (to == Scalar::I1) // NaN counts as nonzero
      return b.CreateFCmpUNE(value,
                             llvm::ConstantFP::get(value->getType(), 0.0));
    // Truncation toward zero, saturating, NaN -> 0.
    return b.CreateIntrinsic(ir::is_signed(to) ? llvm::Intrinsic::fptosi_sat
                                               : llvm::Intrinsic::fptoui_sat,
                             {target, value->getType()}, {value});
  }
  switch (to) {
  case Scalar::F64:
    if (from == Scalar::F32)
      return b.CreateFPExt(value, target); // keeps the NaN payload
    return canonicalize_nan(b, b.CreateFPExt(value, target));
  case Scalar::F32:
    if (from == Scalar::F64)
      return b.CreateFPTrunc(value, target);
    return canonicalize_nan(b, value);
  case Scalar::F8E4M3:
  case Scalar::F8E5M2:
    if (from == Scalar::F64)
      return narrow_from_f64(b, value, to);
    return fp8_from_f32(b, value, to);
  default: // f16 or bf16
    if (from == Scalar::F64)
      return narrow_from_f64(b, value, to);
    return narrow_from_f32(b, value, to);
  }
}

llvm::Value *emit_bitcast(llvm::IRBuilderBase &b, Scalar from, Scalar to,
                          llvm::Value *x) {
  llvm::Type *target = like_shape(register_type(b.getContext(), to), x);
  if (from == Scalar::Ptr && to != Scalar::Ptr)
    return b.CreatePtrToInt(x, target);
  if (to == Scalar::Ptr && from != Scalar::Ptr)
    return b.CreateIntToPtr(x, target);
  return b.CreateBitCast(x, target);
}

llvm::Value *emit_divisor_is_zero(llvm::IRBuilderBase &b,
                                  llvm::Value *divisor) {
  return b.CreateICmpEQ(divisor,
                        llvm::Constant::getNullValue(divisor->getType()));
}

} // namespace blocc::llvm_backend
