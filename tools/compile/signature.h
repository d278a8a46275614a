// The signature string of blocc-compile: one entry per kernel parameter, in
// order, separated by commas, each optionally named ("x=..."):
//   pointer   *f32, *f32:16      (':16': the address is 16-byte aligned)
//   scalar    i32, i32:16, f32   (':16': the integer is a multiple of 16)
//   constant  1024, -3, 0.5, true (a bl::Const<T> parameter's value)
// which is Triton's specialization key (tl.constexpr values, divisibility
// by 16) written as Triton's compile.py takes it; element types are the
// IR's names (f32, f16, bf16, i32, u8, ...) or Triton's (fp32, fp16, ...).
#pragma once

#include "tools/compile/specialization.h"

#include <string>
#include <vector>

namespace blocc::compile {

/// A parameter as the kernel declares it.
struct DeclaredParameter {
  std::string name; ///< "x"; empty where the kernel names none
  Parameter::Kind kind = Parameter::Kind::Scalar;
  ir::Scalar dtype = ir::Scalar::I32;
  std::string type_name; ///< "bl::Ptr<f32>", "bl::Const<i32>"
};

/// The parameters `signature` specializes `declared` to. Throws
/// blocc::Error starting "--signature: " and naming the entry and the
/// parameter for every mistake: a count that does not match (with an
/// example signature), a name that is not the parameter's, a pointer where
/// the kernel takes a scalar and back, another element type than the
/// kernel's, ':N' other than 16 or 1 (or on a float), a constant that is
/// not a number of the parameter's type or does not fit it.
std::vector<Parameter>
parse_signature(const std::string &signature, const std::string &kernel,
                const std::vector<DeclaredParameter> &declared);

/// A signature for `declared`, to show how one reads: pointers ':16',
/// integers plain, constants as "BLOCK=<value>".
std::string example_signature(const std::vector<DeclaredParameter> &declared);

} // namespace blocc::compile
