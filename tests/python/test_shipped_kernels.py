"""blocc.kernels (the tutorials' kernels) on numpy arrays against float64
references: odd sizes, poisoned outputs, every way of giving a grid."""

import importlib.util
import pathlib

import numpy as np
import pytest

import blocc
from blocc.kernels import (add, attention, attention_bwd_dkdv, attention_bwd_dq,
                           attention_bwd_preprocess, attention_fwd_lse,
                           attention_ws, gelu,
                           gelu_f16, layer_norm_bwd_dwdb, layer_norm_bwd_dx,
                           layer_norm_fwd, layer_norm_fwd_row, matmul,
                           matmul_fp8,
                           matmul_persistent, matmul_persistent_bf16,
                           matmul_persistent_tma, matmul_tma, partial_sums, rope, seeded_dropout,
                           seeded_dropout4x, softmax)
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
    assert blocc.kernels.__all__ == [
        "add", "attention", "attention_bwd_dkdv", "attention_bwd_dq",
        "attention_bwd_preprocess", "attention_fwd_lse", "attention_ws",
        "gelu", "gelu_f16",
        "layer_norm_bwd_dwdb", "layer_norm_bwd_dx", "layer_norm_fwd",
        "layer_norm_fwd_row", "matmul",
        "matmul_bf16", "matmul_fp8", "matmul_persistent",
        "matmul_persistent_bf16", "matmul_persistent_tma", "matmul_tma",
        "matmul_tma_bf16", "matmul_tma_ws", "matmul_tma_ws_bf16",
        "partial_sums", "rope",
        "seeded_dropout", "seeded_dropout4x", "softmax"]
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


@pytest.mark.parametrize("n,p", [(1, 0.5), (17, 0.3), (1031, 0.9), (98431, 0.2)])
@pytest.mark.parametrize("kernel", [seeded_dropout, seeded_dropout4x])
def test_seeded_dropout(rng, n, p, kernel):
    # The exact mask (against a host Philox) is checked by tutorial 04 in
    # C++ (both kernels) and in Python; here what a user relies on without
    # one.
    p = np.float32(p)
    x = (rng.uniform(0.25, 2, n) * rng.choice([-1, 1], n)).astype(np.float32)
    seed = int(rng.integers(-2**31, 2**31))

    def run(block, seed=seed):
        storage = poisoned(n + 64, np.float32)
        kernel[(blocc.cdiv(n, block),)](x, storage, n, p, seed, BLOCK=block)
        assert np.isnan(storage[n:]).all(), "the kernel wrote past n"
        return storage[:n]

    out = run(1024)
    kept = out != 0
    # Kept elements are x / (1 - p): two float32 roundings.
    scaled = x.astype(np.float64) / (1 - np.float64(p))
    np.testing.assert_allclose(out[kept], scaled[kept], rtol=2**-23, atol=0)
    # The mask depends on (seed, offset) only: not on the blocking.
    np.testing.assert_array_equal(run(128), out)
    if n > 1000:
        # Binomial(n, 1 - p) kept: six standard deviations.
        assert abs(kept.sum() - n * (1 - p)) <= 6 * np.sqrt(n * p * (1 - p))
        other = run(1024, seed ^ 0x5BD1E995) != 0
        assert np.mean(other != kept) > p * (1 - p)


def float64_layer_norm(x, w, b, dy, eps):
    x, w, b, dy = (a.astype(np.float64) for a in (x, w, b, dy))
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    wdy = w * dy
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * rstd
    return (xhat * w + b, mean[:, 0], rstd[:, 0], dx, (dy * xhat).sum(axis=0),
            dy.sum(axis=0))


@pytest.mark.parametrize("rows,n", [(1, 1), (7, 13), (64, 781), (31, 3001)])
@pytest.mark.parametrize("programs", [1, 5])
def test_layer_norm_forward_and_backward(rng, rows, n, programs):
    eps = np.float32(1e-5)
    x = rng.uniform(2, 4, (rows, n)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    dy = rng.uniform(-1, 1, (rows, n)).astype(np.float32)
    y, mean, rstd = (poisoned(s, np.float32) for s in ((rows, n), rows, rows))
    layer_norm_fwd[(rows,)](x, y, w, b, mean, rstd, n, n, eps,
                            BLOCK=min(blocc.next_power_of_2(n), 256))
    programs = min(programs, rows)
    dx = poisoned((rows, n), np.float32)
    partial_dw, partial_db = (poisoned((programs, n), np.float32) for _ in range(2))
    dw, db = poisoned(n, np.float32), poisoned(n, np.float32)
    layer_norm_bwd_dx[(programs,)](dx, dy, partial_dw, partial_db, x, w, mean, rstd,
                                   n, rows, n, BLOCK=blocc.next_power_of_2(n))
    layer_norm_bwd_dwdb[(blocc.cdiv(n, 64),)](partial_dw, partial_db, dw, db, programs, n,
                                             BLOCK_M=8, BLOCK_N=64)
    want = float64_layer_norm(x, w, b, dy, eps)
    # Float32 sums of up to 3001 terms (tutorial 05 derives these bounds).
    for got, expected, rtol, atol in zip((y, mean, rstd, dx, dw, db), want,
                                         (0, 2e-5, 2e-5, 0, 0, 0),
                                         (6e-5, 0, 0, 6e-5, 1e-4 * np.sqrt(rows),
                                          1e-4 * np.sqrt(rows))):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def float64_gelu(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("n", [1, 13, 1021, 98431])
@pytest.mark.parametrize("kernel,dtype,rtol,atol", [
    (gelu, np.float32, 2e-6, 3e-7),
    # The float32 result rounded once to half.
    (gelu_f16, np.float16, 2e-6 + 2**-11, 3e-7 + 2**-24),
])
def test_gelu(rng, n, kernel, dtype, rtol, atol):
    x = rng.uniform(-6, 6, n).astype(dtype)
    storage = poisoned(n + 64, dtype)
    kernel[(blocc.cdiv(n, 256),)](x, storage, n, BLOCK=256)
    np.testing.assert_allclose(storage[:n].astype(np.float64), float64_gelu(x),
                               rtol=rtol, atol=atol)
    assert np.isnan(storage[n:]).all(), "the kernel wrote past n"


@pytest.mark.parametrize("n", [1, 1021, 1000003])
@pytest.mark.parametrize("programs,block", [(1, 1024), (7, 256), (64, 1024)])
def test_partial_sums_two_stages_give_the_mean(rng, n, programs, block):
    x = rng.uniform(-1, 3, n).astype(np.float32)
    programs = min(programs, blocc.cdiv(n, block))
    partials, mean = poisoned(programs, np.float32), poisoned(1, np.float32)
    partial_sums[(programs,)](x, partials, n, 1.0, BLOCK=block)
    # Program i sums the blocks i, i + programs, ...
    blocks = np.zeros(blocc.cdiv(n, block) * block)
    blocks[:n] = x
    want = blocks.reshape(-1, block).sum(axis=1)
    want = np.array([want[i::programs].sum() for i in range(programs)])
    bound = np.array([np.abs(blocks.reshape(-1, block)[i::programs]).sum()
                      for i in range(programs)])
    # Rounding errors of random sign: see tutorial 09.
    chain = blocc.cdiv(n, programs * block) + block
    np.testing.assert_array_less(np.abs(partials - want),
                                 8 * np.sqrt(chain) * 2**-24 * bound + 1e-30)
    partial_sums[(1,)](partials, mean, programs, np.float32(1 / n), BLOCK=block)
    assert abs(mean[0] - x.astype(np.float64).mean()) <= (
        2 * 2**-24 * abs(x.mean()) + 8 * np.sqrt(chain + block) * 2**-24 * np.abs(x).mean())


def assert_matmul_within_rounding(c, a, b):
    """c is a @ b in float32 from half (or bfloat16) a and b: exact
    products, K + 1 float32 roundings of the partial sums."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a) @ np.abs(b)
    assert np.all(np.abs(c - a @ b) <= (a.shape[1] + 1) * 2.0**-24 * scale + 1e-30)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (17, 31, 13), (97, 130, 67),
                                   (128, 64, 256)])
def test_matmul(rng, m, n, k):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = poisoned((m, n), np.float32)
    block_m, block_n = 32, 32
    grid = lambda meta: (blocc.cdiv(m, meta["BLOCK_M"]) *
                         blocc.cdiv(n, meta["BLOCK_N"]),)
    matmul[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=block_m,
                 BLOCK_N=block_n, BLOCK_K=32, GROUP_M=8)
    assert_matmul_within_rounding(c, a, b)


# The persistent matmul on any grid: program p computes the tiles p,
# p + programs, ... (of 32 x 32 here). One program for all the tiles,
# counts that do not divide the tiles (20 of them at 97 x 130; 21 at
# 200 x 70, in groups of GROUP_M=2 tile rows of which the last has one),
# and more programs than tiles (those past the last tile compute nothing).
@pytest.mark.parametrize("m,n,k,programs,backend", [
    (1, 1, 1, 4, "cpu"), (17, 31, 13, 1, "cpu"), (97, 130, 67, 3, "cpu"),
    (97, 130, 67, 7, "cpu"), (128, 64, 256, 2, "cpu"), (200, 70, 40, 5, "cpu"),
    (97, 130, 67, 19, "cpu"), (33, 65, 30, 4, "interpreter")])
@pytest.mark.parametrize("kernel", [matmul_persistent, matmul_persistent_tma],
                         ids=["pointers", "descriptors"])
def test_matmul_persistent(rng, m, n, k, programs, backend, kernel):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = poisoned((m, n), np.float32)
    kernel[(programs,)](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=32,
                        BLOCK_N=32, BLOCK_K=32, GROUP_M=2 if m == 200 else 8,
                        backend=backend)
    assert_matmul_within_rounding(c, a, b)


def test_matmul_persistent_on_strided_views(rng):
    # A and B column-major, C the first n columns of rows n + 3 long:
    # every stride is the caller's, and nothing past C's columns is written.
    m, n, k = 45, 70, 100
    a = np.asfortranarray(rng.uniform(-1, 1, (m, k)).astype(np.float16))
    b = np.asfortranarray(rng.uniform(-1, 1, (k, n)).astype(np.float16))
    storage = poisoned((m, n + 3), np.float32)
    matmul_persistent[(3,)](a, b, storage, m, n, k, 1, m, 1, k, n + 3, 1,
                            BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8)
    assert_matmul_within_rounding(storage[:, :n], a, b)
    assert np.isnan(storage[:, n:]).all(), "the kernel wrote past N"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="needs torch")
def test_matmul_persistent_bf16_on_torch_tensors(rng):
    import torch
    m, n, k = 97, 130, 67
    a = torch.from_numpy(rng.uniform(-1, 1, (m, k))).to(torch.bfloat16)
    b = torch.from_numpy(rng.uniform(-1, 1, (k, n))).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"))
    matmul_persistent_bf16[(3,)](a, b, c, m, n, k, k, 1, n, 1, n, 1,
                                 BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8)
    assert_matmul_within_rounding(c.numpy(), a.double().numpy(),
                                  b.double().numpy())


# e4m3 (1 sign bit, 4 exponent bits of bias 7, 3 mantissa bits; S.1111.111
# is NaN) has no numpy dtype: the kernel takes its bytes as uint8. The
# value of each byte, from its fields.
_BYTES = np.arange(256)
_E, _M = (_BYTES >> 3) & 15, (_BYTES & 7).astype(np.float64)
E4M3 = np.where(_E == 0, np.ldexp(_M, -9), np.ldexp(8 + _M, _E - 10))
E4M3 = np.where(_BYTES & 0x80, -E4M3, E4M3)
E4M3[(_BYTES & 0x7f) == 0x7f] = np.nan


def to_e4m3(x):
    """The e4m3 bytes nearest x, ties to an even mantissa, saturated at
    448 (the largest finite value)."""
    table = E4M3[:0x7f]  # bytes 0 to 0x7e: the non-negative numbers, increasing
    magnitude = np.minimum(np.abs(x), 448.0)
    above = np.searchsorted(table, magnitude)
    below = np.maximum(above - 1, 0)
    to_below, to_above = magnitude - table[below], table[above] - magnitude
    code = np.where((to_below < to_above) |
                    ((to_below == to_above) & (below % 2 == 0)), below, above)
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def quantize_e4m3(x):
    """x as e4m3 bytes and one float32 scale, amax / 448 (torch._scaled_mm's
    per-tensor scaling): x ~ scale * E4M3[bytes]."""
    scale = np.float32(np.abs(x).max() / 448) if np.any(x) else np.float32(1)
    return to_e4m3(x / np.float64(scale)), scale


def test_e4m3_rounding():
    # Every value rounds to itself; midpoints go to the even mantissa; past
    # 448 saturates; below half the smallest subnormal (2^-9) is zero.
    finite = ~np.isnan(E4M3)
    np.testing.assert_array_equal(E4M3[to_e4m3(E4M3[finite])], E4M3[finite])
    np.testing.assert_array_equal(
        to_e4m3(np.array([1 + 2**-4, 1 + 3 * 2**-4, 3 * 2**-10, 460.0, -1e6,
                          2**-11, -(2**-11)])),
        [0x38, 0x3a, 0x02, 0x7e, 0xfe, 0x00, 0x80])


@pytest.mark.parametrize("m,n,k,backend", [
    (1, 1, 1, "cpu"), (17, 31, 13, "cpu"), (97, 130, 67, "cpu"),
    (64, 128, 256, "cpu"), (17, 31, 13, "interpreter"),
    (33, 20, 70, "interpreter")])
def test_matmul_fp8(rng, m, n, k, backend):
    # Different ranges, so that each scale counts.
    x = rng.uniform(-4, 4, (m, k)).astype(np.float32)
    y = rng.uniform(-1 / 16, 1 / 16, (k, n)).astype(np.float32)
    (a, scale_a), (b, scale_b) = quantize_e4m3(x), quantize_e4m3(y)
    c = poisoned((m, n), np.float32)
    grid = lambda meta: (blocc.cdiv(m, meta["BLOCK_M"]) *
                         blocc.cdiv(n, meta["BLOCK_N"]),)
    matmul_fp8[grid](a, b, c, scale_a, scale_b, m, n, k, k, 1, n, 1, n, 1,
                     BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8,
                     backend=backend)
    qa, qb = E4M3[a], E4M3[b]
    scale = np.float64(scale_a) * np.float64(scale_b)
    # Products of e4m3 values are exact in float32: K + 1 roundings of the
    # sums, two of the scaling (scale_a * scale_b, then its product with
    # the sum), and one more for the second-order terms.
    rounding = (k + 4) * 2.0**-24 * scale * (np.abs(qa) @ np.abs(qb))
    assert np.all(np.abs(c - scale * (qa @ qb)) <= rounding)
    # Against the unquantized inputs: each within 2^-4 of itself (half a
    # unit of 3 mantissa bits), or 2^-10 scale below e4m3's smallest normal.
    ex = np.maximum(2.0**-4 * np.abs(x), 2.0**-10 * np.float64(scale_a))
    ey = np.maximum(2.0**-4 * np.abs(y), 2.0**-10 * np.float64(scale_b))
    quantization = ex @ np.abs(y) + np.abs(x) @ ey + ex @ ey
    want = x.astype(np.float64) @ y.astype(np.float64)
    assert np.all(np.abs(c - want) <= quantization + rounding)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="needs torch")
def test_matmul_fp8_on_torch_float8_tensors(rng):
    import torch
    m, n, k = 45, 70, 100
    x = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    y = rng.uniform(-3, 3, (k, n)).astype(np.float32)
    scale_a, scale_b = (np.float32(np.abs(v).max() / 448) for v in (x, y))
    # torch rounds float32 to float8_e4m3fn as to_e4m3 does; a kernel takes
    # such a tensor through a uint8 view of it (no copy).
    xs, ys = x / scale_a, y / scale_b  # float32, as torch divides
    a8 = torch.from_numpy(xs).to(torch.float8_e4m3fn)
    b8 = torch.from_numpy(ys).to(torch.float8_e4m3fn)
    np.testing.assert_array_equal(a8.view(torch.uint8).numpy(), to_e4m3(xs))
    np.testing.assert_array_equal(b8.view(torch.uint8).numpy(), to_e4m3(ys))
    c = torch.full((m, n), float("nan"))
    grid = (blocc.cdiv(m, 32) * blocc.cdiv(n, 64),)
    matmul_fp8[grid](a8.view(torch.uint8), b8.view(torch.uint8), c,
                     scale_a, scale_b, m, n, k, k, 1, n, 1, n, 1,
                     BLOCK_M=32, BLOCK_N=64, BLOCK_K=64, GROUP_M=4)
    qa = a8.to(torch.float64).numpy()
    qb = b8.to(torch.float64).numpy()
    scale = np.float64(scale_a) * np.float64(scale_b)
    rounding = (k + 4) * 2.0**-24 * scale * (np.abs(qa) @ np.abs(qb))
    assert np.all(np.abs(c.numpy() - scale * (qa @ qb)) <= rounding)


@pytest.mark.parametrize("batch,seq,heads,dim", [(1, 1, 1, 2), (1, 7, 3, 6),
                                                 (2, 5, 5, 64), (3, 13, 2, 130)])
def test_rope_forward_backward_in_place(rng, batch, seq, heads, dim):
    half = dim // 2
    x = rng.uniform(-2, 2, (batch, seq, heads, dim)).astype(np.float32)
    theta = np.arange(seq)[:, None] * 10000.0 ** (-2.0 * np.arange(half) / dim)
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    block = 1 << max(0, (half - 1).bit_length())
    grid = (batch * seq, blocc.cdiv(heads, 4))
    q = x.copy()
    rope[grid](q, cos, sin, seq, heads, dim, GROUP=4, BLOCK=block,
               BACKWARD=False)
    x1, x2 = x[..., :half].astype(np.float64), x[..., half:].astype(np.float64)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    want = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    # Two float32 products and a sum: a few roundings of the larger term.
    bound = 4 * 2.0**-24 * np.concatenate(
        [np.abs(x1 * c) + np.abs(x2 * s), np.abs(x2 * c) + np.abs(x1 * s)], -1)
    assert np.all(np.abs(q - want) <= bound)
    rope[grid](q, cos, sin, seq, heads, dim, GROUP=4, BLOCK=block,
               BACKWARD=True)
    pair = np.concatenate([x[..., half:], x[..., :half]], axis=-1)
    assert np.all(np.abs(q - x) <= 12 * 2.0**-24 * (np.abs(x) + np.abs(pair)))


@pytest.mark.parametrize("heads,seq,dim", [(1, 1, 16), (2, 17, 16),
                                          (3, 100, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention(rng, heads, seq, dim, causal):
    q, k, v = (rng.uniform(-1, 1, (heads, seq, dim)).astype(np.float16)
               for _ in range(3))
    out = poisoned((heads, seq, dim), np.float16)
    scale = 1 / np.sqrt(dim)
    # attention_ws reads the unmasked blocks through descriptors over all
    # heads' rows (heads * seq of them), its blocks' products in order or
    # overlapped with the next block's softmax; the same result.
    outs_ws = [poisoned((heads, seq, dim), np.float16) for _ in range(2)]
    attention[(blocc.cdiv(seq, 32), heads)](
        q, k, v, out, seq, scale, HEAD_DIM=dim, BLOCK_M=32, BLOCK_N=32,
        CAUSAL=causal)
    for overlap, out_ws in zip((False, True), outs_ws):
        attention_ws[(blocc.cdiv(seq, 32), heads)](
            q, k, v, out_ws, seq, heads * seq, scale, HEAD_DIM=dim,
            BLOCK_M=32, BLOCK_N=32, CAUSAL=causal, OVERLAP=overlap)
    s = np.einsum("hid,hjd->hij", q.astype(np.float64), k.astype(np.float64))
    s *= scale
    if causal:
        s = np.where(np.tri(seq, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    # Probabilities and the output rounded to half: a few 2^-11.
    for got in (out, *outs_ws):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=4e-3,
                                   atol=2e-3)


def float64_attention_backward(q, k, v, dout, scale, causal, out=None):
    """out, lse and the gradients dq, dk, dv of softmax(Q K^T scale) V at
    dout in float64, each gradient with its error bound for the kernels.
    delta is taken from `out` where given (the forward kernel's, as the
    backward kernels are given it). The bound is tutorial 06's
    (float64_gradients in main.cpp): half's rounding of P and dS, float32
    sums of dim exact products in dP and delta, twice for the other
    float32 effects, plus the final rounding to half."""
    q, k, v, dout = (a.astype(np.float64) for a in (q, k, v, dout))
    seq, dim = q.shape[1], q.shape[2]
    s = np.einsum("hid,hjd->hij", q, k) * scale
    if causal:
        s = np.where(np.tri(seq, dtype=bool), s, -np.inf)
    lse = np.logaddexp.reduce(s, axis=-1)
    p = np.exp(s - lse[..., None])
    exact_out = p @ v
    out = exact_out if out is None else out.astype(np.float64)
    dp = dout @ v.transpose(0, 2, 1)
    delta = (dout * out).sum(-1)
    ds = p * (dp - delta[..., None])
    u, tiny = 2.0 ** -11, 2.0 ** -25
    visible = np.isfinite(s)
    sums = np.abs(dout) @ np.abs(v).transpose(0, 2, 1) + (
        np.abs(dout * out).sum(-1)[..., None])
    ds_error = np.where(visible, u * np.abs(ds) + tiny + p * 2.0**-24 * dim * sums, 0)
    p_error = np.where(visible, u * p + tiny, 0)
    grads = {"dq": (scale * ds @ k, scale * ds_error @ np.abs(k)),
             "dk": (scale * ds.transpose(0, 2, 1) @ q,
                    scale * ds_error.transpose(0, 2, 1) @ np.abs(q)),
             "dv": (p.transpose(0, 2, 1) @ dout,
                    p_error.transpose(0, 2, 1) @ np.abs(dout))}
    return exact_out, lse, {name: (want, 2 * error + u * np.abs(want) + tiny)
                            for name, (want, error) in grads.items()}


@pytest.mark.parametrize("heads,seq,dim", [(1, 1, 64), (2, 37, 64),
                                          (2, 83, 128)])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward(rng, heads, seq, dim, causal):
    q, k, v, dout = (rng.uniform(-1, 1, (heads, seq, dim)).astype(np.float16)
                     for _ in range(4))
    scale = 1 / np.sqrt(dim)
    out = poisoned((heads, seq, dim), np.float16)
    lse, delta = poisoned((heads, seq), np.float32), poisoned((heads, seq), np.float32)
    dq, dk, dv = (poisoned((heads, seq, dim), np.float16) for _ in range(3))
    meta = dict(HEAD_DIM=dim, CAUSAL=causal)
    attention_fwd_lse[(blocc.cdiv(seq, 32), heads)](
        q, k, v, out, lse, seq, scale, BLOCK_M=32, BLOCK_N=32, **meta)
    attention_bwd_preprocess[(blocc.cdiv(heads * seq, 16),)](
        out, dout, delta, heads * seq, HEAD_DIM=dim, BLOCK_M=16)
    # Blocks of keys and queries of different sizes: the causal walks must
    # find the diagonal blocks of either.
    attention_bwd_dkdv[(blocc.cdiv(seq, 32), heads)](
        q, k, v, dout, lse, delta, dk, dv, seq, scale, BLOCK_M=16, BLOCK_N=32,
        **meta)
    attention_bwd_dq[(blocc.cdiv(seq, 32), heads)](
        q, k, v, dout, lse, delta, dq, seq, scale, BLOCK_M=32, BLOCK_N=16,
        **meta)
    want_out, want_lse, grads = float64_attention_backward(q, k, v, dout, scale,
                                                           causal, out)
    np.testing.assert_allclose(out.astype(np.float64), want_out, rtol=4e-3,
                               atol=2e-3)
    # lse: float32 sums of dim products and of up to seq exponentials (the
    # bound of tutorial 06); delta: a float32 sum of dim exact products.
    largest = scale * np.einsum("hid,hjd->hij", np.abs(q.astype(np.float64)),
                                np.abs(k.astype(np.float64))).max(-1)
    assert np.all(np.abs(lse - want_lse) <= 2**-24 * (dim + 2) * largest +
                  2**-22 * (8 + seq / 16 + 4 * np.abs(want_lse)))
    terms = dout.astype(np.float64) * out
    assert np.all(np.abs(delta - terms.sum(-1)) <= dim * 2**-24 * np.abs(terms).sum(-1))
    for name, got in (("dq", dq), ("dk", dk), ("dv", dv)):
        want, bound = grads[name]
        error = np.abs(got.astype(np.float64) - want)
        assert np.all(error <= bound), (
            f"{name}: largest error {np.nanmax(error / bound):.3g} of its bound")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="needs torch")
def test_attention_backward_reference_is_torch_autograd(rng):
    # The closed-form gradients above against autograd of the same float64
    # forward pass.
    import torch
    heads, seq, dim = 2, 19, 16
    q, k, v, dout = (rng.uniform(-1, 1, (heads, seq, dim)) for _ in range(4))
    for causal in (False, True):
        _, _, grads = float64_attention_backward(q, k, v, dout, 0.25, causal)
        tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
        s = tq @ tk.transpose(1, 2) * 0.25
        if causal:
            s = s.masked_fill(~torch.ones(seq, seq, dtype=torch.bool).tril(),
                              float("-inf"))
        (torch.softmax(s, -1) @ tv).backward(torch.tensor(dout))
        for name, t in (("dq", tq), ("dk", tk), ("dv", tv)):
            np.testing.assert_allclose(grads[name][0], t.grad.numpy(),
                                       rtol=1e-12, atol=1e-12)


# Tutorial 03's matmul through tensor descriptors: the descriptors' zero
# fill pads the tiles past M, N and K, and the store skips them.
@pytest.mark.parametrize("m,n,k,backend", [
    (1, 1, 1, "cpu"), (17, 31, 13, "cpu"), (97, 130, 67, "cpu"),
    (128, 64, 256, "cpu"), (33, 65, 30, "interpreter")])
def test_matmul_tma(rng, m, n, k, backend):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = poisoned((m, n), np.float32)
    matmul_tma[(blocc.cdiv(m, 32) * blocc.cdiv(n, 32),)](
        a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=32, BLOCK_N=32,
        BLOCK_K=32, GROUP_M=8, backend=backend)
    assert_matmul_within_rounding(c, a, b)
