// Tutorial 08's kernel, shared by the tutorial (main.cpp) and the Python
// package (blocc.kernels.rope, bindings/module/shipped_kernels.cpp).
//
// Rotary position embedding (RoPE), forward and backward, in place, on a
// contiguous q of shape [batch, seq, heads, head_dim]. cos and sin are
// [seq, head_dim / 2] tables. At position s, each pair of a head's
// elements (x1, x2) = (q[..., d], q[..., d + head_dim / 2]) turns by the
// angle whose cosine and sine are cos[s, d] and sin[s, d]:
//   forward:  y1 = x1 cos - x2 sin,   y2 = x2 cos + x1 sin.
// A rotation's gradient is the rotation by the opposite angle, so the
// backward pass is the same kernel with sin negated (BACKWARD, a
// compile-time constant: two specializations, no branch in either).
//
// The grid is [batch * seq, cdiv(heads, GROUP)]: a program owns one token
// (row) and GROUP of its heads. It loads the token's cos and sin rows once
// and reuses them for each of its heads, a loop of C++ `for` that the trace
// unrolls (Triton's tl.static_range): GROUP is a constant. Every element
// is read once and written once, in place, so the kernel moves the least
// data possible; the masks switch off lanes past head_dim / 2 (BLOCK is a
// power of two) and heads past the last one.
#pragma once

#include <blocc/blocc.h>

namespace blocc::tutorials {

namespace bl = blocc;

inline auto rope = bl::kernel(
    "rope",
    {"q", "cos", "sin", "seq_len", "n_heads", "head_dim", "GROUP", "BLOCK",
     "BACKWARD"},
    [](bl::Ptr<float> q, bl::Ptr<float> cos, bl::Ptr<float> sin,
       bl::i32 seq_len, bl::i32 n_heads, bl::i32 head_dim, bl::Const<int> GROUP,
       bl::Const<int> BLOCK, bl::Const<bool> BACKWARD) {
      auto row = bl::program_id(0); // batch index * seq_len + position
      auto first_head = bl::program_id(1) * GROUP;
      auto half = head_dim / 2;
      auto cols = bl::arange(0, BLOCK);
      auto in_half = cols < half;
      auto position = row % seq_len;
      auto c = bl::load(cos + position * half + cols, in_half);
      auto s = bl::load(sin + position * half + cols, in_half);
      if (BACKWARD) // decided while tracing
        s = -s;
      for (int k = 0; k < GROUP; ++k) {
        auto head = first_head + k;
        auto mask = in_half && (head < n_heads);
        auto x = q + (row * n_heads + head) * head_dim;
        auto x1 = bl::load(x + cols, mask);
        auto x2 = bl::load(x + half + cols, mask);
        bl::store(x + cols, x1 * c - x2 * s, mask);
        bl::store(x + half + cols, x2 * c + x1 * s, mask);
      }
    });

} // namespace blocc::tutorials
