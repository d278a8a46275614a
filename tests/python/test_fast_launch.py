"""The launch fast path (bindings/module/fast_arguments.h) takes numpy
arrays, torch tensors, None and exact ints, floats and bools; any other
argument, or one that fails its cheap checks, sends the launch down the
general path, which reports mistakes. Both paths must compute the same
results, and a mistake must read the same whichever path saw it first."""

import importlib.util
import re

import numpy as np
import pytest

import blocc
from blocc.kernels import add
from conftest import poisoned

N = 100

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="PyTorch is not installed")


@pytest.fixture
def inputs(rng):
    x, y = rng.standard_normal((2, N), dtype=np.float32)
    return x, y


def expected(x, y):
    return (x.astype(np.float64) + y).astype(np.float32)


def test_fast_path_and_fallback_compute_the_same(inputs):
    x, y = inputs
    fast = poisoned(N, np.float32)
    add[(1,)](x, y, fast, N, BLOCK=128)  # numpy arrays and an int: fast
    # A numpy integer, a memoryview: the general path.
    general = poisoned(N, np.float32)
    add[(1,)](memoryview(x), y, general, np.int32(N), BLOCK=np.int64(128))
    np.testing.assert_array_equal(fast, expected(x, y))
    np.testing.assert_array_equal(general, fast)


def test_fast_path_takes_none_bools_and_floats(test_library):
    out = poisoned(6, np.float64)
    test_library.store_scalars[(1,)](out, -7, 0.5, True, -2.25, 3, 1.5)
    assert out.tolist() == [-7.0, 0.5, 1.0, -2.25, 3.0, 1.5]
    # None is a null pointer, which a launch of no element never reads.
    empty = poisoned(4, np.float32)
    test_library.copy_f32[(1,)](None, empty, 0, BLOCK=4)
    assert np.isnan(empty).all()


@pytest.mark.parametrize("bad, match", [
    (lambda x, y, out: (x, y.astype(np.float64), out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): expected f32 elements, "
     "got numpy.ndarray[float64]"),
    (lambda x, y, out: (x, np.repeat(y, 2)[::2], out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): numpy.ndarray[float32] is "
     "not contiguous (strides in bytes: (8,))"),
    (lambda x, y, out: (x, y, np.frombuffer(out.tobytes(), np.float32)),
     "kernel 'add', argument 3 'out' (bl::Ptr<f32>): numpy.ndarray[float32] "
     "is read-only, but the kernel writes through it"),
    (lambda x, y, out: (x, 1.5, out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): expected an array of f32"),
])
def test_mistakes_read_the_same_on_either_path(inputs, bad, match):
    x, y = inputs
    out = poisoned(N, np.float32)
    with pytest.raises(blocc.Error, match=re.escape(match)):
        add[(1,)](*bad(x, y, out), N, BLOCK=128)
    assert np.isnan(out).all()
    # The same mistake after an argument only the general path reads.
    out = poisoned(N, np.float32)
    first, *rest = bad(x, y, out)
    with pytest.raises(blocc.Error, match=re.escape(match)):
        add[(1,)](memoryview(first), *rest, N, BLOCK=128)


def test_scalar_mistakes_on_the_fast_path(inputs):
    x, y = inputs
    out = poisoned(N, np.float32)
    with pytest.raises(blocc.Error, match=re.escape(
            "argument 4 'n' (bl::i32): the value 1099511627776 does not fit "
            "in i32")):
        add[(1,)](x, y, out, 2**40, BLOCK=128)
    with pytest.raises(blocc.Error, match=re.escape(
            "argument 4 'n' (bl::i32): expected an integer, got the float "
            "100.5")):
        add[(1,)](x, y, out, 100.5, BLOCK=128)
    with pytest.raises(blocc.Error, match="argument 4 'n'.*does not fit in 64 bits"):
        add[(1,)](x, y, out, 2**70, BLOCK=128)
    assert np.isnan(out).all()


@needs_torch
def test_torch_cpu_tensors_on_either_path(inputs):
    import torch
    x, y = (torch.from_numpy(a) for a in inputs)
    out = torch.full((N,), float("nan"))
    add[(1,)](x, y, out, N, BLOCK=128)  # fast
    general = torch.full((N,), float("nan"))
    add[(1,)](x, y, general, np.int32(N), BLOCK=128)  # a numpy scalar: general
    expect = torch.from_numpy(expected(*inputs))
    assert torch.equal(out, expect)
    assert torch.equal(general, expect)
    # Tensors requiring gradients are read as Triton reads them.
    out.fill_(float("nan"))
    add[(1,)](x.clone().requires_grad_(), y, out, N, BLOCK=128)
    assert torch.equal(out, expect)


@needs_torch
@pytest.mark.parametrize("bad, match", [
    (lambda x, y, out: (x, y.double(), out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): expected f32 elements, "
     "got torch.Tensor[float64]"),
    (lambda x, y, out: (x, y.repeat(2)[::2], out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): torch.Tensor[float32] is "
     "not contiguous (strides in bytes: (8,))"),
    (lambda x, y, out: (x, y.to("meta"), out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): torch.Tensor[float32] is "
     "on device 'meta'; blocc takes CPU and CUDA tensors"),
    (lambda x, y, out: (x.numpy(), y.double().numpy(), out),
     "kernel 'add', argument 2 'y' (bl::Ptr<f32>): expected f32 elements, "
     "got numpy.ndarray[float64]"),
])
def test_torch_mistakes_name_the_argument(inputs, bad, match):
    import torch
    x, y = (torch.from_numpy(a) for a in inputs)
    out = torch.full((N,), float("nan"))
    with pytest.raises(blocc.Error, match=re.escape(match)):
        add[(1,)](*bad(x, y, out), N, BLOCK=128)
    assert out.isnan().all()
