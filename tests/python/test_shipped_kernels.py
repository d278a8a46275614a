"""blocc.kernels (the tutorials' kernels) on numpy arrays against float64
references: odd sizes, poisoned outputs, every way of giving a grid."""

import pathlib

import numpy as np
import pytest

import blocc
from blocc.kernels import add, softmax
from conftest import poisoned


def test_every_tutorial_kernel_is_shipped():
    # A tutorial's kernel header (tutorials/NN-name/*.h) is included by
    # bindings/module/shipped_kernels.cpp, which exports its kernels.
    root = pathlib.Path(__file__).resolve().parents[2]
    shipped = (root / "bindings" / "module" / "shipped_kernels.cpp").read_text()
    headers = sorted(root.glob("tutorials/[0-9][0-9]-*/*.h"))
    assert headers
    for header in headers:
        include = f'#include "{header.parent.name}/{header.name}"'
        assert include in shipped, f"{header} is not shipped to Python"


def test_shipped_kernels_are_the_tutorials():
    assert blocc.kernels.__all__ == ["add", "softmax"]
    assert add.name == "add"
    assert add.definition_site.startswith("vector_add.h:")
    assert softmax.definition_site.startswith("fused_softmax.h:")
    assert [p[0] for p in add.params] == ["x", "y", "out", "n", "BLOCK"]
    assert add.params[0] == ("x", "pointer", "f32", "bl::Ptr<f32>")
    assert add.params[3] == ("n", "scalar", "i32", "bl::i32")
    assert add.params[4] == ("BLOCK", "constant", "i32", "bl::Const<i32>")
    assert repr(add).startswith("<blocc.Kernel add(x: bl::Ptr<f32>, y: bl::Ptr<f32>")


@pytest.mark.parametrize("n", [1, 2, 97, 1000, 1024, 4099, 98431])
@pytest.mark.parametrize("block", [128, 1024])
def test_add(rng, n, block):
    x = rng.uniform(-10, 10, n).astype(np.float32)
    y = rng.uniform(-10, 10, n).astype(np.float32)
    storage = poisoned(n + 64, np.float32)
    out = storage[:n]
    add[(blocc.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    # One float32 addition, correctly rounded: exactly the float64 sum
    # rounded to float32.
    want = (x.astype(np.float64) + y).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    assert np.isnan(storage[n:]).all(), "the kernel wrote past n"


def test_add_every_grid_form(rng):
    n = 5000
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    want = (x.astype(np.float64) + y).astype(np.float32)
    programs = blocc.cdiv(n, 256)
    seen_meta = []

    def grid(meta):
        seen_meta.append(meta)
        return (blocc.cdiv(meta["n"], meta["BLOCK"]),)

    for g in [(programs,), [programs], programs, (programs, 1, 1), grid,
              lambda meta: [blocc.cdiv(n, meta["BLOCK"])],
              lambda meta: np.int64(blocc.cdiv(n, meta["BLOCK"]))]:
        out = poisoned(n, np.float32)
        add[g](x, y, out, n, BLOCK=256)
        np.testing.assert_array_equal(out, want)
    # The meta-parameters are every argument by name, constants included.
    assert set(seen_meta[0]) == {"x", "y", "out", "n", "BLOCK"}
    assert seen_meta[0]["BLOCK"] == 256 and seen_meta[0]["x"] is x


def test_add_arguments_by_keyword_and_position(rng):
    n = 333
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    want = (x.astype(np.float64) + y).astype(np.float32)
    for args, kwargs in [((x, y, out := poisoned(n, np.float32), n, 128), {}),
                         ((), dict(x=x, y=y, out=(out2 := poisoned(n, np.float32)), n=n, BLOCK=128)),
                         ((x, y), dict(BLOCK=128, n=n, out=(out3 := poisoned(n, np.float32))))]:
        add[(3,)](*args, **kwargs)
    for o in (out, out2, out3):
        np.testing.assert_array_equal(o, want)


def test_add_on_the_interpreter_and_checked(rng):
    n = 257
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    want = (x.astype(np.float64) + y).astype(np.float32)
    for options in [dict(backend="interpreter"), dict(backend="cpu"),
                    dict(check=True), dict(check="races"), dict(check=False),
                    dict(num_warps=8, num_stages=2), dict(stream=None),
                    dict(stream=0)]:
        out = poisoned(n, np.float32)
        add[(blocc.cdiv(n, 64),)](x, y, out, n, BLOCK=64, **options)
        np.testing.assert_array_equal(out, want, err_msg=str(options))


def test_add_empty_grid_writes_nothing(rng):
    x, y = rng.standard_normal((2, 10), dtype=np.float32)
    out = poisoned(10, np.float32)
    add[(0,)](x, y, out, 10, BLOCK=16)
    assert np.isnan(out).all()


def float64_softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 13), (64, 781), (33, 1024), (5, 3001)])
@pytest.mark.parametrize("programs", [1, 4, 64])
def test_softmax(rng, rows, cols, programs):
    x = rng.uniform(-50, 50, (rows, cols)).astype(np.float32)
    out = poisoned((rows, cols), np.float32)
    softmax[(programs,)](out, x, cols, cols, rows, cols,
                         BLOCK=blocc.next_power_of_2(cols))
    want = float64_softmax(x)
    rel = np.abs(out - want) / np.maximum(want, 1e-30)
    assert rel.max() <= 1e-5


def test_softmax_row_strides_leave_the_padding_alone(rng):
    rows, cols, x_stride, out_stride = 9, 100, 128, 111
    storage = rng.uniform(-5, 5, (rows, x_stride)).astype(np.float32)
    out = poisoned((rows, out_stride), np.float32)
    softmax[(3,)](out, storage, x_stride, out_stride, rows, cols, BLOCK=128)
    rel = np.abs(out[:, :cols] - float64_softmax(storage[:, :cols]))
    assert rel.max() <= 1e-6
    assert np.isnan(out[:, cols:]).all(), "the kernel wrote past n_cols"
