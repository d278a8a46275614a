#include "backends/llvm/math_functions.h"

#include "ir/error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <initializer_list>
#include <string>
#include <vector>

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

/// Arithmetic helpers on f32 values of x's shape.
struct F32 {
  llvm::IRBuilderBase &b;
  llvm::Type *type; // float or <N x float>
  llvm::Type *bits; // i32 or <N x i32>

  llvm::Value *c(double v) { return llvm::ConstantFP::get(type, v); }
  llvm::Value *i(int64_t v) { return llvm::ConstantInt::get(bits, v); }
  llvm::Value *fma(llvm::Value *a, llvm::Value *m, llvm::Value *add) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {a, m, add});
  }
  /// c[0] + t * (c[1] + t * (...)), by Horner with fused steps.
  llvm::Value *polynomial(llvm::Value *t, std::initializer_list<double> cs) {
    std::vector<double> coefficients(cs);
    llvm::Value *r = c(coefficients.back());
    for (size_t k = coefficients.size() - 1; k-- > 0;)
      r = fma(r, t, c(coefficients[k]));
    return r;
  }
  /// 2^n for integral n in [-126, 127] (an f32 with that exponent).
  llvm::Value *power_of_two(llvm::Value *n) {
    llvm::Value *e = b.CreateFPToSI(n, bits);
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, i(127)), 23), type);
  }
};

F32 f32_of(llvm::IRBuilderBase &b, llvm::Value *x) {
  llvm::Type *bits = b.getInt32Ty();
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(x->getType()))
    bits = llvm::VectorType::get(bits, v->getElementCount());
  return F32{b, x->getType(), bits};
}

/// e^t for |t| <= ln(2)/2 + a little: Taylor to degree 7, whose remainder
/// (< 6e-9) is a tenth of an f32 ulp.
llvm::Value *exp_reduced(F32 &f, llvm::Value *t) {
  return f.polynomial(t, {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120,
                          1.0 / 720, 1.0 / 5040});
}

/// p * 2^n for integral n in [-151, 129]: two steps, each a normal power
/// of two, so that subnormal results round once and large ones overflow.
llvm::Value *scale(F32 &f, llvm::Value *p, llvm::Value *n) {
  llvm::Value *half = f.b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc,
                                               f.b.CreateFMul(n, f.c(0.5)));
  llvm::Value *rest = f.b.CreateFSub(n, half);
  return f.b.CreateFMul(f.b.CreateFMul(p, f.power_of_two(half)),
                        f.power_of_two(rest));
}

/// exp and exp2 on f32 lanes: x = n ln2 + t (Cody and Waite's reduction,
/// with fused multiply-adds against ln2 split in two), e^t by polynomial,
/// scaled by 2^n. Within 2 ulp of the correctly rounded result (checked
/// in tests/cpu/vector_math_test.cpp); NaN stays NaN, overflow gives inf,
/// underflow subnormals and then 0.
llvm::Value *vector_exp(llvm::IRBuilderBase &b, llvm::Value *x, bool base2) {
  F32 f = f32_of(b, x);
  // Beyond these the result is inf or 0 whatever the reduction says.
  llvm::Value *clamped = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum,
      b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x,
                              f.c(base2 ? -152.0 : -105.0)),
      f.c(base2 ? 130.0 : 90.0));
  llvm::Value *n, *t;
  if (base2) {
    n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, clamped);
    t = b.CreateFMul(b.CreateFSub(clamped, n), f.c(0.6931471805599453));
  } else {
    n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                               b.CreateFMul(clamped, f.c(1.4426950408889634)));
    const double ln2_hi = 0.693145751953125;        // 2^-1 .. 2^-16 bits
    const double ln2_lo = 1.428606765330187045e-06; // ln 2 - ln2_hi
    t = f.fma(b.CreateFNeg(n), f.c(ln2_hi), clamped);
    t = f.fma(b.CreateFNeg(n), f.c(ln2_lo), t);
  }
  llvm::Value *r = scale(f, exp_reduced(f, t), n);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), b.CreateFAdd(x, x), r);
}

/// log and log2 on f32 lanes: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
/// log(m) = log1p(m - 1) by the atanh series in s = (m - 1) / (m + 1)
/// (|s| < 0.172, remainder < 1e-9), plus e ln 2. Within 2 ulp; log(0) =
/// -inf, negative x and NaN give NaN, log(inf) = inf.
llvm::Value *vector_log(llvm::IRBuilderBase &b, llvm::Value *x, bool base2) {
  F32 f = f32_of(b, x);
  // Subnormals: scale into the normal range first.
  llvm::Value *tiny = b.CreateFCmpOLT(x, f.c(0x1p-126));
  llvm::Value *normal = b.CreateSelect(tiny, b.CreateFMul(x, f.c(0x1p23)), x);
  llvm::Value *bits = b.CreateBitCast(normal, f.bits);
  llvm::Value *e = b.CreateSub(b.CreateLShr(bits, 23), f.i(127));
  e = b.CreateSub(e, b.CreateSelect(tiny, f.i(23), f.i(0)));
  llvm::Value *m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, f.i(0x7fffff)), f.i(0x3f800000)), f.type);
  llvm::Value *big = b.CreateFCmpOGT(m, f.c(1.4142135623730951));
  m = b.CreateSelect(big, b.CreateFMul(m, f.c(0.5)), m);
  e = b.CreateAdd(e, b.CreateZExt(big, f.bits));
  llvm::Value *ef = b.CreateSIToFP(e, f.type);
  // log(m) = log1p(f), f = m - 1 exact. With s = f / (2 + f),
  // log1p(f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R(s^2))), where
  // R(z) = 2z/3 + 2z^2/5 + ... (fdlibm's arrangement): the leading f is
  // exact and the correction is small, so the sum rounds about once.
  llvm::Value *fm = b.CreateFSub(m, f.c(1.0));
  llvm::Value *s = b.CreateFDiv(fm, b.CreateFAdd(fm, f.c(2.0)));
  llvm::Value *z = b.CreateFMul(s, s);
  llvm::Value *R = b.CreateFMul(
      z, f.polynomial(z, {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11}));
  llvm::Value *half_square = b.CreateFMul(f.c(0.5), b.CreateFMul(fm, fm));
  llvm::Value *correction =
      b.CreateFSub(half_square, b.CreateFMul(s, b.CreateFAdd(half_square, R)));
  llvm::Value *r;
  if (base2) {
    // e + (f - correction) log2(e), with log2(e) split in two so that the
    // leading f * log2e_hi rounds once.
    const double log2e_hi = 1.44269502162933349609375; // f32 log2(e)
    const double log2e_lo = 1.925963033500011e-08;
    llvm::Value *small = f.fma(
        fm, f.c(log2e_lo), b.CreateFMul(correction, f.c(-1.4426950408889634)));
    r = b.CreateFAdd(ef, f.fma(fm, f.c(log2e_hi), small));
  } else {
    const double ln2_hi = 0.693145751953125;
    const double ln2_lo = 1.428606765330187045e-06;
    // e ln2_hi + (f - (correction - e ln2_lo))
    llvm::Value *tail = b.CreateFSub(
        fm, b.CreateFSub(correction, b.CreateFMul(ef, f.c(ln2_lo))));
    r = f.fma(ef, f.c(ln2_hi), tail);
  }
  // Specials, in the order that makes each case win.
  llvm::Value *inf = llvm::ConstantFP::getInfinity(f.type);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, inf), inf, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, f.c(0.0)),
                     llvm::ConstantFP::getInfinity(f.type, true), r);
  llvm::Value *invalid = b.CreateFCmpULT(x, f.c(0.0)); // negative or NaN
  return b.CreateSelect(invalid, llvm::ConstantFP::getNaN(f.type), r);
}

} // namespace

llvm::Value *emit_math(llvm::IRBuilderBase &b, OpCode op, llvm::Value *x) {
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return b.CreateUnaryIntrinsic(id, x);
  };
  bool is_f32 = x->getType()->getScalarType()->isFloatTy();
  if (is_f32) {
    switch (op) {
    case OpCode::Exp:
      return vector_exp(b, x, false);
    case OpCode::Exp2:
      return vector_exp(b, x, true);
    case OpCode::Log:
      return vector_log(b, x, false);
    case OpCode::Log2:
      return vector_log(b, x, true);
    default:
      break;
    }
  }
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
