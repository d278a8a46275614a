"""Tutorial 04 from Python: the seeded dropout of
tutorials/04-low-memory-dropout (blocc.kernels.seeded_dropout), on numpy
arrays, against a numpy Philox; then what the seed buys: the backward pass
recomputes the forward pass's mask from the seed alone, where the usual
dropout stores the mask between the two passes.

Run: PYTHONPATH=build/python python3 tutorials/python/04_low_memory_dropout.py
"""

import sys

import numpy as np

import blocc
from blocc.kernels import seeded_dropout

BLOCK = 1024


def dropout(x, p, seed):
    out = np.empty_like(x)
    seeded_dropout[(blocc.cdiv(x.size, BLOCK),)](x, out, x.size, p, seed, BLOCK=BLOCK)
    return out


def numpy_rand(seed, offsets):
    """What bl::rand / tl.rand compute (frontend/blocc/random.h): Philox
    4x32-10 on the counter (offset, 0, 0, 0) with the seed as the key, its
    first word folded to [0, 2^31) and scaled into [0, 1) in float32."""
    c0 = offsets.astype(np.uint32)
    c1 = c2 = c3 = np.zeros_like(c0)
    key = int(seed) & 0xFFFFFFFFFFFFFFFF  # sign-extended to 64 bits
    k0, k1 = key & 0xFFFFFFFF, key >> 32
    for _ in range(10):
        p0 = c0.astype(np.uint64) * np.uint64(0xD2511F53)
        p2 = c2.astype(np.uint64) * np.uint64(0xCD9E8D57)
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)).astype(np.uint32) ^ c1 ^ np.uint32(k0),
                          p2.astype(np.uint32),
                          (p0 >> np.uint64(32)).astype(np.uint32) ^ c3 ^ np.uint32(k1),
                          p0.astype(np.uint32))
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    folded = c0.view(np.int32)
    folded = np.where(folded < 0, -(folded + 1), folded)
    return folded.astype(np.float32) * np.float32(4.6566127342e-10)


def main():
    rng = np.random.default_rng()
    p = np.float32(0.3)
    print(f"Running on the {blocc.host_backend()}.\n")
    print(f"{'n':>9} {'max |err|':>10} {'kept':>6} {'blocc ms':>9} {'numpy ms':>9}")
    ok = True
    for n in (1, 17, 1031, 98431, 1 << 22):
        x = rng.uniform(0.25, 2, n).astype(np.float32)
        seed = int(rng.integers(-2**31, 2**31))
        out = dropout(x, p, seed)
        keep = numpy_rand(seed, np.arange(n)) > p
        want = np.where(keep, x.astype(np.float64) / (1 - np.float64(p)), 0)
        # 1 - p and the division round once each in float32.
        err = float(np.max(np.abs(out - want)))
        ok &= bool(np.all(np.abs(out - want) <= 2**-23 * np.abs(want)))
        # The same seed gives the same bits, another seed another mask.
        ok &= bool(np.array_equal(dropout(x, p, seed), out))
        if n > 1000:
            other = dropout(x, p, seed ^ 0x5BD1E995)
            ok &= bool(np.mean((other == 0) != (out == 0)) > p * (1 - p))
        ms = blocc.testing.do_bench(lambda: dropout(x, p, seed), warmup=5, rep=20)
        # The usual dropout: a random mask, kept for the backward pass.
        ms_numpy = blocc.testing.do_bench(
            lambda: x * (rng.random(n, dtype=np.float32) > p) / (1 - p), warmup=5, rep=20)
        print(f"{n:>9} {err:>10.3g} {np.mean(keep):>6.3f} {ms:>9.3f} {ms_numpy:>9.3f}")

    # The backward pass of out = dropout(x) is grad_x = dropout(grad_out)
    # with the same mask: here that is one more launch with the same seed,
    # and no mask was stored in between.
    n, seed = 100003, int(rng.integers(-2**31, 2**31))
    x = rng.uniform(0.25, 2, n).astype(np.float32)
    grad_out = rng.uniform(-1, 1, n).astype(np.float32)
    out = dropout(x, p, seed)
    grad_x = dropout(grad_out, p, seed)
    backward_ok = bool(np.array_equal(grad_x == 0, out == 0))
    print(f"\nbackward from the seed alone: the masks of the two passes "
          f"{'agree' if backward_ok else 'DIFFER'} at all {n} elements")
    ok &= backward_ok
    print("04_low_memory_dropout: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
