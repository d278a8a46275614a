"""Every mistake a launch can make is a blocc.Error raised before the
kernel runs, naming the kernel and the argument, with nothing written."""

import re

import numpy as np
import pytest

import blocc
from blocc.kernels import add
from conftest import poisoned

N = 100


@pytest.fixture
def arrays(rng):
    x, y = rng.standard_normal((2, N), dtype=np.float32)
    return x, y, poisoned(N, np.float32)


def launch_fails(match, *args, grid=(1,), **kwargs):
    """Launches add and expects blocc.Error whose message matches."""
    with pytest.raises(blocc.Error, match=match) as error:
        add[grid](*args, **kwargs)
    return str(error.value)


def test_error_is_an_exception_class():
    assert issubclass(blocc.Error, Exception)
    assert blocc.Error.__module__ == "blocc"


def test_wrong_dtype(arrays):
    x, y, out = arrays
    message = launch_fails(re.escape(
        "kernel 'add', argument 2 'y' (bl::Ptr<f32>): expected f32 elements, "
        "got numpy.ndarray[float64]"), x, y.astype(np.float64), out, N, BLOCK=128)
    assert "bl::Ptr<f64>" in message
    assert np.isnan(out).all()


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint8, np.bool_])
def test_wrong_dtype_of_each_kind(arrays, dtype):
    x, y, out = arrays
    launch_fails("argument 1 'x'.*expected f32 elements", x.astype(dtype), y, out, N, BLOCK=128)


def test_unsupported_element_type(arrays):
    x, y, out = arrays
    launch_fails("argument 1 'x'.*complex64.* has elements blocc has no type for",
                 x.astype(np.complex64), y, out, N, BLOCK=128)


def test_non_contiguous(arrays):
    x, y, out = arrays
    launch_fails(r"argument 1 'x' \(bl::Ptr<f32>\): numpy.ndarray\[float32\] is not "
                 r"contiguous \(strides in bytes: \(8,\)\)", np.zeros(2 * N, np.float32)[::2],
                 y, out, N, BLOCK=128)
    m = np.zeros((10, 20), np.float32)
    launch_fails("argument 3 'out'.*not contiguous.*ascontiguousarray", x, y, m[:, :10], N, BLOCK=128)
    assert np.isnan(out).all()


def test_fortran_order_is_contiguous(rng):
    m = rng.standard_normal((20, 30), dtype=np.float32)
    f = np.asfortranarray(m)
    out = poisoned(f.size, np.float32)
    add[(1,)](f, f, out, f.size, BLOCK=1024)
    np.testing.assert_array_equal(out, 2 * f.ravel(order="K"))


def test_read_only_output(arrays):
    x, y, out = arrays
    out.flags.writeable = False
    launch_fails(re.escape(
        "kernel 'add', argument 3 'out' (bl::Ptr<f32>): numpy.ndarray[float32] is "
        "read-only, but the kernel writes through it"), x, y, out, N, BLOCK=128)
    assert np.isnan(out).all()


def test_read_only_inputs_are_fine(arrays):
    x, y, out = arrays
    x.flags.writeable = False
    add[(1,)](x, memoryview(y).toreadonly(), out, N, BLOCK=128)
    np.testing.assert_array_equal(out, (x.astype(np.float64) + y).astype(np.float32))


def test_too_many_arguments(arrays):
    x, y, out = arrays
    launch_fails(re.escape("kernel 'add' takes 5 arguments (add(x: bl::Ptr<f32>, "
                           "y: bl::Ptr<f32>, out: bl::Ptr<f32>, n: bl::i32, "
                           "BLOCK: bl::Const<i32>)), but 6 were given"),
                 x, y, out, N, 128, 7)


def test_missing_arguments(arrays):
    x, y, out = arrays
    launch_fails("missing argument 'n'$", x, y, out, BLOCK=128)
    launch_fails("missing arguments 'out', 'n', 'BLOCK'$", x, y)


def test_unknown_keyword(arrays):
    x, y, out = arrays
    launch_fails("kernel 'add' has no parameter named 'block'", x, y, out, N, block=128)


def test_argument_given_twice(arrays):
    x, y, out = arrays
    launch_fails("argument 1 'x' .* is given twice, by position and by keyword",
                 x, y, out, N, 128, x=x)


def test_scalar_of_the_wrong_kind(arrays):
    x, y, out = arrays
    launch_fails(r"argument 4 'n' \(bl::i32\): expected a scalar of type i32 \(an int, "
                 r"float or bool\), got str", x, y, out, "100", BLOCK=128)
    launch_fails(r"argument 4 'n' \(bl::i32\): expected a scalar .* got numpy.ndarray",
                 x, y, out, np.arange(3), BLOCK=128)
    launch_fails(r"argument 5 'BLOCK' \(bl::Const<i32>\): expected a compile-time constant",
                 x, y, out, N, BLOCK=None)
    launch_fails(r"argument 4 'n' \(bl::i32\): expected an integer, got the float 100",
                 x, y, out, 100.0, BLOCK=128)


def test_scalar_out_of_range(arrays):
    x, y, out = arrays
    launch_fails(r"argument 4 'n' \(bl::i32\): the value 4294967296 does not fit in i32",
                 x, y, out, 2**32, BLOCK=128)
    launch_fails(r"argument 4 'n' \(bl::i32\): the value 1180591620717411303424 does "
                 r"not fit in 64 bits", x, y, out, 2**70, BLOCK=128)


def test_array_expected(arrays):
    x, y, out = arrays
    launch_fails(r"argument 1 'x' \(bl::Ptr<f32>\): expected an array of f32 \(a numpy "
                 r"array or torch tensor, or any object with the buffer protocol, "
                 r"__dlpack__ or __cuda_array_interface__\), got list",
                 [1.0] * N, y, out, N, BLOCK=128)
    launch_fails("argument 2 'y' .* got float", x, 1.5, out, N, BLOCK=128)


@pytest.mark.parametrize("grid,match", [
    (("a",), "dimension 0 is 'a'"),
    ((1, 2, 3, 4), "got 4 dimensions"),
    ((), "got 0 dimensions"),
    ("1", "got '1'"),
    (lambda meta: None, "got None"),
    ((2**70,), "dimension 0 does not fit in 64 bits"),
])
def test_bad_grid(arrays, grid, match):
    x, y, out = arrays
    message = launch_fails(match, x, y, out, N, BLOCK=128, grid=grid)
    assert message.startswith("kernel 'add': the grid must be a tuple of 1 to 3 ints")
    assert np.isnan(out).all()


def test_negative_grid(arrays):
    x, y, out = arrays
    launch_fails("kernel 'add': grid dimension 1 is negative", x, y, out, N, BLOCK=128,
                 grid=(1, -2))


def test_grid_callable_raising_propagates(arrays):
    x, y, out = arrays

    def grid(meta):
        raise KeyError("BLOCK_SIZE")

    with pytest.raises(KeyError):
        add[grid](x, y, out, N, BLOCK=128)


@pytest.mark.parametrize("options,match", [
    (dict(num_warps=3), "num_warps must be a power of two, got 3"),
    (dict(num_warps="4"), "num_warps='4': expected an int"),
    (dict(backend="tpu"), "backend='tpu' names no backend"),
    (dict(check="maybe"), "check='maybe' is not a check mode"),
    (dict(stream="default"), "stream='default': expected a CUDA stream handle"),
    (dict(target="cpu"), "no parameter named 'target'.*option of launches, not of kernel.asm"),
])
def test_bad_options(arrays, options, match):
    x, y, out = arrays
    launch_fails(match, x, y, out, N, BLOCK=128, **options)
    assert np.isnan(out).all()


def test_bad_block_is_a_trace_error(arrays):
    x, y, out = arrays
    launch_fails("power of two", x, y, out, N, BLOCK=100)
    assert np.isnan(out).all()


def test_bad_environment(arrays, monkeypatch):
    x, y, out = arrays
    monkeypatch.setenv("BLOCC_CHECK", "sometimes")
    launch_fails("BLOCC_CHECK='sometimes' is not a check mode", x, y, out, N, BLOCK=128)
    monkeypatch.setenv("BLOCC_CHECK", "0")
    monkeypatch.setenv("BLOCC_BACKEND", "tpu")
    launch_fails("BLOCC_BACKEND='tpu' names no backend", x, y, out, N, BLOCK=128)
    assert np.isnan(out).all()


def test_kernel_called_without_grid(arrays):
    with pytest.raises(blocc.Error, match=re.escape("launched with a grid: add[grid](*args)")):
        add(*arrays, N, BLOCK=128)
