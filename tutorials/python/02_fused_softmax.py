"""Tutorial 02 from Python: the fused row softmax of
tutorials/02-fused-softmax (blocc.kernels.softmax), on numpy matrices.

Run: PYTHONPATH=build/python python3 tutorials/python/02_fused_softmax.py
"""

import os
import sys

import numpy as np

import blocc
from blocc.kernels import softmax


def blocc_softmax(x):
    n_rows, n_cols = x.shape
    out = np.empty_like(x)
    # One program per core or so: each strides over the rows.
    programs = min(n_rows, 4 * (os.cpu_count() or 1))
    softmax[(programs,)](out, x, x.strides[0] // x.itemsize,
                         out.strides[0] // out.itemsize, n_rows, n_cols,
                         BLOCK=blocc.next_power_of_2(n_cols))
    return out


def numpy_softmax(x):
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def main():
    rng = np.random.default_rng()
    print(f"Running on the {blocc.host_backend()}.\n")
    print(f"{'rows':>6} {'cols':>6} {'max rel err':>12} {'blocc ms':>9} {'numpy ms':>9}")
    ok = True
    for rows, cols in ((1, 1), (7, 13), (64, 781), (256, 1024), (31, 3001), (4096, 1024)):
        x = rng.uniform(-50, 50, (rows, cols)).astype(np.float32)
        out = blocc_softmax(x)
        want = numpy_softmax(x.astype(np.float64))
        err = float(np.max(np.abs(out - want) / np.maximum(want, 1e-30)))
        ok &= err <= 1e-5
        ms = blocc.testing.do_bench(lambda: blocc_softmax(x), warmup=5, rep=20)
        ms_numpy = blocc.testing.do_bench(lambda: numpy_softmax(x), warmup=5, rep=20)
        print(f"{rows:>6} {cols:>6} {err:>12.3g} {ms:>9.3f} {ms_numpy:>9.3f}")
    print("02_fused_softmax: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
