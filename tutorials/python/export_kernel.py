"""Your own C++ kernels in your own pybind11 module.

my_extension.cpp defines a kernel and exports it in one line,
blocc::python::export_kernel(m, leaky_relu); CMake builds the module into
build/tutorials/python/ (tutorials/python/CMakeLists.txt).

Run: PYTHONPATH=build/python python3 tutorials/python/export_kernel.py [module dir]
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1
                else os.path.join(HERE, "..", "..", "build", "tutorials", "python"))

import blocc  # noqa: E402
import my_extension  # noqa: E402


def main():
    print(my_extension.leaky_relu)
    rng = np.random.default_rng()
    n = 65_537
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    grid = lambda meta: (blocc.cdiv(meta["n"], meta["BLOCK"]),)
    my_extension.leaky_relu[grid](x, out, n, slope=0.1, BLOCK=2048)
    x64 = x.astype(np.float64)
    want = np.where(x64 > 0, x64, np.float32(0.1) * x64)
    err = float(np.max(np.abs(out - want)))
    print(f"leaky_relu n={n}: max |err| {err:.3g}")
    ok = err <= 1e-7
    print("export_kernel: " + ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
