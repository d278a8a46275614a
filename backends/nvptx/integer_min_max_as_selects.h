// Integer minimum and maximum as PTX compares and selects.
//
// The PTX assembler of CUDA 13.0, and the JIT of the drivers that ship with
// it, miscompile integer min/max on sm_90: it fuses two of them into one
// three-input instruction (VIMNMX3, VIADDMNMX) and drops a negation it had
// folded into an operand, so that max(max(a, -p), q) is computed as
// max(a, p, q). A random kernel whose loop carried max(x, pid - offset)
// returned pid on an H100. The assembler of CUDA 13.5 is right, but a
// kernel's PTX is assembled by whatever driver runs it, and PTX for sm_80
// is assembled for the device it runs on, Hopper included.
//
// So no min.sN/max.uN reaches PTX: after -O3, every integer min/max (the
// llvm.smax/smin/umax/umin intrinsics, and the compare-and-select idiom
// the NVPTX target would turn back into one) becomes an inline-asm setp
// and selp. The assembler still forms min/max instructions from those
// where it sees the idiom, but then materializes a negated operand first.
// The min/max that instruction selection creates later are rewritten in
// the PTX text (ptx_min_max_as_selects.h).
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace blocc::nvptx {

/// Rewrites every integer min/max in `module` (vectors element by element)
/// as an inline-asm compare and select.
void emit_integer_min_max_as_selects(llvm::Module &module);

} // namespace blocc::nvptx
