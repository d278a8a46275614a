#include "backends/llvm/constants.h"

#include "backends/llvm/llvm_types.h"
#include "ir/error.h"

#include <llvm/ADT/APFloat.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>

#include <bit>
#include <cmath>

namespace blocc::llvm_backend {

using ir::Scalar;

namespace {

const llvm::fltSemantics &narrow_semantics(Scalar s) {
  return s == Scalar::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
}

uint16_t narrow_nan(Scalar s, bool negative) {
  uint16_t quiet = s == Scalar::F16 ? 0x7e00 : 0x7fc0;
  return negative ? quiet | 0x8000 : quiet;
}

/// f16/bf16 bits of `v`, rounded once to nearest even.
uint16_t narrow_bits(double v, Scalar s) {
  if (std::isnan(v))
    return narrow_nan(s, std::signbit(v));
  llvm::APFloat f(v);
  bool loses_info = false;
  f.convert(narrow_semantics(s), llvm::APFloat::rmNearestTiesToEven,
            &loses_info);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

/// fp8 bits of `v`, rounded once to nearest even, saturating (OCP): finite
/// overflow and infinities give the largest finite value of the sign.
uint8_t fp8_bits(double v, Scalar s) {
  bool e4m3 = s == Scalar::F8E4M3;
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
  if (std::isnan(v))
    return sign | (e4m3 ? 0x7f : 0x7e);
  uint8_t max_finite = e4m3 ? 0x7e : 0x7b;
  if (std::isinf(v))
    return sign | max_finite;
  llvm::APFloat f(v);
  bool loses_info = false;
  llvm::APFloat::opStatus status = f.convert(
      e4m3 ? llvm::APFloat::Float8E4M3FN() : llvm::APFloat::Float8E5M2(),
      llvm::APFloat::rmNearestTiesToEven, &loses_info);
  if ((status & llvm::APFloat::opOverflow) || f.isInfinity() || f.isNaN())
    return sign | max_finite;
  return static_cast<uint8_t>(f.bitcastToAPInt().getZExtValue());
}

uint16_t narrow_bits_of_integer(int64_t v, bool is_signed, Scalar s) {
  llvm::APFloat f(narrow_semantics(s));
  f.convertFromAPInt(llvm::APInt(64, static_cast<uint64_t>(v), is_signed),
                     is_signed, llvm::APFloat::rmNearestTiesToEven);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

} // namespace

llvm::Constant *element_constant(llvm::LLVMContext &context, Scalar s,
                                 const ir::Attribute &value) {
  if (s == Scalar::Ptr)
    throw Error("the LLVM backends do not support pointer constants (build "
                "pointers with int_to_ptr)");
  llvm::Type *type = register_type(context, s);
  if (const auto *i = std::get_if<int64_t>(&value)) {
    // An integer attribute: the i64 value converted to the element type.
    if (ir::is_integer(s))
      return s == Scalar::I1
                 ? llvm::ConstantInt::get(type, *i != 0)
                 : llvm::ConstantInt::get(type, static_cast<uint64_t>(*i));
    if (s == Scalar::F32)
      return llvm::ConstantFP::get(type, static_cast<float>(*i));
    if (s == Scalar::F64)
      return llvm::ConstantFP::get(type, static_cast<double>(*i));
    if (ir::is_fp8(s)) // |i| beyond 2^53 saturates anyway
      return llvm::ConstantInt::get(type, fp8_bits(static_cast<double>(*i), s));
    return llvm::ConstantInt::get(type, narrow_bits_of_integer(*i, true, s));
  }
  const auto *d = std::get_if<double>(&value);
  if (!d)
    throw Error("internal: a constant's value is neither an integer nor a "
                "float");
  if (s == Scalar::F64)
    return llvm::ConstantFP::get(
        context, llvm::APFloat(llvm::APFloat::IEEEdouble(),
                               llvm::APInt(64, std::bit_cast<uint64_t>(*d))));
  if (s == Scalar::F32) {
    // The host's conversion, as the interpreter's (NaN payloads included).
    float f = static_cast<float>(*d);
    return llvm::ConstantFP::get(
        context, llvm::APFloat(llvm::APFloat::IEEEsingle(),
                               llvm::APInt(32, std::bit_cast<uint32_t>(f))));
  }
  if (is_narrow_float(s))
    return llvm::ConstantInt::get(type, narrow_bits(*d, s));
  if (ir::is_fp8(s))
    return llvm::ConstantInt::get(type, fp8_bits(*d, s));
  throw Error("internal: a float constant of integer type " +
              std::string(ir::scalar_name(s)));
}

} // namespace blocc::llvm_backend
