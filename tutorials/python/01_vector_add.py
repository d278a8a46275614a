"""Tutorial 01 from Python: the vector addition kernel of
tutorials/01-vector-add (blocc.kernels.add), on numpy arrays.

Run: PYTHONPATH=build/python python3 tutorials/python/01_vector_add.py
(or with blocc installed by `pip install .`).
"""

import sys

import numpy as np

import blocc
from blocc.kernels import add


def vector_add(x, y):
    out = np.empty_like(x)
    n = x.size
    # The grid may depend on the constants, as in Triton: meta holds every
    # named argument of the launch.
    grid = lambda meta: (blocc.cdiv(n, meta["BLOCK"]),)
    add[grid](x, y, out, n, BLOCK=1024)
    return out


def main():
    rng = np.random.default_rng()
    print(f"Running on the {blocc.host_backend()}.\n")
    print(f"{'n':>10} {'max |err|':>10} {'blocc ms':>9} {'numpy ms':>9}")
    ok = True
    for n in (1, 97, 1000, 98432, 1 << 22):
        x = rng.uniform(-1, 1, n).astype(np.float32)
        y = rng.uniform(-1, 1, n).astype(np.float32)
        out = vector_add(x, y)
        # The float32 sum, correctly rounded, is exactly what the kernel adds.
        want = (x.astype(np.float64) + y).astype(np.float32)
        err = float(np.max(np.abs(out.astype(np.float64) - want)))
        ok &= bool(np.array_equal(out, want))
        ms = blocc.testing.do_bench(lambda: vector_add(x, y), warmup=5, rep=20)
        ms_numpy = blocc.testing.do_bench(lambda: np.add(x, y), warmup=5, rep=20)
        print(f"{n:>10} {err:>10.3g} {ms:>9.3f} {ms_numpy:>9.3f}")
    print("\nThe IR blocc compiled for n = 98432:")
    print(add.asm(n=98432, BLOCK=1024)["ir"])
    print("01_vector_add: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
