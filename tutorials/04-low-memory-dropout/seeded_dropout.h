// Tutorial 04's kernels, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.seeded_dropout and seeded_dropout4x,
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
//
// Philox makes four 32-bit words per counter, and rand keeps one of them:
// ten rounds of multiplications per element make the kernel bound by its
// arithmetic rather than by memory on a GPU. seeded_dropout4x keeps all
// four (rand4x): element i draws word i % 4 of the counter i / 4, a quarter
// of the rounds per element, and still a pure function of (seed, i).
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

/// seeded_dropout with a quarter of the Philox rounds: element i is kept
/// when word i % 4 of rand4x(seed, i / 4) is above p. BLOCK: a multiple of
/// 4.
inline auto seeded_dropout4x = bl::kernel(
    "seeded_dropout4x", {"x", "out", "n", "p", "seed", "BLOCK"},
    [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n, bl::f32 p, bl::i32 seed,
       bl::Const<int> BLOCK) {
      const int quarter = BLOCK / 4;
      auto counters = bl::program_id(0) * quarter + bl::arange(0, quarter);
      auto [u0, u1, u2, u3] = bl::rand4x(seed, counters);
      // Interleaved, word j of counter c lands on element 4c + j: pairs of
      // blocks joined and flattened, twice (in registers, no shuffling).
      auto even = bl::reshape(bl::join(u0, u2), {2 * quarter});
      auto odd = bl::reshape(bl::join(u1, u3), {2 * quarter});
      auto uniform = bl::reshape(bl::join(even, odd), {BLOCK});
      auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
      auto mask = offsets < n;
      auto v = bl::load(x + offsets, mask);
      bl::store(out + offsets, bl::where(uniform > p, v / (1 - p), 0.0f), mask);
    });

} // namespace blocc::tutorials
