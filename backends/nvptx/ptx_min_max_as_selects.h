// Integer min/max that LLVM's instruction selection creates, rewritten in
// the PTX text as compares and selects.
//
// integer_min_max_as_selects.h turns every integer min/max of the LLVM IR
// into inline-asm compares and selects, because the PTX assembler of CUDA
// 13.0 miscompiles chains of min/max. Instruction selection still makes
// new ones after it: `a >= n || b >= n` becomes `max(a, b) >= n` (the
// masked-access checks of a vector load have that form). So the emitted
// PTX is rewritten too: every integer min.sN/max.uN instruction becomes
// the setp + selp the IR-level rewrite produces, and no integer min/max
// reaches the assembler.
#pragma once

#include <string>

namespace blocc::nvptx {

/// The PTX of d = min/max(a, b) on `bits`-bit integers (16, 32 or 64) as a
/// compare and select: "{ .reg .pred %p; setp.gt.s32 %p, a, b; selp.b32
/// d, a, b, %p; }". Operands are registers, immediates or inline-asm
/// placeholders ($0).
std::string min_max_as_select(bool is_max, bool is_signed, unsigned bits,
                              const std::string &d, const std::string &a,
                              const std::string &b);

/// `ptx` with every unpredicated integer min/max instruction (16, 32 and
/// 64 bits, signed and unsigned) written as a compare and select.
std::string rewrite_ptx_min_max_as_selects(const std::string &ptx);

} // namespace blocc::nvptx
