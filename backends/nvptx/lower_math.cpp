// Where the GPU departs from backends/llvm's element ops, for speed on
// hardware that has the instruction, with the precision stated:
//
// - f32 exp and exp2: the argument is split as n + f (exp: x = n ln2 + r,
//   r reduced in two fma steps with ln2 split in a high and a low part, so
//   r is nearly exact), 2^f (|f| <= 1/2) comes from ex2.approx.f32, and
//   2^n is applied as two exact power-of-two scalings, so results that are
//   subnormal or overflow come out as the CPU backend's do. ex2.approx is
//   within 2 ulp on that range (PTX ISA), the reduction adds under half an
//   ulp: within 3 ulp of the correctly rounded result, against 1 ulp for
//   the CPU backend's polynomial (so the two may differ in the last two
//   bits). About 12 instructions instead of 30: softmax is bound by its
//   arithmetic otherwise. NaN gives NaN; exp(-inf) = 0, exp(+inf) = +inf.
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
#include "backends/nvptx/gpu_math.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

namespace blocc::nvptx {

using ir::OpCode;
using ir::Scalar;

namespace {

/// 2^k for integer-valued float k in [-126, 127], built from its bits.
llvm::Value *power_of_two(llvm::IRBuilderBase &b, llvm::Value *k) {
  llvm::Value *bits = b.CreateShl(
      b.CreateAdd(b.CreateFPToSI(k, b.getInt32Ty()), b.getInt32(127)), 23);
  return b.CreateBitCast(bits, b.getFloatTy());
}

/// 2^n * p for integer-valued float n in [-151, 129] and p in [0.7, 1.42],
/// through two exact scalings so that subnormal results round once.
llvm::Value *scale(llvm::IRBuilderBase &b, llvm::Value *p, llvm::Value *n) {
  llvm::Value *half = b.CreateUnaryIntrinsic(
      llvm::Intrinsic::trunc,
      b.CreateFMul(n, llvm::ConstantFP::get(b.getFloatTy(), 0.5)));
  llvm::Value *rest = b.CreateFSub(n, half);
  return b.CreateFMul(b.CreateFMul(p, power_of_two(b, half)),
                      power_of_two(b, rest));
}

llvm::Value *f32(llvm::IRBuilderBase &b, double v) {
  return llvm::ConstantFP::get(b.getFloatTy(), v);
}

llvm::Value *approx_exp2(llvm::IRBuilderBase &b, llvm::Value *f) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {f});
}

/// f32 exp2 or exp as described above.
llvm::Value *fast_exp(llvm::IRBuilderBase &b, OpCode code, llvm::Value *x) {
  // Beyond these bounds the result is 0 or +inf either way.
  llvm::Value *clamped = b.CreateMinNum(
      b.CreateMaxNum(x, f32(b, code == OpCode::Exp ? -105.0 : -152.0)),
      f32(b, code == OpCode::Exp ? 90.0 : 130.0));
  llvm::Value *result;
  if (code == OpCode::Exp2) {
    llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, clamped);
    result = scale(b, approx_exp2(b, b.CreateFSub(clamped, n)), n);
  } else {
    // ln 2 = kHigh + kLow, kHigh with 12 significant bits: n * kHigh is
    // exact for |n| < 2^12.
    const double kLog2e = 1.4426950408889634;
    const float kHigh = 0.693145751953125f;
    const float kLow = 1.428606765330187e-06f;
    llvm::Value *n = b.CreateUnaryIntrinsic(
        llvm::Intrinsic::rint, b.CreateFMul(clamped, f32(b, kLog2e)));
    llvm::Value *r =
        b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()},
                          {b.CreateFNeg(n), f32(b, kHigh), clamped});
    r = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()},
                          {b.CreateFNeg(n), f32(b, kLow), r});
    result = scale(b, approx_exp2(b, b.CreateFMul(r, f32(b, kLog2e))), n);
  }
  // NaN in, NaN out (the clamp would have turned it into a number).
  return b.CreateSelect(b.CreateFCmpUNO(x, x), b.CreateFAdd(x, x), result);
}

llvm::Value *narrow(llvm::IRBuilderBase &b, llvm::Value *x, Scalar to) {
  llvm::Type *type = to == Scalar::F16 ? b.getHalfTy() : b.getBFloatTy();
  llvm::Value *bits = b.CreateBitCast(b.CreateFPTrunc(x, type), b.getInt16Ty());
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
      return fast_exp(builder, op.code(), x[0]);
    return nullptr;
  case OpCode::Sin:
  case OpCode::Cos:
    if (ir::is_fp8(operand))
      return nullptr; // backends/llvm names the error
    return llvm_backend::from_compute(
        builder, operand,
        emit_sin_cos(builder, llvm_backend::to_compute(builder, operand, x[0]),
                     op.code() == OpCode::Cos, kGlobalAddressSpace));
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
      return narrow(builder, x[0], result);
    if (result == Scalar::F32 &&
        (operand == Scalar::F16 || operand == Scalar::BF16))
      return widen(builder, x[0], operand,
                   !widens_without_nan_fixup_.count(op.result()));
    return nullptr;
  default:
    return nullptr;
  }
}

} // namespace blocc::nvptx
