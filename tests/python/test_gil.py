"""The GIL is released while a kernel compiles and while a CPU kernel runs:
another Python thread makes progress meanwhile, and threads may launch at
once."""

import sys
import threading
import time

import numpy as np

import blocc
from blocc.kernels import add, softmax


def other_thread_ran_during(call):
    """Whether another Python thread ran (counted to 10,000) while `call()`
    was running, and the call's duration in seconds.

    The other thread waits on an event that this thread sets just before
    the call; it then needs the GIL. If the call holds the GIL, it gets it
    only after the call returns: the interpreter's switch interval is
    raised to 10 s meanwhile, so that it cannot take the GIL from this
    thread in the bytecodes between the event and the call either."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(10)
    go = threading.Event()
    finished = []

    def other():
        go.wait()
        count = 0
        while count < 10_000:
            count += 1
        finished.append(time.perf_counter())

    thread = threading.Thread(target=other, daemon=True)
    try:
        thread.start()
        time.sleep(0.05)  # lets it reach go.wait(), which holds no GIL
        go.set()
        start = time.perf_counter()
        call()
        end = time.perf_counter()
    finally:
        sys.setswitchinterval(interval)
    thread.join()
    return finished[0] < end, end - start


def test_gil_released_while_a_cpu_kernel_runs(test_library, monkeypatch):
    monkeypatch.setenv("BLOCC_NUM_THREADS", "1")
    spin = test_library.spin
    out = np.zeros(256, np.float32)
    # Iteration counts that are multiples of 16 share one specialization:
    # compile it, then size a run to about half a second.
    spin[(1,)](out, 16, BLOCK=256)
    start = time.perf_counter()
    spin[(1,)](out, 1 << 20, BLOCK=256)
    per_iteration = (time.perf_counter() - start) / (1 << 20)
    iterations = min(int(0.5 / per_iteration) // 16 * 16 + 16, 2**31 - 16)
    ran, seconds = other_thread_ran_during(lambda: spin[(1,)](out, iterations, BLOCK=256))
    assert seconds > 0.1
    assert ran, f"another thread did not run during a {seconds:.2f} s kernel"


def test_gil_released_while_compiling():
    # A block size no other test uses: tracing, then LLVM's optimization
    # of the softmax kernel (tens of milliseconds), during the call.
    block = 1 << int(np.random.default_rng().integers(13, 17))
    ran, seconds = other_thread_ran_during(
        lambda: softmax.asm(x_row_stride=3, out_row_stride=3, n_rows=3, n_cols=3,
                            BLOCK=block, target="cpu"))
    assert ran, f"another thread did not run during a {seconds:.3f} s compile"


def test_threads_launch_at_once(rng):
    n = 20_000
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    want = (x.astype(np.float64) + y).astype(np.float32)
    outs = [np.full(n, np.nan, np.float32) for _ in range(8)]
    errors = []

    def launch(out, block):
        try:
            for _ in range(5):
                add[(blocc.cdiv(n, block),)](x, y, out, n, BLOCK=block)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=launch, args=(out, 64 << (i % 4)))
               for i, out in enumerate(outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in outs:
        np.testing.assert_array_equal(out, want)
