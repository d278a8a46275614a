#include "ir/opcode.h"

#include <array>

namespace blocc::ir {

namespace {

constexpr std::array<std::string_view, kNumOpCodes> kNames = {
    "constant",
    "program_id",
    "num_programs",
    "arange",
    "splat",
    "broadcast",
    "expand_dims",
    "reshape",
    "permute",
    "join",
    "split",
    "cat",
    "cast",
    "bitcast",
    "ptr_to_int",
    "int_to_ptr",
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "and",
    "or",
    "xor",
    "shl",
    "shr",
    "minimum",
    "maximum",
    "umulhi",
    "cmp",
    "addptr",
    "neg",
    "not",
    "abs",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tanh",
    "erf",
    "floor",
    "ceil",
    "fma",
    "select",
    "load",
    "store",
    "atomic_rmw",
    "atomic_cas",
    "descriptor_load",
    "descriptor_store",
    "reduce",
    "scan",
    "dot",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "convert_layout",
    "print",
    "assert",
    "for",
    "if",
    "yield",
    "return",
};

} // namespace

std::string_view opcode_name(OpCode code) {
  return kNames[static_cast<int>(code)];
}

std::optional<OpCode> opcode_from_name(std::string_view name) {
  for (int i = 0; i < kNumOpCodes; ++i)
    if (kNames[i] == name)
      return static_cast<OpCode>(i);
  return std::nullopt;
}

bool is_elementwise(OpCode c) {
  return (c >= OpCode::Cast && c <= OpCode::Select);
}

bool has_side_effects(OpCode c) {
  switch (c) {
  case OpCode::Store:
  case OpCode::DescriptorStore:
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
  case OpCode::Print:
  case OpCode::Assert:
  case OpCode::Yield:
  case OpCode::Return:
    return true;
  case OpCode::Load:
  case OpCode::DescriptorLoad:
    return false; // a load may be removed when unused; volatile ones are kept
                  // by the passes that check the attribute
  default:
    return false;
  }
}

bool is_memory_read(OpCode c) {
  switch (c) {
  case OpCode::Load:
  case OpCode::DescriptorLoad:
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
    return true;
  default:
    return false;
  }
}

bool is_memory_write(OpCode c) {
  switch (c) {
  case OpCode::Store:
  case OpCode::DescriptorStore:
  case OpCode::AtomicRmw:
  case OpCode::AtomicCas:
    return true;
  default:
    return false;
  }
}

bool is_impure_in_combine(OpCode c) {
  return is_memory_read(c) || is_memory_write(c) || c == OpCode::Print ||
         c == OpCode::Assert;
}

bool is_commutative(OpCode c) {
  switch (c) {
  case OpCode::Add:
  case OpCode::Mul:
  case OpCode::And:
  case OpCode::Or:
  case OpCode::Xor:
  case OpCode::Minimum:
  case OpCode::Maximum:
  case OpCode::Umulhi:
    return true;
  default:
    return false;
  }
}

bool is_terminator(OpCode c) {
  return c == OpCode::Yield || c == OpCode::Return;
}

bool is_unary_math(OpCode c) { return c >= OpCode::Exp && c <= OpCode::Ceil; }

std::optional<OpCode> atomic_combine(std::string_view kind) {
  if (kind == "add")
    return OpCode::Add;
  if (kind == "max")
    return OpCode::Maximum;
  if (kind == "min")
    return OpCode::Minimum;
  if (kind == "and")
    return OpCode::And;
  if (kind == "or")
    return OpCode::Or;
  if (kind == "xor")
    return OpCode::Xor;
  return std::nullopt;
}

} // namespace blocc::ir
