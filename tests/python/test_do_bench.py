"""blocc.testing.do_bench, as triton.testing.do_bench."""

import time

import numpy as np
import pytest

import blocc
from blocc.kernels import add
from blocc.testing import do_bench


def sleeper(ms, calls):
    def fn():
        calls.append(1)
        time.sleep(ms / 1000)
    return fn


def test_times_a_known_duration():
    calls = []
    median = do_bench(sleeper(2, calls), warmup=5, rep=40, return_mode="median", flush=False)
    assert 2 <= median < 50
    # One compile run, five to estimate, warm-up and timed runs.
    assert len(calls) >= 1 + 5 + 1 + 1


def test_statistics_and_quantiles():
    fn = sleeper(1, [])
    times = do_bench(fn, warmup=2, rep=20, return_mode="all")
    assert isinstance(times, list) and len(times) >= 10 and min(times) >= 1
    q = do_bench(fn, warmup=2, rep=20, quantiles=[0.2, 0.5, 0.8])
    assert len(q) == 3 and q[0] <= q[1] <= q[2]
    single = do_bench(fn, warmup=2, rep=20, quantiles=[0.5])
    assert isinstance(single, float)
    for mode in ["min", "max", "mean", "median"]:
        assert do_bench(fn, warmup=2, rep=10, return_mode=mode) >= 1


def test_quantiles_interpolate_linearly():
    from blocc.testing import _quantile
    assert _quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert _quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == 2.0
    assert _quantile([1.0, 2.0], 1.0) == 2.0 and _quantile([7.0], 0.3) == 7.0


def test_a_kernel(rng):
    n = 1 << 16
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    out = np.empty_like(x)
    ms = do_bench(lambda: add[(blocc.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024),
                  warmup=2, rep=20)
    assert 0 < ms < 1000
    np.testing.assert_array_equal(out, (x.astype(np.float64) + y).astype(np.float32))


def test_grad_to_none_is_reset():
    class Tensor:
        grad = "stale"

    t = Tensor()
    seen = []
    do_bench(lambda: seen.append(t.grad), warmup=1, rep=1, grad_to_none=[t], flush=False)
    assert seen[-1] is None


@pytest.mark.parametrize("kwargs,match", [
    (dict(return_mode="average"), "return_mode='average'"),
    (dict(quantiles=[1.5]), r"quantiles=\[1.5\]"),
    (dict(device="tpu"), "device='tpu'; expected 'cpu', 'cuda' or 'cuda:N'"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(blocc.Error, match=match):
        do_bench(lambda: None, **kwargs)


def test_gpu_without_a_gpu_is_an_error():
    if blocc.cuda.is_available():
        pytest.skip("a GPU is present (tests/python/test_gpu.py times on it)")
    with pytest.raises(blocc.Error, match="device='cuda', but no GPU is usable"):
        do_bench(lambda: None, device="cuda")
