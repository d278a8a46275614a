// The integer operands of block pointers and tensor descriptors (extents,
// strides, offsets), checked and converted by one set of rules: Triton's.
// Internal to the frontend.
#pragma once

#include "blocc/tensor.h"

#include <string>

namespace blocc::detail {

/// Who asks for an index, for messages: the op ("bl::make_block_ptr") and
/// what it builds or reads ("block pointer", "tensor descriptor").
struct IndexUse {
  std::string what;
  std::string holder;
};

/// A scalar integer operand; `role` names it ("shape[1]"). Returns its
/// element type.
ir::Scalar expect_index(const Operand &x, const IndexUse &use,
                        const std::string &role);

/// An extent or stride as int64 (sign-extended when signed, as Triton's
/// int cast does).
ir::Value *index_as_int64(const Operand &x, const IndexUse &use,
                          const std::string &role);

/// An offset: an integer of at most 32 bits, as in Triton (a 64-bit value
/// is an error), as int32; an unsigned 32-bit offset keeps its bits.
ir::Value *offset_as_int32(const Operand &x, const IndexUse &use,
                           const std::string &role);

} // namespace blocc::detail
