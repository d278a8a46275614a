// How block-IR element types look in LLVM IR, for every LLVM backend.
//
// An element has three forms:
//  - storage: its bytes in memory (i1 takes a byte; f16/bf16 are their 16
//    bits as i16, fp8 its 8 bits as i8, so that LLVM never reinterprets
//    them; pointers are `ptr`);
//  - register: the SSA value that holds it between operations (as storage,
//    except i1, which is an LLVM i1);
//  - compute: the type arithmetic runs in (float for f16 and bf16, which
//    are computed in f32 and rounded back, as the interpreter does).
#pragma once

#include "ir/type.h"

namespace llvm {
class LLVMContext;
class Type;
} // namespace llvm

namespace blocc::llvm_backend {

llvm::Type *storage_type(llvm::LLVMContext &context, ir::Scalar s);
llvm::Type *register_type(llvm::LLVMContext &context, ir::Scalar s);

/// Bytes one element occupies in memory (i1: one byte).
int storage_bytes(ir::Scalar s);

/// True for f16 and bf16: held as bits, computed in f32.
bool is_narrow_float(ir::Scalar s);

} // namespace blocc::llvm_backend
