// What blocc-compile compiles: one specialization of one kernel, its
// parameters as the signature fixed them, and where it came from.
#pragma once

#include "ir/type.h"

#include <string>
#include <vector>

namespace blocc::compile {

struct Parameter {
  enum class Kind { Pointer, Scalar, Constant };
  std::string name; ///< "x"; "arg3" where the kernel names none
  Kind kind = Kind::Scalar;
  /// The element type of a pointer, the type of a scalar or constant.
  ir::Scalar dtype = ir::Scalar::I32;
  /// 16: the pointer is 16-byte aligned, the integer divisible by 16
  /// (Triton's ':16'); 1: nothing assumed.
  int divisibility = 1;
  /// Constants: the value as the signature gives it ("1024", "0.5").
  std::string value;
  /// The signature entry, for messages and comments: "x=*f32:16".
  std::string entry;
  /// Pointers: the kernel may store through it (else the launch function
  /// takes a pointer to const).
  bool written = false;
};

struct Specialization {
  std::string kernel; ///< the kernel's own name ("add")
  std::string origin; ///< "kernel 'add' (kernels.cpp:12) of libk.so"
  std::string name;   ///< of the launch functions' namespace ("add_1024")
  std::string outer;  ///< --namespace ("" or "my::kernels")
  std::vector<Parameter> parameters;
  /// The block IR after the generic passes: what every target compiles.
  std::string ir_text;

  /// "x=*f32:16, y=*f32:16, out=*f32:16, n=i32, BLOCK=1024"
  std::string signature() const;
  /// The parameters that are launch arguments (not constants), in order:
  /// the arguments of the IR function.
  std::vector<const Parameter *> runtime_parameters() const;
};

} // namespace blocc::compile
