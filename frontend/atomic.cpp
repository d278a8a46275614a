// Atomic read-modify-write and compare-and-swap (tl.atomic_*), traced to
// AtomicRmw / AtomicCas ops. Each returns the values memory held before.
//
// Typing follows Triton's (semantic.py, atom_red_typechecking_impl and
// atomic_cas):
//  - The value (and cas's compare) is broadcast to the pointer block's shape
//    and converted to the pointee type, as a store converts; a value or mask
//    of a larger shape than the pointer is an error.
//  - Read-modify-write atomics work on 32- and 64-bit integers and floats;
//    float16 and bfloat16 only for atomic_add; 8- and 16-bit integers, bool
//    and fp8 not at all. and/or/xor need integers.
//  - atomic_cas works on 16-, 32- and 64-bit elements and compares bit
//    patterns (so -0.0 and +0.0 differ, and a NaN can match itself).
//  - sem defaults to acq_rel and scope to gpu; both are always recorded in
//    the IR so that a backend never guesses.
// Masked-off lanes touch no memory; what they return is unspecified in
// Triton (the reference interpreter returns 0).
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;
using ir::Type;

namespace {

const char *semantic_name(MemorySemantic s) {
  switch (s) {
  case MemorySemantic::AcqRel:
    return "acq_rel";
  case MemorySemantic::Acquire:
    return "acquire";
  case MemorySemantic::Release:
    return "release";
  case MemorySemantic::Relaxed:
    return "relaxed";
  }
  return "acq_rel";
}

const char *scope_name(MemoryScope s) {
  switch (s) {
  case MemoryScope::Gpu:
    return "gpu";
  case MemoryScope::Cta:
    return "cta";
  case MemoryScope::System:
    return "sys";
  }
  return "gpu";
}

const Type &atomic_pointer(const Operand &ptr, const std::string &what) {
  if (!ptr.is_value() || !ptr.value()->type().is_pointer())
    user_error(ptr.loc(), what +
                              " needs a pointer or a block of pointers as its "
                              "first argument, got " +
                              ptr.describe() + "; pass e.g. out + offsets");
  return ptr.value()->type();
}

/// An operand broadcast to the pointer block's shape and converted to
/// `dtype` (the pointee for values, i1 for masks).
ir::Value *atomic_operand(const Operand &x, const Type &ptr, Scalar dtype,
                          const char *name, const std::string &what) {
  if (x.is_value() && x.value()->type().is_pointer())
    user_error(x.loc(), what + ": the " + name + " is " +
                            x.value()->type().str() +
                            ", a pointer; atomics update numbers (use "
                            "bl::cast(pointer, bl::int64) for an address)");
  Shape shape = ptr.shape();
  if (x.is_value()) {
    Shape s = x.value()->type().shape();
    if (detail::broadcast_shapes(shape, s, x.loc(), what) != shape)
      user_error(x.loc(), what + ": the " + name + " " + x.describe() +
                              " does not fit the pointer block " + ptr.str() +
                              "; it must have the pointer's shape (or "
                              "broadcast to it)");
  }
  return detail::broadcast_value(detail::as_dtype(x, dtype), shape, x.loc());
}

ir::Value *atomic_value(const Operand &x, const Type &ptr, const char *name,
                        const std::string &what) {
  return atomic_operand(x, ptr, ptr.pointee(), name, what);
}

ir::Value *atomic_mask(const Operand &mask, const Type &ptr,
                       const std::string &what) {
  if (detail::natural_dtype(mask) != Scalar::I1)
    user_error(mask.loc(),
               what + ": the mask must be boolean (i1), got " +
                   mask.describe() +
                   "; build it with a comparison such as offsets < n");
  return atomic_operand(mask, ptr, Scalar::I1, "mask", what);
}

ir::Attributes memory_order(const AtomicOptions &options) {
  return {{"sem", std::string(semantic_name(options.sem))},
          {"scope", std::string(scope_name(options.scope))}};
}

/// Which element types a read-modify-write of `kind` accepts (Triton's).
void check_rmw_element(const std::string &kind, Scalar e,
                       const std::string &what, const SourceLoc &loc) {
  std::string name = detail::dtype_name(e);
  bool bitwise = kind == "and" || kind == "or" || kind == "xor";
  if (e == Scalar::F16 || e == Scalar::BF16) {
    if (kind != "add")
      user_error(loc, what + " does not support " + name +
                          " elements (only atomic_add does); use a float32 "
                          "buffer");
    return;
  }
  if (ir::scalar_bits(e) < 32)
    user_error(loc, what + " does not support " + name +
                        " elements; atomics work on 32- and 64-bit integers "
                        "and floats (use an int32 buffer)");
  if (bitwise && ir::is_float(e))
    user_error(loc, what + " needs integer elements, got " + name +
                        "; bitwise atomics are defined on integers only (use "
                        "an integer buffer, or bl::atomic_xchg)");
}

Tensor atomic_rmw(const char *kind, const Operand &ptr, const Operand &value,
                  const Operand *mask, const AtomicOptions &options) {
  std::string what = std::string("bl::atomic_") + kind;
  detail::reject_in_combine(what, ptr.loc());
  const Type &pt = atomic_pointer(ptr, what);
  check_rmw_element(kind, pt.pointee(), what, ptr.loc());
  std::vector<ir::Value *> operands{ptr.value(),
                                    atomic_value(value, pt, "value", what)};
  if (mask)
    operands.push_back(atomic_mask(*mask, pt, what));
  ir::Attributes attrs = memory_order(options);
  attrs["kind"] = std::string(kind);
  auto &b = detail::TraceContext::current(ptr.loc()).at(ptr.loc());
  Type result = pt.with_element(Type::scalar(pt.pointee()));
  return Tensor(b.create_value(OpCode::AtomicRmw, operands, result, attrs));
}

} // namespace

Tensor atomic_add(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("add", pointer, value, nullptr, options);
}
Tensor atomic_add(Operand pointer, Operand value, Operand mask,
                  AtomicOptions options) {
  return atomic_rmw("add", pointer, value, &mask, options);
}
Tensor atomic_max(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("max", pointer, value, nullptr, options);
}
Tensor atomic_max(Operand pointer, Operand value, Operand mask,
                  AtomicOptions options) {
  return atomic_rmw("max", pointer, value, &mask, options);
}
Tensor atomic_min(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("min", pointer, value, nullptr, options);
}
Tensor atomic_min(Operand pointer, Operand value, Operand mask,
                  AtomicOptions options) {
  return atomic_rmw("min", pointer, value, &mask, options);
}
Tensor atomic_and(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("and", pointer, value, nullptr, options);
}
Tensor atomic_and(Operand pointer, Operand value, Operand mask,
                  AtomicOptions options) {
  return atomic_rmw("and", pointer, value, &mask, options);
}
Tensor atomic_or(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("or", pointer, value, nullptr, options);
}
Tensor atomic_or(Operand pointer, Operand value, Operand mask,
                 AtomicOptions options) {
  return atomic_rmw("or", pointer, value, &mask, options);
}
Tensor atomic_xor(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("xor", pointer, value, nullptr, options);
}
Tensor atomic_xor(Operand pointer, Operand value, Operand mask,
                  AtomicOptions options) {
  return atomic_rmw("xor", pointer, value, &mask, options);
}
Tensor atomic_xchg(Operand pointer, Operand value, AtomicOptions options) {
  return atomic_rmw("xchg", pointer, value, nullptr, options);
}
Tensor atomic_xchg(Operand pointer, Operand value, Operand mask,
                   AtomicOptions options) {
  return atomic_rmw("xchg", pointer, value, &mask, options);
}

Tensor atomic_cas(Operand pointer, Operand compare, Operand value,
                  AtomicOptions options) {
  const std::string what = "bl::atomic_cas";
  detail::reject_in_combine(what, pointer.loc());
  const Type &pt = atomic_pointer(pointer, what);
  Scalar e = pt.pointee();
  int bits = ir::scalar_bits(e);
  if (bits != 16 && bits != 32 && bits != 64)
    user_error(pointer.loc(), what + " does not support " +
                                  detail::dtype_name(e) +
                                  " elements; it swaps 16-, 32- or 64-bit "
                                  "elements (use an int32 buffer)");
  std::vector<ir::Value *> operands{
      pointer.value(), atomic_value(compare, pt, "compare value", what),
      atomic_value(value, pt, "value", what)};
  auto &b = detail::TraceContext::current(pointer.loc()).at(pointer.loc());
  Type result = pt.with_element(Type::scalar(e));
  return Tensor(b.create_value(OpCode::AtomicCas, operands, result,
                               memory_order(options)));
}

} // namespace blocc
