// Tutorial 01's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.add, bindings/module/shipped_kernels.cpp).
//
// The block program: the grid has cdiv(n, BLOCK) program instances; instance
// `pid` owns the elements [pid * BLOCK, pid * BLOCK + BLOCK). It computes
// their offsets as one block (arange), masks off the ones past n (the last
// block is usually partial), loads both inputs, adds and stores. No thread
// indices anywhere: the compiler maps the block onto threads or vector lanes.
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

// `inline`: one kernel (and one compile cache) in every file including this.
inline auto add =
    bl::kernel("add", {"x", "y", "out", "n", "BLOCK"},
               [](bl::Ptr<float> x, bl::Ptr<float> y, bl::Ptr<float> out,
                  bl::i32 n, bl::Const<int> BLOCK) {
                 auto pid = bl::program_id(0);
                 auto offsets = pid * BLOCK + bl::arange(0, BLOCK);
                 auto mask = offsets < n;
                 auto sum =
                     bl::load(x + offsets, mask) + bl::load(y + offsets, mask);
                 bl::store(out + offsets, sum, mask);
               });

} // namespace blocc::tutorials
