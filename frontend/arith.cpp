// Elementwise arithmetic, comparisons, conversions and selection.
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

ir::Builder &builder_at(const Operand &x) {
  return detail::TraceContext::current(x.loc()).at(x.loc());
}

bool is_pointer(const Operand &x) {
  return x.is_value() && x.value()->type().is_pointer();
}

/// ptr + int, int + ptr, ptr - int: a block of pointers.
Tensor pointer_arith(OpCode code, const Operand &a, const Operand &b) {
  const Operand &ptr = is_pointer(a) ? a : b;
  const Operand &offset = is_pointer(a) ? b : a;
  if (is_pointer(offset))
    user_error(a.loc(), "cannot combine two pointers with '" +
                            std::string(code == OpCode::Add ? "+" : "-") +
                            "'; subtract their bl::cast(..., bl::int64) "
                            "values instead");
  if (code == OpCode::Sub && !is_pointer(a))
    user_error(a.loc(), "cannot subtract a pointer from an integer");
  if (code != OpCode::Add && code != OpCode::Sub)
    user_error(a.loc(), "pointers only support + and - with an integer "
                        "offset, not '" +
                            std::string(ir::opcode_name(code)) + "'");
  Scalar off = detail::natural_dtype(offset);
  if (!ir::is_integer(off) || off == Scalar::I1)
    user_error(a.loc(), "pointer arithmetic needs an integer offset, got " +
                            offset.describe() +
                            "; convert it with bl::cast(x, bl::int32)");
  auto v = detail::unify({&ptr, &offset}, {Scalar::Ptr, off}, "pointer offset");
  ir::Value *offset_value = v[1];
  auto &builder = builder_at(a);
  if (code == OpCode::Sub)
    offset_value = builder.unary(OpCode::Neg, offset_value);
  return Tensor(
      builder.create_value(OpCode::AddPtr, {v[0], offset_value}, v[0]->type()));
}

enum class Allowed { Any, IntegerOrBool, Integer, Float };

// fp8 values only travel between memory and casts: no arithmetic or
// comparison is defined on them (as in Triton).
void reject_fp8(Scalar dtype, const std::string &what, const Operand &at) {
  if (ir::is_fp8(dtype))
    user_error(at.loc(), what + ": fp8 is a storage type; convert to float16 "
                                "or float32 with bl::cast before arithmetic "
                                "or comparisons");
}

Tensor arith(OpCode code, const Operand &a, const Operand &b,
             const char *symbol, Allowed allowed) {
  if (is_pointer(a) || is_pointer(b))
    return pointer_arith(code, a, b);
  Scalar dtype = detail::computation_dtype(a, b);
  std::string what = std::string("operator") + symbol;
  bool ok = allowed == Allowed::Any ||
            (allowed == Allowed::IntegerOrBool && ir::is_integer(dtype)) ||
            (allowed == Allowed::Integer && ir::is_integer(dtype) &&
             dtype != Scalar::I1) ||
            (allowed == Allowed::Float && ir::is_float(dtype));
  if (!ok)
    user_error(a.loc(), what + " is not defined for " + a.describe() + " and " +
                            b.describe() +
                            (allowed == Allowed::Float
                                 ? "; it needs floating-point operands"
                                 : "; it needs integer operands (convert "
                                   "with bl::cast)"));
  reject_fp8(dtype, what, a);
  auto v = detail::unify({&a, &b}, {dtype, dtype}, what);
  return Tensor(builder_at(a).binary(code, v[0], v[1]));
}

Tensor compare(const char *predicate, const Operand &a, const Operand &b,
               const char *symbol) {
  std::string what = std::string("operator") + symbol;
  std::vector<ir::Value *> v;
  if (is_pointer(a) || is_pointer(b)) {
    if (!is_pointer(a) || !is_pointer(b))
      user_error(a.loc(), what + ": cannot compare a pointer with " +
                              (is_pointer(a) ? b : a).describe());
    v = detail::unify({&a, &b}, {Scalar::Ptr, Scalar::Ptr}, what);
  } else {
    Scalar dtype = detail::computation_dtype(a, b);
    reject_fp8(dtype, what, a);
    v = detail::unify({&a, &b}, {dtype, dtype}, what);
  }
  return Tensor(builder_at(a).cmp(predicate, v[0], v[1]));
}

Tensor unary(OpCode code, const Operand &x, Allowed allowed, const char *name,
             ir::Attributes attributes = {}) {
  Scalar dtype = detail::natural_dtype(x);
  if (x.is_value() && x.value()->type().is_pointer())
    user_error(x.loc(), std::string(name) + " is not defined for pointers");
  if (allowed == Allowed::Float && !ir::is_float(dtype))
    user_error(x.loc(),
               std::string(name) + " needs a floating-point operand, got " +
                   x.describe() + "; convert it with bl::cast(x, bl::float32)");
  if ((allowed == Allowed::Integer || allowed == Allowed::IntegerOrBool) &&
      !ir::is_integer(dtype))
    user_error(x.loc(), std::string(name) + " needs an integer operand, got " +
                            x.describe());
  reject_fp8(dtype, name, x);
  ir::Value *v = detail::as_dtype(x, dtype);
  return Tensor(
      builder_at(x).create_value(code, {v}, v->type(), std::move(attributes)));
}

} // namespace

Tensor operator+(Operand a, Operand b) {
  return arith(OpCode::Add, a, b, "+", Allowed::Any);
}
Tensor operator-(Operand a, Operand b) {
  return arith(OpCode::Sub, a, b, "-", Allowed::Any);
}
Tensor operator*(Operand a, Operand b) {
  return arith(OpCode::Mul, a, b, "*", Allowed::Any);
}
Tensor operator/(Operand a, Operand b) {
  return arith(OpCode::Div, a, b, "/", Allowed::Any);
}
Tensor operator%(Operand a, Operand b) {
  return arith(OpCode::Rem, a, b, "%", Allowed::Any);
}
Tensor operator&(Operand a, Operand b) {
  return arith(OpCode::And, a, b, "&", Allowed::IntegerOrBool);
}
Tensor operator|(Operand a, Operand b) {
  return arith(OpCode::Or, a, b, "|", Allowed::IntegerOrBool);
}
Tensor operator^(Operand a, Operand b) {
  return arith(OpCode::Xor, a, b, "^", Allowed::IntegerOrBool);
}
Tensor operator<<(Operand a, Operand b) {
  return arith(OpCode::Shl, a, b, "<<", Allowed::Integer);
}
Tensor operator>>(Operand a, Operand b) {
  return arith(OpCode::Shr, a, b, ">>", Allowed::Integer);
}
Tensor operator<(Operand a, Operand b) { return compare("lt", a, b, "<"); }
Tensor operator<=(Operand a, Operand b) { return compare("le", a, b, "<="); }
Tensor operator>(Operand a, Operand b) { return compare("gt", a, b, ">"); }
Tensor operator>=(Operand a, Operand b) { return compare("ge", a, b, ">="); }
Tensor operator==(Operand a, Operand b) { return compare("eq", a, b, "=="); }
Tensor operator!=(Operand a, Operand b) { return compare("ne", a, b, "!="); }

Tensor operator&&(Operand a, Operand b) {
  return (cast(a, int1) & cast(b, int1));
}
Tensor operator||(Operand a, Operand b) {
  return (cast(a, int1) | cast(b, int1));
}

Tensor operator-(Operand a) {
  return unary(OpCode::Neg, a, Allowed::Any, "unary -");
}
Tensor operator~(Operand a) {
  return unary(OpCode::Not, a, Allowed::IntegerOrBool, "operator~");
}
Tensor operator!(Operand a) {
  if (detail::natural_dtype(a) == Scalar::I1)
    return unary(OpCode::Not, a, Allowed::IntegerOrBool, "operator!");
  return a == Operand(0, a.loc());
}

Tensor fdiv(Operand a, Operand b) {
  Scalar dtype = detail::computation_dtype(a, b);
  if (!ir::is_float(dtype))
    dtype = Scalar::F32;
  auto v = detail::unify({&a, &b}, {dtype, dtype}, "bl::fdiv");
  return Tensor(builder_at(a).binary(OpCode::Div, v[0], v[1]));
}

Tensor cdiv(Operand a, Operand b) {
  Scalar dtype = detail::computation_dtype(a, b);
  if (!ir::is_integer(dtype))
    user_error(a.loc(), "bl::cdiv needs integer operands, got " + a.describe() +
                            " and " + b.describe());
  return (a + b - Operand(1, a.loc())) / b;
}

Tensor minimum(Operand a, Operand b) {
  return arith(OpCode::Minimum, a, b, " bl::minimum", Allowed::Any);
}
Tensor maximum(Operand a, Operand b) {
  return arith(OpCode::Maximum, a, b, " bl::maximum", Allowed::Any);
}

Tensor clamp(Operand x, Operand lo, Operand hi) {
  return minimum(maximum(x, lo), hi);
}

Tensor umulhi(Operand a, Operand b) {
  return arith(OpCode::Umulhi, a, b, " bl::umulhi", Allowed::Integer);
}

Tensor where(Operand condition, Operand a, Operand b) {
  if (detail::natural_dtype(condition) != Scalar::I1)
    user_error(condition.loc(),
               "bl::where needs a boolean (i1) condition, got " +
                   condition.describe() + "; compare it, e.g. x != 0");
  Scalar dtype;
  if (is_pointer(a) || is_pointer(b)) {
    if (!is_pointer(a) || !is_pointer(b) ||
        a.value()->type().element_type() != b.value()->type().element_type())
      user_error(condition.loc(),
                 "bl::where: both branches must be pointers of one type, got " +
                     a.describe() + " and " + b.describe());
    dtype = Scalar::Ptr;
  } else {
    dtype = detail::computation_dtype(a, b);
  }
  auto v = detail::unify({&condition, &a, &b}, {Scalar::I1, dtype, dtype},
                         "bl::where");
  return Tensor(builder_at(condition).create_value(
      OpCode::Select, {v[0], v[1], v[2]}, v[1]->type()));
}

Tensor fma(Operand a, Operand b, Operand c) {
  Scalar dtype = detail::promote(detail::computation_dtype(a, b),
                                 detail::natural_dtype(c));
  if (!ir::is_float(dtype))
    user_error(a.loc(), "bl::fma needs floating-point operands");
  auto v = detail::unify({&a, &b, &c}, {dtype, dtype, dtype}, "bl::fma");
  return Tensor(builder_at(a).create_value(OpCode::Fma, v, v[0]->type()));
}

Tensor cast(Operand x, DType dtype) {
  if (x.is_value() && x.value()->type().is_pointer()) {
    // A pointer converts to its byte address, as in Triton; only 64-bit
    // integers hold every address.
    if (dtype != Scalar::I64)
      user_error(x.loc(), "bl::cast: a pointer (" + x.describe() +
                              ") converts only to bl::int64 (its address in "
                              "bytes), not to " +
                              detail::dtype_name(dtype));
    Type t = x.value()->type();
    return Tensor(builder_at(x).create_value(
        OpCode::PtrToInt, {x.value()}, t.with_element(Type::scalar(dtype))));
  }
  return Tensor(detail::as_dtype(x, dtype));
}

Tensor bitcast(Operand x, DType dtype) {
  if (!x.is_value())
    user_error(x.loc(), "bl::bitcast needs a tensor, got " + x.describe());
  Type t = x.value()->type();
  if (t.is_pointer() || ir::scalar_bits(t.element()) != ir::scalar_bits(dtype))
    user_error(x.loc(), "bl::bitcast: " + t.str() + " and " +
                            detail::dtype_name(dtype) +
                            " differ in width; bitcast keeps every bit, so "
                            "both must have the same number of bits");
  if (t.element() == dtype)
    return Tensor(x.value());
  return Tensor(builder_at(x).create_value(
      OpCode::Bitcast, {x.value()}, t.with_element(Type::scalar(dtype))));
}

Tensor abs(Operand x) { return unary(OpCode::Abs, x, Allowed::Any, "bl::abs"); }
Tensor exp(Operand x) {
  return unary(OpCode::Exp, x, Allowed::Float, "bl::exp");
}
Tensor exp2(Operand x, Subnormals results) {
  ir::Attributes attributes;
  if (results == Subnormals::Flush) {
    // Operands that are no computable float at all get unary's message.
    Scalar dtype = detail::natural_dtype(x);
    if (ir::is_float(dtype) && !ir::is_fp8(dtype) && dtype != Scalar::F32)
      user_error(x.loc(),
                 "bl::exp2 with bl::Subnormals::Flush needs f32, got " +
                     x.describe() +
                     "; convert it with bl::cast(x, bl::float32)");
    attributes[ir::kSubnormalsAttr] = std::string("flush");
  }
  return unary(OpCode::Exp2, x, Allowed::Float, "bl::exp2",
               std::move(attributes));
}
Tensor log(Operand x) {
  return unary(OpCode::Log, x, Allowed::Float, "bl::log");
}
Tensor log2(Operand x) {
  return unary(OpCode::Log2, x, Allowed::Float, "bl::log2");
}
Tensor sqrt(Operand x) {
  return unary(OpCode::Sqrt, x, Allowed::Float, "bl::sqrt");
}
Tensor rsqrt(Operand x) {
  return unary(OpCode::Rsqrt, x, Allowed::Float, "bl::rsqrt");
}
Tensor sin(Operand x) {
  return unary(OpCode::Sin, x, Allowed::Float, "bl::sin");
}
Tensor cos(Operand x) {
  return unary(OpCode::Cos, x, Allowed::Float, "bl::cos");
}
Tensor tanh(Operand x) {
  return unary(OpCode::Tanh, x, Allowed::Float, "bl::tanh");
}
Tensor erf(Operand x) {
  return unary(OpCode::Erf, x, Allowed::Float, "bl::erf");
}
Tensor floor(Operand x) {
  return unary(OpCode::Floor, x, Allowed::Float, "bl::floor");
}
Tensor ceil(Operand x) {
  return unary(OpCode::Ceil, x, Allowed::Float, "bl::ceil");
}

Tensor sigmoid(Operand x) {
  const SourceLoc &loc = x.loc();
  // With e = exp(-|x|), which never overflows: 1 / (1 + e) for x >= 0 and
  // e / (1 + e) for x < 0, which keeps the tiny results that 1 / (1 +
  // exp(-x)) would flush to 0 once exp(-x) overflows (x below about -88.7
  // in f32, -709.8 in f64).
  Tensor e = exp(-Operand(abs(x), loc));
  Tensor denominator = Operand(1.0, loc) + Operand(e, loc);
  Tensor numerator = where(Operand(x < Operand(0.0, loc), loc), Operand(e, loc),
                           Operand(1.0, loc));
  return fdiv(Operand(numerator, loc), Operand(denominator, loc));
}

} // namespace blocc
