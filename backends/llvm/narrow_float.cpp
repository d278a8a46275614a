#include "backends/llvm/narrow_float.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>

namespace blocc::llvm_backend {

using ir::Scalar;

namespace {

/// `scalar_type` with the lane count of `like` (scalar when `like` is).
llvm::Type *like_shape(llvm::Type *scalar_type, llvm::Value *like) {
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(like->getType()))
    return llvm::VectorType::get(scalar_type, v->getElementCount());
  return scalar_type;
}

llvm::Value *int_constant(llvm::IRBuilderBase &b, llvm::Type *type,
                          uint64_t v) {
  return llvm::ConstantInt::get(type, v);
}

/// The sign bit of f32 `value` moved to bit 15 of an i16.
llvm::Value *sign_as_i16(llvm::IRBuilderBase &b, llvm::Value *value) {
  llvm::Type *i32 = like_shape(b.getInt32Ty(), value);
  llvm::Type *i16 = like_shape(b.getInt16Ty(), value);
  llvm::Value *bits = b.CreateBitCast(value, i32);
  llvm::Value *sign = b.CreateLShr(bits, int_constant(b, i32, 16));
  return b.CreateAnd(b.CreateTrunc(sign, i16), int_constant(b, i16, 0x8000));
}

} // namespace

llvm::Value *widen_narrow_float(llvm::IRBuilderBase &b, llvm::Value *bits,
                                Scalar s) {
  llvm::Type *f32 = like_shape(b.getFloatTy(), bits);
  if (s == Scalar::F16)
    return b.CreateFPExt(b.CreateBitCast(bits, like_shape(b.getHalfTy(), bits)),
                         f32);
  // bf16 is the top half of an f32.
  llvm::Type *i32 = like_shape(b.getInt32Ty(), bits);
  llvm::Value *wide = b.CreateShl(b.CreateZExt(bits, i32), 16);
  return b.CreateBitCast(wide, f32);
}

llvm::Value *narrow_from_f32(llvm::IRBuilderBase &b, llvm::Value *value,
                             Scalar s) {
  llvm::Type *i16 = like_shape(b.getInt16Ty(), value);
  llvm::Value *is_nan = b.CreateFCmpUNO(value, value);
  llvm::Value *rounded;
  uint64_t quiet_nan;
  if (s == Scalar::F16) {
    // F16C's conversion rounds to nearest even, subnormals included.
    rounded = b.CreateBitCast(
        b.CreateFPTrunc(value, like_shape(b.getHalfTy(), value)), i16);
    quiet_nan = 0x7e00;
  } else {
    // Round to nearest even on the bits: add 0x7fff plus the last kept
    // bit, then drop the low half. Exact for subnormals and overflow alike
    // (the carry runs into the exponent); NaN is handled below.
    llvm::Type *i32 = like_shape(b.getInt32Ty(), value);
    llvm::Value *bits = b.CreateBitCast(value, i32);
    llvm::Value *last_kept =
        b.CreateAnd(b.CreateLShr(bits, 16), int_constant(b, i32, 1));
    llvm::Value *biased =
        b.CreateAdd(bits, b.CreateAdd(last_kept, int_constant(b, i32, 0x7fff)));
    rounded = b.CreateTrunc(b.CreateLShr(biased, 16), i16);
    quiet_nan = 0x7fc0;
  }
  llvm::Value *nan_bits =
      b.CreateOr(sign_as_i16(b, value), int_constant(b, i16, quiet_nan));
  return b.CreateSelect(is_nan, nan_bits, rounded);
}

llvm::Value *f64_to_f32_round_to_odd(llvm::IRBuilderBase &b,
                                     llvm::Value *value) {
  llvm::Type *f32 = like_shape(b.getFloatTy(), value);
  llvm::Type *i32 = like_shape(b.getInt32Ty(), value);
  llvm::Value *nearest = b.CreateFPTrunc(value, f32);
  llvm::Value *back = b.CreateFPExt(nearest, value->getType());
  // Ordered compare: NaN is never "inexact" (its payload does not matter,
  // narrowing canonicalizes it).
  llvm::Value *inexact = b.CreateFCmpONE(back, value);
  llvm::Value *away =
      b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                      b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
  llvm::Value *bits = b.CreateBitCast(nearest, i32);
  // Rounded away from zero: step back to the neighbour toward zero (the
  // truncation), then set the last bit when anything was dropped.
  llvm::Value *step_back = b.CreateZExt(b.CreateAnd(inexact, away), i32);
  bits = b.CreateSub(bits, step_back);
  bits = b.CreateOr(bits, b.CreateZExt(inexact, i32));
  return b.CreateBitCast(bits, f32);
}

llvm::Value *narrow_from_f64(llvm::IRBuilderBase &b, llvm::Value *value,
                             Scalar s) {
  if (s == Scalar::F32)
    return b.CreateFPTrunc(value, like_shape(b.getFloatTy(), value));
  llvm::Value *odd = f64_to_f32_round_to_odd(b, value);
  if (ir::is_fp8(s))
    return fp8_from_f32(b, odd, s);
  return narrow_from_f32(b, odd, s);
}

namespace {

/// The parameters of an fp8 format (as the interpreter's FloatFormat).
struct Fp8Format {
  int exponent_bits, mantissa_bits, bias;
  bool has_infinity;
  uint32_t max_finite; // encoding without sign
  uint32_t quiet_nan;  // encoding without sign
};

Fp8Format fp8_format(Scalar s) {
  if (s == Scalar::F8E4M3) // OCP E4M3 ("FN"): no infinities, max 448
    return {4, 3, 7, false, 0x7e, 0x7f};
  return {5, 2, 15, true, 0x7b, 0x7e}; // OCP E5M2: max 57344
}

/// 2^e as f32 (e within the normal range), for every lane of `like`.
llvm::Value *power_of_two(llvm::IRBuilderBase &b, llvm::Value *e,
                          llvm::Value *like) {
  llvm::Type *i32 = like_shape(b.getInt32Ty(), like);
  llvm::Value *bits =
      b.CreateShl(b.CreateAdd(e, llvm::ConstantInt::get(i32, 127)), 23);
  return b.CreateBitCast(bits, like_shape(b.getFloatTy(), like));
}

} // namespace

llvm::Value *fp8_to_f32(llvm::IRBuilderBase &b, llvm::Value *bits, Scalar s) {
  Fp8Format f = fp8_format(s);
  llvm::Type *i32 = like_shape(b.getInt32Ty(), bits);
  llvm::Type *f32 = like_shape(b.getFloatTy(), bits);
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value *wide = b.CreateZExt(bits, i32);
  llvm::Value *magnitude = b.CreateAnd(wide, c(0x7f));
  llvm::Value *negative = b.CreateICmpNE(b.CreateAnd(wide, c(0x80)), c(0));
  llvm::Value *exponent = b.CreateLShr(magnitude, f.mantissa_bits);
  llvm::Value *mantissa = b.CreateAnd(magnitude, c((1 << f.mantissa_bits) - 1));
  // value = significand * 2^(exponent - bias - mantissa_bits), with the
  // implicit leading one for normal numbers and exponent 1 for subnormals.
  llvm::Value *subnormal = b.CreateICmpEQ(exponent, c(0));
  llvm::Value *significand = b.CreateSelect(
      subnormal, mantissa, b.CreateOr(mantissa, c(1 << f.mantissa_bits)));
  llvm::Value *scale_exponent = b.CreateSub(
      b.CreateSelect(subnormal, c(1), exponent), c(f.bias + f.mantissa_bits));
  llvm::Value *value = b.CreateFMul(b.CreateUIToFP(significand, f32),
                                    power_of_two(b, scale_exponent, bits));
  llvm::Value *nan = llvm::ConstantFP::getNaN(f32);
  if (f.has_infinity) {
    llvm::Value *top = b.CreateICmpEQ(exponent, c((1 << f.exponent_bits) - 1));
    llvm::Value *special =
        b.CreateSelect(b.CreateICmpEQ(mantissa, c(0)),
                       llvm::ConstantFP::getInfinity(f32), nan);
    value = b.CreateSelect(top, special, value);
  } else {
    value =
        b.CreateSelect(b.CreateICmpEQ(magnitude, c(f.quiet_nan)), nan, value);
  }
  return b.CreateSelect(negative, b.CreateFNeg(value), value);
}

llvm::Value *fp8_from_f32(llvm::IRBuilderBase &b, llvm::Value *value,
                          Scalar s) {
  Fp8Format f = fp8_format(s);
  llvm::Type *i32 = like_shape(b.getInt32Ty(), value);
  llvm::Type *i8 = like_shape(b.getInt8Ty(), value);
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  int min_exponent = 1 - f.bias;
  llvm::Value *bits = b.CreateBitCast(value, i32);
  llvm::Value *sign = b.CreateAnd(b.CreateLShr(bits, 24), c(0x80));
  llvm::Value *magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  // The weight of the result's last mantissa bit: that of the value's
  // binade, or of the subnormal range below the smallest normal.
  llvm::Value *exponent =
      b.CreateSub(b.CreateLShr(b.CreateBitCast(magnitude, i32), 23), c(127));
  exponent =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, exponent, c(min_exponent));
  llvm::Value *lsb =
      power_of_two(b, b.CreateSub(exponent, c(f.mantissa_bits)), value);
  // Scaling by powers of two is exact here, so the one rounding is the
  // roundeven; the result may carry into the next binade, which is fine.
  llvm::Value *rounded =
      b.CreateFMul(b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                          b.CreateFDiv(magnitude, lsb)),
                   lsb);
  // Saturation: overflow and infinity become the largest finite value.
  llvm::Value *max_finite =
      fp8_to_f32(b, llvm::ConstantInt::get(i8, f.max_finite), s);
  rounded =
      b.CreateSelect(b.CreateFCmpOGT(rounded, max_finite), max_finite, rounded);
  // Encode the now representable value.
  llvm::Value *rounded_bits = b.CreateBitCast(rounded, i32);
  llvm::Value *rounded_exponent =
      b.CreateSub(b.CreateLShr(rounded_bits, 23), c(127));
  llvm::Value *is_subnormal =
      b.CreateFCmpOLT(rounded, power_of_two(b, c(min_exponent), value));
  llvm::Value *subnormal_bits = b.CreateFPToUI(
      b.CreateFDiv(rounded,
                   power_of_two(b, c(min_exponent - f.mantissa_bits), value)),
      i32);
  llvm::Value *normal_bits = b.CreateOr(
      b.CreateShl(b.CreateAdd(rounded_exponent, c(f.bias)), f.mantissa_bits),
      b.CreateAnd(b.CreateLShr(rounded_bits, 23 - f.mantissa_bits),
                  c((1 << f.mantissa_bits) - 1)));
  llvm::Value *encoded =
      b.CreateSelect(is_subnormal, subnormal_bits, normal_bits);
  encoded =
      b.CreateSelect(b.CreateFCmpUNO(value, value), c(f.quiet_nan), encoded);
  return b.CreateTrunc(b.CreateOr(encoded, sign), i8);
}

llvm::Value *integer_to_float(llvm::IRBuilderBase &b, llvm::Value *value,
                              Scalar from, Scalar to) {
  bool is_signed = ir::is_signed(from);
  if (to == Scalar::F32 || to == Scalar::F64) {
    // LLVM's conversions round once to nearest even.
    llvm::Type *t =
        like_shape(to == Scalar::F64 ? b.getDoubleTy() : b.getFloatTy(), value);
    return is_signed ? b.CreateSIToFP(value, t) : b.CreateUIToFP(value, t);
  }
  llvm::Type *f64 = like_shape(b.getDoubleTy(), value);
  int bits = value->getType()->getScalarSizeInBits();
  llvm::Value *as_double;
  if (bits <= 32) {
    // Exact in f64.
    as_double =
        is_signed ? b.CreateSIToFP(value, f64) : b.CreateUIToFP(value, f64);
  } else {
    // Magnitude as u64 (two's complement negation also for INT64_MIN);
    // above 2^53 keep the top bits and jam the dropped ones into the last
    // bit (rounding to odd), which any rounding to <= 51 bits sees as the
    // exact value.
    llvm::Type *i64 = value->getType();
    llvm::Value *negative =
        is_signed ? b.CreateICmpSLT(value, llvm::Constant::getNullValue(i64))
                  : nullptr;
    llvm::Value *magnitude =
        is_signed ? b.CreateSelect(negative, b.CreateNeg(value), value) : value;
    llvm::Value *big =
        b.CreateICmpUGE(magnitude, int_constant(b, i64, uint64_t{1} << 53));
    llvm::Value *dropped =
        b.CreateICmpNE(b.CreateAnd(magnitude, int_constant(b, i64, 0x7ff)),
                       llvm::Constant::getNullValue(i64));
    llvm::Value *jammed =
        b.CreateOr(b.CreateLShr(magnitude, 11), b.CreateZExt(dropped, i64));
    llvm::Value *mantissa = b.CreateSelect(big, jammed, magnitude);
    llvm::Value *scale = b.CreateSelect(big, llvm::ConstantFP::get(f64, 2048.0),
                                        llvm::ConstantFP::get(f64, 1.0));
    as_double = b.CreateFMul(b.CreateUIToFP(mantissa, f64), scale);
    if (negative)
      as_double = b.CreateSelect(negative, b.CreateFNeg(as_double), as_double);
  }
  return narrow_from_f64(b, as_double, to);
}

llvm::Value *canonicalize_nan(llvm::IRBuilderBase &b, llvm::Value *value) {
  llvm::Type *type = value->getType();
  bool is_double = type->getScalarType()->isDoubleTy();
  llvm::Type *int_type =
      like_shape(is_double ? b.getInt64Ty() : b.getInt32Ty(), value);
  uint64_t sign = is_double ? uint64_t{1} << 63 : uint64_t{1} << 31;
  uint64_t quiet = is_double ? uint64_t{0x7ff8} << 48 : 0x7fc00000;
  uint64_t infinity = is_double ? uint64_t{0x7ff} << 52 : 0x7f800000;
  llvm::Value *bits = b.CreateBitCast(value, int_type);
  llvm::Value *nan_bits =
      b.CreateOr(b.CreateAnd(bits, int_constant(b, int_type, sign)),
                 int_constant(b, int_type, quiet));
  // NaN: a magnitude above infinity's, tested on the integer bits. An
  // `fcmp uno` of a widened f16 is narrowed by InstCombine to an f16
  // compare, which x86 without AVX512-FP16 does one element at a time (170
  // instructions per 16 lanes instead of 6: f16 GeLU ran at a fifth of
  // f32's bandwidth).
  llvm::Value *magnitude = b.CreateAnd(bits, int_constant(b, int_type, ~sign));
  llvm::Value *is_nan =
      b.CreateICmpUGT(magnitude, int_constant(b, int_type, infinity));
  return b.CreateSelect(is_nan, b.CreateBitCast(nan_bits, type), value);
}

} // namespace blocc::llvm_backend
