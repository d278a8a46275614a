// Tutorial 07's kernels, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.gelu and gelu_f16,
// bindings/module/shipped_kernels.cpp).
//
// GeLU in its tanh form, y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// as one elementwise pass: each program loads its block of x once, computes
// the whole formula on the block in float32, and stores y once. The same
// formula as separate array operations (cube, scale, add, scale, tanh, add,
// multiply, multiply) would read and write the whole tensor about eight
// times. Half inputs are widened to float32 for the arithmetic and rounded
// once, by the store, as Triton kernels treat them.
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

/// sqrt(2 / pi), rounded to float.
inline constexpr float kSqrt2OverPi = 0.7978845608028654f;

template <typename T> auto make_gelu(const char *name) {
  return bl::kernel(
      name, {"x", "out", "n", "BLOCK"},
      [](bl::Ptr<T> x, bl::Ptr<T> out, bl::i32 n, bl::Const<int> BLOCK) {
        auto offsets = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
        auto mask = offsets < n;
        auto v = bl::load(x + offsets, mask).to(bl::float32);
        auto inner = kSqrt2OverPi * (v + 0.044715f * v * v * v);
        auto y = 0.5f * v * (1.0f + bl::tanh(inner));
        bl::store(out + offsets, y, mask); // rounded to T by the store
      });
}

inline auto gelu = make_gelu<float>("gelu");
inline auto gelu_f16 = make_gelu<bl::half>("gelu_f16");

} // namespace blocc::tutorials
