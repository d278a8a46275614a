// PTX atom instructions on global memory through inline assembly, with
// the memory semantics and scope spelled out (atom.acq_rel.gpu.global...),
// which LLVM 19's atomic instructions cannot express for NVPTX. Used by
// lower_atomic.cpp and by the fault record's lock (lower_fault.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string>
#include <vector>

namespace blocc::nvptx {

/// "atom.<sem>.<scope>.global.<operation> d, [address], operands...;"
/// returning d, of the first operand's type (i16, i32, i64, float or
/// double). `sem` is relaxed, acquire, release or acq_rel; `scope` cta,
/// gpu or sys; `operation` e.g. "add.u32", "cas.b64", "add.noftz.f16".
llvm::Value *emit_atom(llvm::IRBuilderBase &b, const std::string &sem,
                       const std::string &scope, const std::string &operation,
                       llvm::Value *address,
                       const std::vector<llvm::Value *> &operands);

} // namespace blocc::nvptx
