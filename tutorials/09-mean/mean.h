// Tutorial 09's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.partial_sums, bindings/module/shipped_kernels.cpp).
//
// The mean of a large vector in two stages, each a launch of this kernel.
// A launch of P programs splits x into blocks of BLOCK elements; program
// pid adds the blocks pid, pid + P, pid + 2P, ... into a block accumulator
// (a loop-carried block: one running sum per lane), reduces that to one
// number and stores `scale` times it at sums[pid]. Stage one runs with P
// sized to the machine and scale 1, leaving P partial sums; stage two runs
// one program over those P numbers with scale 1/n, leaving the mean. No
// program waits for another and nothing is added atomically, so the result
// is the same in every run.
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

inline auto partial_sums =
    bl::kernel("partial_sums", {"x", "sums", "n", "scale", "BLOCK"},
               [](bl::Ptr<float> x, bl::Ptr<float> sums, bl::i32 n,
                  bl::f32 scale, bl::Const<int> BLOCK) {
                 auto pid = bl::program_id(0);
                 auto acc = bl::zeros({BLOCK}, bl::float32);
                 for (auto start :
                      bl::range(pid * BLOCK, n, bl::num_programs(0) * BLOCK)) {
                   auto offsets = start + bl::arange(0, BLOCK);
                   acc += bl::load(x + offsets, offsets < n, 0.f);
                 }
                 bl::store(sums + pid, bl::sum(acc) * scale);
               });

} // namespace blocc::tutorials
