// Counter-based random numbers (tl.randint, tl.rand, tl.randn and friends):
// Philox 4x32 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
// SC'11) traced from ordinary block ops (umulhi, *, ^, + and casts), so
// every backend runs it without special support.
//
//   auto offs = pid * BLOCK + bl::arange(0, BLOCK);
//   auto keep = bl::rand(seed, offs) > p;           // dropout mask
//
// The same (seed, offset) gives the same number in every program, on every
// backend and in Triton: these functions compute exactly what
// triton.language.random computes.
//  - The key is the seed converted to uint64 (sign-extended from a signed
//    type), split into its low and high 32 bits (k0, k1).
//  - The counter is (low 32 bits of the offset, high 32 bits for a 64-bit
//    offset type else 0, 0, 0). Offsets narrower than 32 bits are converted
//    to uint32 by the cast rules (sign-extended when signed).
//  - Each round: c0' = umulhi(0xCD9E8D57, c2) ^ c1 ^ k0,
//    c2' = umulhi(0xD2511F53, c0) ^ c3 ^ k1, c1' = 0xCD9E8D57 * c2,
//    c3' = 0xD2511F53 * c0; then k0 += 0x9E3779B9, k1 += 0xBB67AE85. Ten
//    rounds by default (philox4x32-10, Random123's known-answer vectors).
//  - Integers come back as uint32 (Triton's randint dtype); rand maps them
//    with uint_to_uniform_float; randn with the Box-Muller transform.
//
// Like tl.randint, the seed is a scalar (a kernel argument or a number) and
// `offsets` any integer scalar or block; the result has the offsets' shape.
// `n_rounds` is a trace-time constant of at least 1 (Triton also takes 0,
// which hands the counter back unmixed; blocc reports that as a mistake).
#pragma once

#include "blocc/ops.h"

#include <array>
#include <utility>

namespace blocc {

/// Rounds of Philox when none are asked for: Random123's philox4x32-10.
inline constexpr int kPhiloxDefaultRounds = 10;

/// The Philox block function on an explicit counter (tl.philox): returns the
/// four output words. Counters of 32-bit types run Philox 4x32 with the key
/// (low, high 32 bits of the seed); counters of 64-bit types run Philox 4x64
/// with the key (seed, 0), as Triton does. The counters' shapes broadcast;
/// results are uint32 or uint64 blocks of that shape. Tensor counters must
/// share c0's width (they are bitcast, as in Triton); numbers take it.
std::array<Tensor, 4> philox(Operand seed, Operand c0, Operand c1, Operand c2,
                             Operand c3, int n_rounds = kPhiloxDefaultRounds);

/// Four independent uint32 random blocks for `offsets` (tl.randint4x): the
/// cheapest way to get more than one number per offset.
std::array<Tensor, 4> randint4x(Operand seed, Operand offsets,
                                int n_rounds = kPhiloxDefaultRounds);
/// One uint32 random block (the first word of randint4x).
Tensor randint(Operand seed, Operand offsets,
               int n_rounds = kPhiloxDefaultRounds);

/// Maps random 32- or 64-bit integers to float32 in [0, 1) as Triton does:
/// reinterpret as signed, fold negatives with x < 0 ? -x - 1 : x, convert to
/// float32 and scale by 4.6566127342e-10 (1.0842020432385337e-19 for 64
/// bits), the largest factor that keeps the largest input below 1.0.
Tensor uint_to_uniform_float(Operand x);
/// Uniform float32 in [0, 1) (tl.rand).
Tensor rand(Operand seed, Operand offsets, int n_rounds = kPhiloxDefaultRounds);
/// Four independent uniform blocks (tl.rand4x).
std::array<Tensor, 4> rand4x(Operand seed, Operand offsets,
                             int n_rounds = kPhiloxDefaultRounds);

/// The Box-Muller transform of two uniform blocks, as tl's
/// pair_uniform_to_normal: u1 is first clamped to at least 1e-7, then
/// r = sqrt(-2 log u1), theta = 2 pi u2, giving (r cos theta, r sin theta).
std::pair<Tensor, Tensor> pair_uniform_to_normal(Operand u1, Operand u2);
/// Standard normal float32 (tl.randn): the first Box-Muller output of the
/// first two words of randint4x.
Tensor randn(Operand seed, Operand offsets,
             int n_rounds = kPhiloxDefaultRounds);
/// Four independent standard normal blocks (tl.randn4x).
std::array<Tensor, 4> randn4x(Operand seed, Operand offsets,
                              int n_rounds = kPhiloxDefaultRounds);

} // namespace blocc
