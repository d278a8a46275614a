// Where the GPU departs from backends/llvm's element ops, for speed on
// hardware that has the instruction, with the precision stated:
//
// - f32 exp: the argument is split as x = n ln2 + r (r reduced in two fma
//   steps with ln2 split in a high and a low part, so r is nearly exact),
//   2^f (f = r log2 e, |f| <= 1/2) comes from ex2.approx.f32, and 2^n is
//   applied as two exact power-of-two scalings, so results that are
//   subnormal or overflow come out as the CPU backend's do. ex2.approx is
//   within 2 ulp wherever its result is normal (CUDA's exp2f is that
//   instruction), the reduction adds under half an ulp: within 3 ulp of the
//   correctly rounded result, against 1 ulp for the CPU backend's
//   polynomial (so the two may differ in the last two bits). About 12
//   instructions instead of 30: softmax is bound by its arithmetic
//   otherwise. NaN gives NaN; exp(-inf) = 0, exp(+inf) = +inf.
// - f32 exp2 needs no reduction: ex2.approx.ftz.f32 of x itself, within 2
//   ulp where 2^x is normal; below (x < -126) the argument is raised by 24
//   and the result scaled back by 2^-24, one exact step then one rounding
//   to the subnormal. Six instructions: attention's loop takes an exp2 per
//   score, and the reduction's eight more were a third of its issue slots.
//   An exp2 that flushes subnormal results (bl::Subnormals::Flush) is the
//   instruction alone.
// - f32 tanh and erf (f16/bf16 computed in f32): backends/llvm's
//   polynomials below |x| = 1; above, tanh's 2 / (e^{2|x|} + 1) is
//   ex2.approx of 2|x| log2 e and rcp.approx of the sum, and erf's e^{-x^2}
//   ex2.approx of -x^2 log2 e, each relative error a few ulp. There the
//   complement is at most 0.31 (tanh) or 0.19 (erf) of the result, so
//   within 3 ulp of the correctly rounded result (the CPU backend: 1 ulp).
//   About 25 instructions instead of 60 with a correctly rounded division:
//   GeLU was bound by its arithmetic, not by memory.
// - f32 -> f16/bf16 casts: cvt.rn.f16.f32 / cvt.rn.bf16.f32, which round
//   to nearest even like the interpreter, with NaN mapped to the quiet NaN
//   the interpreter produces (0x7e00 / 0x7fc0 with the sign). f16/bf16 ->
//   f32: the exact cvt (bf16: a shift), NaN becoming the quiet NaN of its
//   sign. Bit for bit the same as backends/llvm's conversions. The NaN
//   fix-up of a widening is left out where only arithmetic that returns its
//   own NaN sees the result (nan_blind_uses.h): in f16 layer norm it made
//   ptxas spill.
#include "backends/nvptx/kernel_lowering.h"

#include "backends/llvm/element_ops.h"
#include "backends/llvm/math_implementations.h"
#include "backends/nvptx/gpu_math.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

const double kLog2e = 1.4426950408889634;

llvm::Value *f32(llvm::IRBuilderBase &b, double v) {
  return llvm::ConstantFP::get(b.getFloatTy(), v);
}

/// ex2.approx.ftz.f32 of y: within 2 ulp where 2^y is normal.
llvm::Value *ex2_approx(llvm::IRBuilderBase &b, llvm::Value *y) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {y});
}

/// 2^k for integer k (i32) in [-126, 127], built from its bits.
llvm::Value *power_of_two(llvm::IRBuilderBase &b, llvm::Value *k) {
  return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, b.getInt32(127)), 23),
                         b.getFloatTy());
}

/// 2^n * p for integer n (i32) in [-152, 130] and p in [0.7, 1.42], through
/// two exact scalings so that subnormal results round once.
llvm::Value *scale(llvm::IRBuilderBase &b, llvm::Value *p, llvm::Value *n) {
  llvm::Value *half = b.CreateAShr(n, 1);
  llvm::Value *rest = b.CreateSub(n, half);
  return b.CreateFMul(b.CreateFMul(p, power_of_two(b, half)),
                      power_of_two(b, rest));
}

llvm::Value *fma(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y,
                 llvm::Value *z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {x, y, z});
}

/// With `keep_nan` a NaN argument gives itself back quieted (backends/llvm's
/// bits); otherwise the hardware's NaN, for results whose NaN bits nothing
/// observes.
llvm::Value *keep_nan_of(llvm::IRBuilderBase &b, llvm::Value *x,
                         llvm::Value *result, bool keep_nan) {
  if (!keep_nan)
    return result;
  return b.CreateSelect(b.CreateFCmpUNO(x, x), b.CreateFAdd(x, x), result);
}

/// f32 exp2 as described above: ex2.approx.ftz flushes subnormal results,
/// so where they are kept (`flush` false) they are computed 2^24 times
/// larger and scaled back.
llvm::Value *fast_exp2(llvm::IRBuilderBase &b, llvm::Value *x, bool flush,
                       bool keep_nan) {
  if (flush)
    return keep_nan_of(b, x, ex2_approx(b, x), keep_nan);
  llvm::Value *subnormal = b.CreateFCmpOLT(x, f32(b, -126.0));
  llvm::Value *raised =
      b.CreateSelect(subnormal, b.CreateFAdd(x, f32(b, 24.0)), x);
  llvm::Value *power = ex2_approx(b, raised);
  llvm::Value *result =
      b.CreateSelect(subnormal, b.CreateFMul(power, f32(b, 0x1p-24)), power);
  return keep_nan_of(b, x, result, keep_nan);
}

/// f32 exp as described above. The integer n comes from the shifter 1.5 *
/// 2^23 (x + shifter rounds x to an integer in the low bits), so no
/// float-to-integer conversions: with two cvt.rni/cvt.rzi and two
/// cvt.rzi.s32 per element, softmax ran at a quarter of the issue rate on
/// the conversion unit. 2^f for |f| <= 0.52 never meets a subnormal, so the
/// .ftz form of ex2.approx (no range fix-up around it) is exact to use.
/// Without `keep_nan` the clamp propagates NaN (max.NaN).
llvm::Value *fast_exp(llvm::IRBuilderBase &b, llvm::Value *x, bool keep_nan) {
  // Beyond these bounds the result is 0 or +inf either way.
  llvm::Value *low = f32(b, -105.0);
  llvm::Value *clamped = b.CreateMinNum(
      keep_nan ? b.CreateMaxNum(x, low)
               : b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, low),
      f32(b, 90.0));
  const float kShifter = 12582912.0f; // 1.5 * 2^23
  // ln 2 = kHigh + kLow, kHigh with 12 significant bits: n * kHigh is
  // exact for |n| < 2^12.
  const float kHigh = 0.693145751953125f;
  const float kLow = 1.428606765330187e-06f;
  llvm::Value *shifted = fma(b, clamped, f32(b, kLog2e), f32(b, kShifter));
  llvm::Value *minus_n = b.CreateFSub(f32(b, kShifter), shifted);
  llvm::Value *r = fma(b, minus_n, f32(b, kHigh), clamped);
  r = fma(b, minus_n, f32(b, kLow), r);
  llvm::Value *f = b.CreateFMul(r, f32(b, kLog2e));
  llvm::Value *n = b.CreateSub(b.CreateBitCast(shifted, b.getInt32Ty()),
                               b.getInt32(0x4b400000));
  llvm::Value *result = scale(b, ex2_approx(b, f), n);
  // NaN in, NaN out (the clamp would have turned it into a number).
  return keep_nan_of(b, x, result, keep_nan);
}

/// tanh or erf of f32 x as described above.
llvm::Value *fast_tanh_or_erf(llvm::IRBuilderBase &b, OpCode code,
                              llvm::Value *x) {
  llvm_backend::math::FloatLanes f = llvm_backend::math::FloatLanes::of(b, x);
  if (code == OpCode::Tanh)
    return llvm_backend::math::tanh(
        f, x, [&](llvm_backend::math::FloatLanes &, llvm::Value *a) {
          // a <= 10: the sum stays below 2^29, a normal number.
          llvm::Value *e = ex2_approx(b, b.CreateFMul(a, f32(b, 2 * kLog2e)));
          llvm::Value *r =
              b.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_approx_ftz_f, {},
                                {b.CreateFAdd(e, f32(b, 1.0))});
          return b.CreateFMul(r, f32(b, 2.0));
        });
  return llvm_backend::math::erf(
      f, x, [&](llvm_backend::math::FloatLanes &, llvm::Value *t) {
        // t <= 16: e^{-t} >= 2^-23.1, a normal number.
        return ex2_approx(b, b.CreateFMul(t, f32(b, -kLog2e)));
      });
}

/// backends/llvm's f32 maximum (a NaN operand gives the other operand, x's
/// NaN gives y even when y is a NaN, -0 < +0) without predicates: max.f32
/// (the larger, the non-NaN operand of one NaN) plus a zero z that is +0
/// when an operand is +0 and -0 otherwise. m + z is m unless m is a zero,
/// and then it is +0 exactly when an operand was +0, whichever zero the
/// hardware picked. z comes from u = min(bits x, bits y), zero exactly when
/// an operand is +0: (u | -u) has its sign bit set exactly when u != 0.
/// The compare-and-select form took ten instructions and four predicates a
/// combine; softmax's row maximum ran out of predicate registers and ptxas
/// delayed the row's later loads behind the first ones' maxima.
llvm::Value *maximum_without_nan_bits(llvm::IRBuilderBase &b, llvm::Value *x,
                                      llvm::Value *y) {
  llvm::Value *larger = b.CreateMaxNum(x, y);
  llvm::Value *u = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                           b.CreateBitCast(x, b.getInt32Ty()),
                                           b.CreateBitCast(y, b.getInt32Ty()));
  llvm::Value *sign =
      b.CreateAnd(b.CreateOr(u, b.CreateNeg(u)), b.getInt32(0x80000000u));
  return b.CreateFAdd(larger, b.CreateBitCast(sign, b.getFloatTy()));
}

/// f32 maximum or minimum (min(x, y) = -max(-x, -y)); with `keep_nan`, x's
/// NaN gives y's own bits as backends/llvm does, else the hardware's NaN;
/// with `keep_zero_sign`, -0 < +0, else either zero for a +0/-0 pair
/// (unobserved_zero_signs.h): one max.f32 or min.f32.
llvm::Value *min_max(llvm::IRBuilderBase &b, bool is_max, llvm::Value *x,
                     llvm::Value *y, bool keep_nan, bool keep_zero_sign) {
  llvm::Value *result =
      !keep_zero_sign ? (is_max ? b.CreateMaxNum(x, y) : b.CreateMinNum(x, y))
      : is_max        ? maximum_without_nan_bits(b, x, y)
               : b.CreateFNeg(maximum_without_nan_bits(b, b.CreateFNeg(x),
                                                       b.CreateFNeg(y)));
  if (!keep_nan)
    return result;
  return b.CreateSelect(b.CreateFCmpUNO(x, x), y, result);
}

llvm::Value *narrow(llvm::IRBuilderBase &b, llvm::Value *x, Scalar to,
                    bool fix_nan) {
  llvm::Type *type = to == Scalar::F16 ? b.getHalfTy() : b.getBFloatTy();
  llvm::Value *bits = b.CreateBitCast(b.CreateFPTrunc(x, type), b.getInt16Ty());
  if (!fix_nan) // a NaN here is the hardware's (nan_blind_uses.h)
    return bits;
  llvm::Value *sign = b.CreateTrunc(
      b.CreateLShr(b.CreateBitCast(x, b.getInt32Ty()), 16), b.getInt16Ty());
  sign = b.CreateAnd(sign, b.getInt16(0x8000));
  llvm::Value *nan =
      b.CreateOr(sign, b.getInt16(to == Scalar::F16 ? 0x7e00 : 0x7fc0));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), nan, bits);
}

llvm::Value *widen(llvm::IRBuilderBase &b, llvm::Value *bits, Scalar from,
                   bool fix_nan) {
  llvm::Value *wide = b.CreateZExt(bits, b.getInt32Ty());
  llvm::Value *value =
      from == Scalar::BF16 // the high half of an f32, exactly
          ? b.CreateBitCast(b.CreateShl(wide, 16), b.getFloatTy())
          : b.CreateFPExt(b.CreateBitCast(bits, b.getHalfTy()), b.getFloatTy());
  if (!fix_nan) // nothing observes the NaN's bits (nan_blind_uses.h)
    return value;
  // A NaN becomes the quiet NaN of its sign, as backends/llvm widens it.
  llvm::Value *nan =
      b.CreateOr(b.CreateShl(b.CreateAnd(wide, b.getInt32(0x8000)), 16),
                 b.getInt32(0x7fc00000));
  return b.CreateSelect(b.CreateFCmpUNO(value, value),
                        b.CreateBitCast(nan, b.getFloatTy()), value);
}

} // namespace

llvm::Value *
KernelLowering::gpu_element_op(const ir::Operation &op,
                               const std::vector<llvm::Value *> &x) {
  Scalar operand = op.operand(0)->type().element();
  Scalar result = op.result()->type().element();
  switch (op.code()) {
  case OpCode::Exp:
  case OpCode::Exp2:
    if (operand == Scalar::F32)
      return op.code() == OpCode::Exp
                 ? fast_exp(builder, x[0],
                            !nan_bits_unobserved_.count(op.result()))
                 : fast_exp2(builder, x[0], ir::flushes_subnormals(op),
                             !nan_bits_unobserved_.count(op.result()));
    return nullptr;
  case OpCode::Maximum:
  case OpCode::Minimum:
    if (operand != Scalar::F32)
      return nullptr;
    return min_max(builder, op.code() == OpCode::Maximum, x[0], x[1],
                   !nan_bits_unobserved_.count(op.result()),
                   !zero_signs_unobserved_.count(op.result()));
  case OpCode::Sin:
  case OpCode::Cos:
    if (ir::is_fp8(operand))
      return nullptr; // backends/llvm names the error
    return llvm_backend::from_compute(
        builder, operand,
        emit_sin_cos(builder, llvm_backend::to_compute(builder, operand, x[0]),
                     op.code() == OpCode::Cos, kGlobalAddressSpace));
  case OpCode::Tanh:
  case OpCode::Erf:
    if (operand != Scalar::F32 && operand != Scalar::F16 &&
        operand != Scalar::BF16)
      return nullptr;
    return llvm_backend::from_compute(
        builder, operand,
        fast_tanh_or_erf(builder, op.code(),
                         llvm_backend::to_compute(builder, operand, x[0])));
  case OpCode::Rem:
    if (!ir::is_float(operand) || ir::is_fp8(operand))
      return nullptr;
    return llvm_backend::from_compute(
        builder, operand,
        emit_fmod(builder, llvm_backend::to_compute(builder, operand, x[0]),
                  llvm_backend::to_compute(builder, operand, x[1])));
  case OpCode::Cast:
    if (operand == Scalar::F32 &&
        (result == Scalar::F16 || result == Scalar::BF16))
      return narrow(builder, x[0], result,
                    !narrows_of_hardware_nans_.count(op.result()));
    if (result == Scalar::F32 &&
        (operand == Scalar::F16 || operand == Scalar::BF16))
      return widen(builder, x[0], operand,
                   !nan_bits_unobserved_.count(op.result()));
    return nullptr;
  default:
    return nullptr;
  }
}

} // namespace blocc::nvptx
