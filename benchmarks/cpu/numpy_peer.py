"""The numpy side of benchmarks/cpu (run by numpy_peer.cpp, one process per
benchmark row).

    python3 numpy_peer.py OP DIR REPS WARMUP

OP is `add` (DIR/x.f32 + DIR/y.f32, elementwise) or `matmul` (DIR/a.f32 @
DIR/b.f32, shapes in DIR/shape.txt as "m n k"). Inputs are raw float32
files written by the benchmark; the result is written to DIR/out.f32 so
that the benchmark can check blocc's result against numpy's. Prints one
JSON line: median seconds of REPS timed repetitions after WARMUP untimed
ones, numpy's version and BLAS. Thread counts come from the environment
(OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), which the benchmark sets.
"""
import json
import os
import sys
import time

import numpy as np


def blas_name():
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f'{blas.get("name", "?")} {blas.get("version", "")}'.strip()
    except Exception:  # older numpy: no dict mode
        return "unknown BLAS"


def main():
    op, folder, reps, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    load = lambda name: np.fromfile(os.path.join(folder, name), dtype=np.float32)
    if op == "add":
        x, y = load("x.f32"), load("y.f32")
        out = np.empty_like(x)
        run = lambda: np.add(x, y, out=out)
    elif op == "matmul":
        with open(os.path.join(folder, "shape.txt")) as f:
            m, n, k = (int(v) for v in f.read().split())
        a, b = load("a.f32").reshape(m, k), load("b.f32").reshape(k, n)
        out = np.empty((m, n), dtype=np.float32)
        run = lambda: np.matmul(a, b, out=out)
    else:
        sys.exit(f"numpy_peer.py: unknown op {op!r}")
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    out.tofile(os.path.join(folder, "out.f32"))
    times.sort()
    median = (times[(reps - 1) // 2] + times[reps // 2]) / 2
    print(json.dumps({"median_s": median, "numpy": np.__version__, "blas": blas_name()}))


if __name__ == "__main__":
    main()
