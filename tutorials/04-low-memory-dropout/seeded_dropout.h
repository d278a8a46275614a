// Tutorial 04's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.seeded_dropout,
// bindings/module/shipped_kernels.cpp).
//
// Dropout zeroes each element with probability p and scales the others by
// 1 / (1 - p), so that the output's expected value is the input. The usual
// implementation draws a random mask, stores it (a byte or more per
// element) and reads it back in the backward pass. Here the mask is never
// stored: element i is kept when rand(seed, i) > p, where rand is Philox,
// a counter-based generator: its number for (seed, i) is a pure function
// of the two, the same in whichever program, backend or pass computes it.
// The backward pass (or a rerun) recomputes the mask from the seed alone,
// so dropout's state is one integer instead of a tensor.
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

inline auto seeded_dropout = bl::kernel(
    "seeded_dropout", {"x", "out", "n", "p", "seed", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n, bl::f32 p, bl::i32 seed,
       bl::Const<int> BLOCK) {
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      auto v = bl::load(x + offsets, mask);
      // A uniform float32 in [0, 1) per element, from (seed, offset).
      auto keep = bl::rand(seed, offsets) > p;
      bl::store(out + offsets, bl::where(keep, v / (1 - p), 0.0f), mask);
    });

} // namespace blocc::tutorials
