// How a kernel's arguments are passed to the PTX entry (what the launch
// packs and the lowering reads). Scalars travel widened, so that the
// launch needs no knowledge of narrow formats: integers of 32 bits or less
// as a 32-bit word, 64-bit integers as 64 bits, f32 as f32, every other
// float (f64, f16, bf16, fp8) as f64, rounded to its type once inside the
// kernel, exactly as the interpreter rounds a launch argument. Pointers are
// 64-bit global addresses. A kernel that copies with TMA takes, after the
// user's parameters, one tensor map per cuda::TensorMapRequest its
// CompiledKernel carries (runtime/cuda/tensor_map.h), each a
// `.param .align 64 .b8 [128]` that the launch encodes from the
// arguments. No LLVM here.
#pragma once

#include "ir/type.h"

namespace blocc::nvptx {

enum class ParameterKind { Pointer, Int32, Int64, Float32, Float64 };

inline ParameterKind parameter_kind(const ir::Type &type) {
  if (type.is_pointer())
    return ParameterKind::Pointer;
  if (type.is_integer())
    return ir::scalar_bits(type.element()) > 32 ? ParameterKind::Int64
                                                : ParameterKind::Int32;
  return type.element() == ir::Scalar::F32 ? ParameterKind::Float32
                                           : ParameterKind::Float64;
}

} // namespace blocc::nvptx
