"""The tutorials' kernels side by side on the CPU, in one process, on the
same numpy arrays: blocc (blocc.kernels on its CPU backend), the
hand-written OpenMP C++ loop for the same math (benchmarks/cpu/peers.cpp,
loaded from libblocc_bench_peers.so with ctypes), numpy, and PyTorch on the
CPU where it is installed. Every column is checked against a float64
reference first, and all are timed by blocc.testing.do_bench (host clock,
caches flushed before each run, median). Every side runs on the same
number of threads: BLOCC_NUM_THREADS, else OMP_NUM_THREADS, else every
hardware thread (numpy's elementwise operations use one whatever it is).

    python3 benchmarks/tutorials/cpu_sweep.py --out cpu-sweep.json
        [--quick] [--smoke] [--kernels a,b] [--peers build/benchmarks/libblocc_bench_peers.so]

Writes the format of harness.py, as gpu_sweep.py does; plot.py draws it.
"""

import argparse
import ctypes
import math
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import cdiv, next_pow2, unchecked  # noqa: E402

import blocc  # noqa: E402
import blocc.testing  # noqa: E402
from blocc import kernels as B  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

RNG = np.random.default_rng()
THREADS = int(os.environ.get("BLOCC_NUM_THREADS") or
              os.environ.get("OMP_NUM_THREADS") or os.cpu_count())
PEERS = None  # the ctypes library, set by main()


def bench(fn):
    return blocc.testing.do_bench(fn, warmup=10, rep=60, return_mode="median")


def ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


def peer(name, *args):
    """A call of the OpenMP peer `name` with these arguments (arrays by
    address, Python ints as int64, floats as float)."""
    fn = getattr(PEERS, "blocc_peer_" + name)
    converted = [ptr(a) if isinstance(a, np.ndarray) else
                 ctypes.c_float(a) if isinstance(a, float) else
                 ctypes.c_int64(a) if isinstance(a, Int64) else
                 ctypes.c_int(a) for a in args]
    return lambda: fn(*converted)


class Int64(int):
    """An int the peer takes as int64_t."""


def torch_columns(columns):
    """{column: (launch, output)} of torch's columns, {} without torch."""
    return columns() if torch is not None else {}


def t(a):
    return torch.from_numpy(a)


# Each sweep returns (metric, work, {column: (launch, output)}, reference,
# tolerance (rtol, atol), blocc's configuration); see harness.py.

def vector_add(n):
    x, y = RNG.random((2, n), np.float32)
    # A float32 sum is the exact sum rounded once: compared bit for bit.
    want = (x.astype(np.float64) + y).astype(np.float32)
    outs = {c: poisoned(n) for c in ("blocc", "omp-loop", "numpy")}
    return ("GB/s", 12 * n, {
        "blocc": (lambda: B.add[(cdiv(n, 4096),)](x, y, outs["blocc"], n,
                                                  BLOCK=4096), outs["blocc"]),
        "omp-loop": (peer("vector_add", x, y, outs["omp-loop"], Int64(n)),
                     outs["omp-loop"]),
        "numpy": (lambda: np.add(x, y, out=outs["numpy"]), outs["numpy"]),
        **torch_columns(lambda: {"torch": (lambda: torch.add(t(x), t(y)).numpy(),
                                           None)}),
    }, want, (0, 0), "BLOCK=4096")


def softmax(n, rows=1024):
    x = (RNG.standard_normal((rows, n)) * 4).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    outs = {c: poisoned((rows, n)) for c in ("blocc", "omp-loop")}

    def numpy_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    block = next_pow2(n)
    return ("GB/s", 8 * rows * n, {
        "blocc": (lambda: B.softmax[(rows,)](outs["blocc"], x, n, n, rows, n,
                                             BLOCK=block), outs["blocc"]),
        "omp-loop": (peer("softmax", x, outs["omp-loop"], rows, n),
                     outs["omp-loop"]),
        "numpy": (numpy_softmax, None),
        **torch_columns(lambda: {
            "torch": (lambda: torch.softmax(t(x), -1).numpy(), None)}),
    }, want, (1e-5, 1e-7), f"one row per program, BLOCK={block}")


def layer_norm(n, rows=1024):
    x = (RNG.standard_normal((rows, n)) + 2).astype(np.float32)
    w = (RNG.random(n) + 0.5).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    x64 = x.astype(np.float64)
    mu = x64.mean(1, keepdims=True)
    want = (x64 - mu) / np.sqrt(x64.var(1, keepdims=True) + 1e-5) * w + b
    outs = {c: poisoned((rows, n)) for c in ("blocc", "omp-loop")}
    mean, rstd = np.empty(rows, np.float32), np.empty(rows, np.float32)
    block = min(next_pow2(n), 4096)

    def numpy_layer_norm():
        m = x.mean(1, keepdims=True)
        return (x - m) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b
    return ("GB/s", 8 * rows * n, {
        "blocc": (lambda: B.layer_norm_fwd[(rows,)](
            x, outs["blocc"], w, b, mean, rstd, n, n, 1e-5, BLOCK=block),
            outs["blocc"]),
        "omp-loop": (peer("layer_norm", x, outs["omp-loop"], w, b, mean, rstd,
                          rows, n, 1e-5), outs["omp-loop"]),
        "numpy": (numpy_layer_norm, None),
        **torch_columns(lambda: {"torch": (lambda: F.layer_norm(
            t(x), (n,), t(w), t(b), 1e-5).numpy(), None)}),
    }, want, (1e-4, 1e-4), f"row loop, BLOCK={block}")


def gelu(n):
    x = (RNG.standard_normal(n) * 3).astype(np.float32)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                    (x64 + 0.044715 * x64 ** 3)))
    outs = {c: poisoned(n) for c in ("blocc", "omp-loop")}

    def numpy_gelu():
        return 0.5 * x * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) *
                                      (x + np.float32(0.044715) * x * x * x)))
    return ("GB/s", 8 * n, {
        "blocc": (lambda: B.gelu[(cdiv(n, 4096),)](x, outs["blocc"], n,
                                                   BLOCK=4096), outs["blocc"]),
        "omp-loop": (peer("gelu", x, outs["omp-loop"], Int64(n)),
                     outs["omp-loop"]),
        "numpy": (numpy_gelu, None),
        **torch_columns(lambda: {"torch": (lambda: F.gelu(
            t(x), approximate="tanh").numpy(), None)}),
    }, want, (1e-5, 1e-6), "BLOCK=4096")


def matmul(n):
    a16 = (RNG.random((n, n)) - 0.5).astype(np.float16)
    b16 = (RNG.random((n, n)) - 0.5).astype(np.float16)
    a, b = a16.astype(np.float32), b16.astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    outs = {c: poisoned((n, n)) for c in ("blocc", "omp-loop")}
    tiles = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    grid = (cdiv(n, 64) * cdiv(n, 64),)
    return ("GFLOP/s", 2 * n ** 3, {
        "blocc": (lambda: B.matmul[grid](a16, b16, outs["blocc"], n, n, n, n,
                                         1, n, 1, n, 1, **tiles), outs["blocc"]),
        "omp-loop": (peer("matmul", a, b, outs["omp-loop"], n, n, n),
                     outs["omp-loop"]),
        "numpy": (lambda: a @ b, None),
        **torch_columns(lambda: {"torch": (lambda: (t(a) @ t(b)).numpy(),
                                           None)}),
    }, want, (0, 1e-3 * math.sqrt(n)), "64x64x32 tiles, GROUP_M=8; f16 inputs "
       "(the peers multiply float32 copies)")


def attention(seq, heads=4, dim=64):
    q16, k16, v16 = ((RNG.random((heads, seq, dim)) - 0.5).astype(np.float16)
                     for _ in range(3))
    q, k, v = (a.astype(np.float32) for a in (q16, k16, v16))
    scale = 1 / math.sqrt(dim)
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)
    out16 = np.full((heads, seq, dim), np.nan, np.float16)
    out = poisoned((heads, seq, dim))

    def numpy_attention():
        s = (q @ k.transpose(0, 2, 1)) * np.float32(scale)
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v
    return ("GFLOP/s", 4 * heads * seq * seq * dim, {
        "blocc": (lambda: B.attention[(cdiv(seq, 64), heads)](
            q16, k16, v16, out16, seq, scale, HEAD_DIM=dim, BLOCK_M=64,
            BLOCK_N=64, CAUSAL=False), out16),
        "omp-loop": (peer("attention", q, k, v, out, heads, seq, dim,
                          float(scale)), out),
        "numpy": (numpy_attention, None),
        **torch_columns(lambda: {"torch": (
            lambda: F.scaled_dot_product_attention(t(q), t(k), t(v)).numpy(),
            None)}),
    }, want, (1e-2, 5e-3), "64x64 blocks; f16 inputs (the peers take float32 "
       "copies)")


def attention_backward(seq, heads=4, dim=64, causal=False):
    """dq, dk and dv of attention at dout, given the forward's out and lse
    (the timed launch is the backward pass alone)."""
    q16, k16, v16, do16 = ((RNG.random((heads, seq, dim)) - 0.5)
                           .astype(np.float16) for _ in range(4))
    q, k, v, do = (a.astype(np.float32) for a in (q16, k16, v16, do16))
    scale = 1 / math.sqrt(dim)

    def backward(q, k, v, do, scale):
        """The gradients from the closed forms, in q's precision."""
        s = (q @ k.transpose(0, 2, 1)) * scale
        if causal:
            s = np.where(np.tri(seq, dtype=bool), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ds = p * (do @ v.transpose(0, 2, 1) - (do * (p @ v)).sum(-1)[..., None])
        return np.stack([scale * ds @ k, scale * ds.transpose(0, 2, 1) @ q,
                         p.transpose(0, 2, 1) @ do])
    want = backward(*(a.astype(np.float64) for a in (q, k, v, do)), scale)
    out16 = np.empty((heads, seq, dim), np.float16)
    lse, delta = np.empty((heads, seq), np.float32), np.empty((heads, seq),
                                                              np.float32)
    B.attention_fwd_lse[(cdiv(seq, 64), heads)](
        q16, k16, v16, out16, lse, seq, scale, HEAD_DIM=dim, BLOCK_M=64,
        BLOCK_N=64, CAUSAL=causal)
    grads = np.full((3, heads, seq, dim), np.nan, np.float16)

    def blocc_backward():
        B.attention_bwd_preprocess[(cdiv(heads * seq, 64),)](
            out16, do16, delta, heads * seq, HEAD_DIM=dim, BLOCK_M=64)
        B.attention_bwd_dkdv[(cdiv(seq, 32), heads)](
            q16, k16, v16, do16, lse, delta, grads[1], grads[2], seq, scale,
            HEAD_DIM=dim, BLOCK_M=32, BLOCK_N=32, CAUSAL=causal)
        B.attention_bwd_dq[(cdiv(seq, 32), heads)](
            q16, k16, v16, do16, lse, delta, grads[0], seq, scale,
            HEAD_DIM=dim, BLOCK_M=32, BLOCK_N=32, CAUSAL=causal)

    def torch_columns_():
        tq, tk, tv = (t(a).requires_grad_() for a in (q, k, v))
        o = F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
        return {"torch": (lambda: torch.stack(torch.autograd.grad(
            o, (tq, tk, tv), t(do), retain_graph=True)).numpy(), None)}
    # The five products of a backward pass (FlashAttention's count); each
    # gradient within 2^-8 of its largest element (as gpu_sweep.py).
    return ("GFLOP/s", 10 * heads * seq * seq * dim // (2 if causal else 1), {
        "blocc": (blocc_backward, grads),
        "numpy": (lambda: backward(q, k, v, do, np.float32(scale)), None),
        **torch_columns(torch_columns_),
    }, want, (2**-8, 2**-8 * np.abs(want).max(axis=(1, 2, 3), keepdims=True)),
        "32x32 blocks; f16 inputs (the peers take float32 "
       "copies)" + (", causal" if causal else ""))


def attention_backward_causal(seq):
    return attention_backward(seq, causal=True)


def rope(seq, batch=2, heads=8, dim=64):
    half = dim // 2
    q0 = (RNG.random((batch, seq, heads, dim)) * 4 - 2).astype(np.float32)
    theta = (np.arange(seq, dtype=np.float64)[:, None] *
             10000.0 ** (-np.arange(half) / half))
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    c, s = cos[None, :, None, :].astype(np.float64), sin[None, :, None, :]
    x1, x2 = q0[..., :half].astype(np.float64), q0[..., half:]
    want = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    qs = {col: q0.copy() for col in ("blocc", "omp-loop")}

    def numpy_rope():
        a, b = q0[..., :half], q0[..., half:]
        cc, ss = cos[None, :, None, :], sin[None, :, None, :]
        return np.concatenate([a * cc - b * ss, b * cc + a * ss], -1)
    # In place: the checked launch is the column's first; later (timed)
    # ones go on rotating the same array.
    return ("GB/s", 8 * q0.size, {
        "blocc": (lambda: B.rope[(batch * seq, cdiv(heads, 4))](
            qs["blocc"], cos, sin, seq, heads, dim, GROUP=4, BLOCK=half,
            BACKWARD=False), qs["blocc"]),
        "omp-loop": (peer("rope", qs["omp-loop"], cos, sin, batch * seq, seq,
                          heads, dim), qs["omp-loop"]),
        "numpy": (numpy_rope, None),
        **torch_columns(lambda: {"torch": (
            lambda: _torch_rope(q0, cos, sin, half), None)}),
    }, want, (1e-5, 1e-6), "GROUP=4 heads per program")


def _torch_rope(q0, cos, sin, half):
    q = t(q0)
    a, b = q[..., :half], q[..., half:]
    cc, ss = t(cos)[None, :, None, :], t(sin)[None, :, None, :]
    return torch.cat([a * cc - b * ss, b * cc + a * ss], -1).numpy()


def mean(n):
    x = (RNG.random(n) * 4 - 1).astype(np.float32)
    want = np.array([x.astype(np.float64).mean()])
    block = 4096
    programs = min(cdiv(n, block), 4 * THREADS)
    partials = np.empty(programs, np.float32)
    out = poisoned(1)

    def two_stages():
        B.partial_sums[(programs,)](x, partials, n, 1.0, BLOCK=block)
        B.partial_sums[(1,)](partials, out, programs, 1.0 / n, BLOCK=block)
    omp = peer("scaled_sum", x, Int64(n), 1.0 / n)
    PEERS.blocc_peer_scaled_sum.restype = ctypes.c_float
    return ("GB/s", 4 * n, {
        "blocc": (two_stages, out),
        "omp-loop": (lambda: np.array([omp()]), None),
        "numpy": (lambda: np.array([x.mean()]), None),
        **torch_columns(lambda: {"torch": (
            lambda: t(x).mean().reshape(1).numpy(), None)}),
    }, want, (1e-5, 0), f"two stages, {programs} then 1 program, BLOCK={block}")


def philox_uniform(seed, n):
    """tl.rand(seed, offsets) for offsets 0 .. n-1 (Philox 4x32-10, the
    first word folded to [0, 2^31) and scaled), as tests/e2e/dropout_test."""
    key = np.uint64(seed) if seed >= 0 else np.uint64(seed + (1 << 64))
    k0, k1 = np.uint64(int(key) & 0xFFFFFFFF), np.uint64(int(key) >> 32)
    mask = np.uint64(0xFFFFFFFF)
    c = [np.arange(n, dtype=np.uint64), np.zeros(n, np.uint64),
         np.zeros(n, np.uint64), np.zeros(n, np.uint64)]
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask, p0 & mask]
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    word = c[0].astype(np.uint32).view(np.int32)
    folded = np.where(word < 0, ~word, word)
    return folded.astype(np.float32) * np.float32(4.6566127342e-10)


def dropout(n, p=0.5, seed=1234):
    x = RNG.standard_normal(n).astype(np.float32)
    r = philox_uniform(seed, n)
    want = np.where(r > p, x.astype(np.float64) / (1 - p), 0)
    out = poisoned(n)
    gen = np.random.default_rng(seed)

    def numpy_dropout():
        return np.where(gen.random(n, np.float32) > p, x / np.float32(1 - p), 0)
    return ("GB/s", 8 * n, {
        "blocc": (lambda: B.seeded_dropout[(cdiv(n, 4096),)](
            x, out, n, p, seed, BLOCK=4096), out),
        # numpy and torch draw their own random numbers: timed, not checked.
        "numpy": (unchecked(numpy_dropout), None),
        **torch_columns(lambda: {"torch": (unchecked(
            lambda: F.dropout(t(x), p, training=True)), None)}),
    }, want, (1e-6, 0), "BLOCK=4096, seed and offsets only (no OpenMP peer: "
       "it would need Philox)")


def layer_norm_backward(n, rows=1024):
    x = (RNG.standard_normal((rows, n)) + 2).astype(np.float32)
    w = (RNG.random(n) + 0.5).astype(np.float32)
    dy = RNG.standard_normal((rows, n)).astype(np.float32)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    mu = x64.mean(1, keepdims=True)
    rs = 1 / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    xhat = (x64 - mu) * rs
    wdy = w * dy64
    dx = (wdy - (xhat * (xhat * wdy).mean(1, keepdims=True) +
                 wdy.mean(1, keepdims=True))) * rs
    want = np.concatenate([dx.ravel(), (dy64 * xhat).sum(0), dy64.sum(0)])
    mean, rstd = mu.ravel().astype(np.float32), rs.ravel().astype(np.float32)
    block = next_pow2(n)
    programs = min(rows, 4 * THREADS)
    results = {c: poisoned(rows * n + 2 * n) for c in ("blocc", "omp-loop")}

    def views(column):
        res = results[column]
        return res[:rows * n], res[rows * n:rows * n + n], res[rows * n + n:]

    pdw, pdb = np.empty((programs, n), np.float32), np.empty((programs, n),
                                                               np.float32)

    def blocc_backward():
        dxv, dwv, dbv = views("blocc")
        B.layer_norm_bwd_dx[(programs,)](dxv, dy, pdw, pdb, x, w, mean, rstd,
                                         n, rows, n, BLOCK=block)
        B.layer_norm_bwd_dwdb[(cdiv(n, 128),)](pdw, pdb, dwv, dbv, programs, n,
                                               BLOCK_M=32, BLOCK_N=128)
    dxo, dwo, dbo = views("omp-loop")

    def numpy_backward():
        xh = (x - mean[:, None]) * rstd[:, None]
        g = w * dy
        d = (g - (xh * (xh * g).mean(1, keepdims=True) +
                  g.mean(1, keepdims=True))) * rstd[:, None]
        return np.concatenate([d.ravel(), (dy * xh).sum(0), dy.sum(0)])
    return ("GB/s", 4 * 3 * rows * n, {
        "blocc": (blocc_backward, results["blocc"]),
        "omp-loop": (peer("layer_norm_backward", x, dy, w, mean, rstd, dxo,
                          dwo, dbo, rows, n), results["omp-loop"]),
        "numpy": (numpy_backward, None),
    }, want, (1e-3, 1e-3), f"{programs} programs striding over rows, "
       f"BLOCK={block}; dw, db from the partial sums")


SWEEPS = {
    "vector_add": (vector_add, [1 << 16, 1 << 20, 1 << 22, 1 << 24], "f32"),
    "softmax": (softmax, [128, 1024, 4096], "f32"),
    "layer_norm": (layer_norm, [1024, 4096], "f32"),
    "gelu": (gelu, [1 << 16, 1 << 20, 1 << 24], "f32"),
    "matmul": (matmul, [128, 256, 512], "f16"),
    "attention": (attention, [128, 256, 512], "f16"),
    "attention_backward": (attention_backward, [128, 256, 512], "f16"),
    "attention_backward_causal": (attention_backward_causal, [128, 256, 512],
                                  "f16"),
    "rope": (rope, [128, 512, 2048], "f32"),
    "mean": (mean, [1 << 16, 1 << 20, 1 << 24], "f32"),
    "dropout": (dropout, [1 << 16, 1 << 20, 1 << 24], "f32"),
    "layer_norm_backward": (layer_norm_backward, [1024, 4096], "f32"),
}

SIZE_LABELS = {"softmax": "row length, 1024 rows",
               "layer_norm": "row length, 1024 rows",
               "layer_norm_backward": "row length, 1024 rows",
               "matmul": "M = N = K", "attention": "sequence, 4 heads x 64",
               "attention_backward": "sequence, 4 heads x 64",
               "attention_backward_causal": "sequence, 4 heads x 64, causal",
               "rope": "sequence, 2 x 8 heads x 64"}

# --smoke: one small, odd size per kernel (a test that the sweep runs).
SMOKE = {"vector_add": 1000, "softmax": 100, "layer_norm": 100, "gelu": 1001,
         "matmul": 64, "attention": 64, "attention_backward": 67,
         "attention_backward_causal": 67, "rope": 17, "mean": 4099,
         "dropout": 1001, "layer_norm_backward": 100}


def mismatch(got, want, rtol, atol):
    got = np.asarray(got, np.float64).reshape(np.shape(want))
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if not bad.any():
        return None
    i = tuple(int(j) for j in np.argwhere(bad)[0])
    return f"wrong at {list(i)}: {got[i]} vs {want[i]}"


def main():
    global PEERS
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true",
                        help="the two largest sizes of each kernel only")
    parser.add_argument("--smoke", action="store_true",
                        help="one small odd size per kernel, quick timing; "
                             "fails when any column fails (--strict)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any column fails its check")
    parser.add_argument("--kernels", default=",".join(SWEEPS))
    parser.add_argument("--peers", default=os.environ.get(
        "BLOCC_BENCH_PEERS", "build/benchmarks/libblocc_bench_peers.so"),
        help="the OpenMP peers' library (benchmarks/cpu, target "
             "blocc_bench_peers)")
    args = parser.parse_args()
    PEERS = ctypes.CDLL(os.path.abspath(args.peers))
    PEERS.blocc_peer_set_threads(THREADS)
    os.environ.setdefault("BLOCC_NUM_THREADS", str(THREADS))
    if torch is not None:
        torch.set_num_threads(THREADS)
    sweeps = SWEEPS
    args.strict = args.strict or args.smoke
    if args.smoke:
        global bench
        sweeps = {k: (make, [SMOKE[k]], dtype)
                  for k, (make, _, dtype) in SWEEPS.items()}
        bench = lambda fn: blocc.testing.do_bench(  # noqa: E731
            fn, warmup=1, rep=1, flush=False, return_mode="median")
    harness.run(
        sweeps, args, suite="cpu-tutorials",
        hardware=f"{platform.processor() or platform.machine()}: "
                 f"{blocc.host_backend()}",
        notes=[f"numpy {np.__version__}, torch " +
               (torch.__version__ if torch is not None else "not installed") +
               f", blocc {blocc.__version__}; {THREADS} threads on every side; "
               "timer blocc.testing.do_bench (host clock, median)"],
        bench=lambda fn: bench(fn), wait=lambda: None, mismatch=mismatch,
        size_labels=SIZE_LABELS)


if __name__ == "__main__":
    main()
