// Every random kernel that ever failed a check, kept: CI checks each on
// every executor present (the interpreter and the CPU backend, PTX through
// ptxas here; the GPU where there is one), and `blocc-fuzz --regressions`
// runs the same list. A failure seed joins the list as soon as it is found,
// with what it found ("open" until the change that fixes it), so that the
// GPU batch stays red while a miscompile is known and unfixed.
#pragma once

#include <cstdint>

namespace blocc::differential {

struct RegressionKernel {
  uint64_t seed;
  int size;          ///< random actions (blocc-fuzz --size)
  int generation;    ///< GeneratorOptions::generation (blocc-fuzz --generation)
  const char *found; ///< what it caught
};

inline constexpr RegressionKernel kRegressionBatch[] = {
    {778169, 16, 1,
     "GPU: the SLP vectorizer packed i8 scan results into a <2 x i8>, which "
     "LLVM's NVPTX target extracted through a stack slot; on an H100 a "
     "shift amount read back as 0 (out3 element 5: 1 instead of 2)"},
    {778005, 16, 1,
     "PTX: a masked two-byte i8 load unpacked through a <2 x i8> used local "
     "memory"},
    {778019, 16, 1, "PTX: local memory for a two-byte i8 access (8 warps)"},
    {778032, 16, 1, "PTX: local memory for a two-byte i8 access (1 warp)"},
    {778136, 16, 1, "PTX: local memory for a two-byte i8 access (1 warp)"},
    // From the GPU fuzzing batch: the PTX assembler of CUDA 13.0 (the
    // H100 driver's JIT) fused two integer max/min into one three-input
    // instruction and dropped an operand's negation
    // (integer_min_max_as_selects.h).
    {6000001194, 20, 1,
     "GPU: out3 (i32) element 1 was -149 on 4 warps, -744 on the CPU"},
    {6000004526, 20, 1,
     "GPU: a loop carrying max(x, pid - offset) gave pid: out3 (i32) "
     "element 2 was 1 on 4 warps, -1 on the CPU"},
    {6000010763, 18, 1,
     "GPU: out3 (bf16) element 1 was 1 on 8 warps, 688 on the CPU"},
    {6000018108, 19, 1,
     "GPU: the max of -int16(x) over a masked f32 block was 1 on 1 warp, "
     "0 on the CPU"},
    // From the GPU fuzzing batch of generation 4.
    {8000003687, 11, 4,
     "GPU: the PTX assembler folded max(-|x|, -16) to -16 "
     "(negated_abs_as_min.h): out4 (i32) element 0 was -16 on 8 warps, 0 "
     "on the CPU"},
    {8000014573, 17, 4,
     "GPU: the i32 cast of an i16 |x| at -32768 read 32768 under the PTX "
     "assembler of CUDA 13.0 (narrow_negation_in_32_bits.h): out2 element 32 "
     "was 32896 on 2 warps, -32640 on the CPU"},
    {8000008541, 20, 4,
     "CPU backend on a Sapphire Rapids host: LLVM's AVX512-FP16 code left "
     "out3 (u32) element 0 unwritten, 8 in the interpreter (host_target.cpp "
     "leaves the feature unused)"},
    {8100014892, 12, 4,
     "GPU, 1 warp: out0 (i1) element 143 was 0, 1 on the CPU: the PTX "
     "assemblers of CUDA 12.8 and 13.0 (the H100 driver's JIT) packed the "
     "mask's predicates into bits of one register and read another "
     "element's bit, negated; right with the ptxas of 13.5 (BLOCC_PTXAS, "
     "runtime/cuda/ptx_assembler.h), whose warning names it"},
    // From the GPU fuzzing batch of generation 6.
    {31010388, 16, 6,
     "GPU, 1 warp: out1 (f32) element 0 was 1, -1 on the CPU: LLVM's NVPTX "
     "target lowered sitofp i1 (-O3's form of float(-int8(mask))) as a "
     "conversion of 1 (signed_bool_to_float.h)"},
    {5122112873, 12, 3,
     "check: an f16 result equal to the poison pattern (0xABAB) read as "
     "never written by the float64 check"},
};

} // namespace blocc::differential
