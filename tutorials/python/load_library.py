"""Your own C++ kernels, from a shared library loaded at run time.

my_kernels.cpp defines two kernels and lists them with
BLOCC_EXPORT_KERNELS(saxpy, row_sum); CMake builds it into
build/tutorials/python/libmy_kernels.so (tutorials/python/CMakeLists.txt).

Run: PYTHONPATH=build/python python3 tutorials/python/load_library.py [library]
"""

import os
import sys

import numpy as np

import blocc

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "build", "tutorials", "python", "libmy_kernels.so")


def main():
    lib = blocc.load_library(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
    print(lib)
    for kernel in lib:
        print("  ", kernel.signature)
    rng = np.random.default_rng()
    ok = True

    # saxpy: scalars by position or keyword, constants by keyword.
    n = 100_003
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    lib.saxpy[(blocc.cdiv(n, 1024),)](x, y, out, alpha=2.5, n=n, BLOCK=1024)
    want = 2.5 * x.astype(np.float64) + y
    err = float(np.max(np.abs(out - want)))
    print(f"saxpy   n={n}: max |err| {err:.3g}")
    ok &= err <= 1e-5

    # row_sum: float64 rows, one program per row.
    rows, cols = 37, 1000
    m = rng.standard_normal((rows, cols))
    sums = np.full(rows, np.nan)
    lib.row_sum[(rows,)](m, sums, cols, BLOCK=blocc.next_power_of_2(cols))
    err = float(np.max(np.abs(sums - m.sum(axis=1))))
    print(f"row_sum {rows}x{cols}: max |err| {err:.3g}")
    ok &= err <= 1e-11

    print("load_library: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
