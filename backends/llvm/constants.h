// Constant elements of the block IR as LLVM constants, converted exactly as
// the reference interpreter converts a constant op's `value` attribute.
#pragma once

#include "ir/function.h"

namespace llvm {
class Constant;
class LLVMContext;
} // namespace llvm

namespace blocc::llvm_backend {

/// The register-form constant of element type `s` that `value` (an integer
/// or float attribute) denotes: integers wrap to the type, floats round to
/// nearest even, NaN becomes the format's quiet NaN of the same sign for
/// f16/bf16/fp8 (fp8 saturates, as casts into it do). Throws blocc::Error
/// for pointer elements.
llvm::Constant *element_constant(llvm::LLVMContext &context, ir::Scalar s,
                                 const ir::Attribute &value);

} // namespace blocc::llvm_backend
