"""The tutorials' kernels side by side on one GPU, in one process, on the
same torch tensors: blocc (blocc.kernels, launched from Python), the same
kernel in Triton (triton_kernels.py), PyTorch eager and torch.compile, and
the ceilings (the device copy for memory-bound kernels, cuBLAS for matmul,
torch's scaled_dot_product_attention for attention). Every column is
checked against a torch reference before it is timed, all with one timer:
triton.testing.do_bench (median of runs after warm-up, L2 flushed).

    python3 benchmarks/tutorials/gpu_sweep.py --out gpu-sweep.json [--quick]

Writes the results format (benchmarks/README.md: a record per kernel, size
and peer: blocc's value, the peer's, blocc / peer) plus "series" (every
column's values per size) for benchmarks/tutorials/plot.py, and prints a
table.
A column that fails its check or raises is reported and left out.
"""

import argparse
import math
import os
import sys

try:
    import torch
    import torch._functorch.config  # noqa: F401 (set by layer_norm_backward)
    import torch.nn.functional as F
    import triton
except ImportError as e:
    sys.exit(f"gpu_sweep: needs torch and triton with a CUDA GPU ({e})")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as T  # noqa: E402
from harness import cdiv, next_pow2, unchecked  # noqa: E402
import harness  # noqa: E402

import blocc  # noqa: E402
from blocc import kernels as B  # noqa: E402

DEVICE = "cuda"


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def copy_column(nbytes):
    """The device copy moving nbytes (read plus write): the bandwidth ceiling."""
    src = torch.empty(nbytes // 2, dtype=torch.uint8, device=DEVICE)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src), None


# Each sweep returns (metric, work, {column: (launch, output)}, reference,
# tolerance (rtol, atol), blocc's configuration).

def vector_add(n):
    x, y = torch.rand(2, n, device=DEVICE)
    want = x + y
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    add = torch.compile(lambda a, b: a + b)
    return ("GB/s", 12 * n, {
        "blocc": (lambda: B.add[(cdiv(n, 1024),)](x, y, outs["blocc"], n,
                                                  BLOCK=1024, num_warps=8),
                  outs["blocc"]),
        "triton": (lambda: T.add[(cdiv(n, 1024),)](x, y, outs["triton"], n,
                                                   BLOCK=1024, num_warps=8),
                   outs["triton"]),
        "torch": (lambda: torch.add(x, y), None),
        "torch.compile": (lambda: add(x, y), None),
        "copy (ceiling)": copy_column(12 * n),
    }, want, (0, 0), "BLOCK=1024 warps=8")


# Warps per program each one-row-per-program kernel is tuned over (as a
# Triton user tunes num_warps): each runs its fastest.
ROW_WARPS = [4, 8, 16]


def softmax(n, rows=4096):
    x = torch.randn(rows, n, device=DEVICE) * 4
    want = torch.softmax(x.double(), -1).float()
    block = next_pow2(n)
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    blocc_warps, blocc_run = fastest(
        lambda w: B.softmax[(rows,)](outs["blocc"], x, n, n, rows, n,
                                     BLOCK=block, num_warps=w), ROW_WARPS)
    triton_warps, triton_run = fastest(
        lambda w: T.softmax[(rows,)](outs["triton"], x, n, BLOCK=block,
                                     num_warps=w), ROW_WARPS)
    poison(outs.values())  # the check reads the chosen launch's output
    soft = torch.compile(lambda a: torch.softmax(a, -1))
    return ("GB/s", 8 * rows * n, {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
        "torch": (lambda: torch.softmax(x, -1), None),
        "torch.compile": (lambda: soft(x), None),
        "copy (ceiling)": copy_column(8 * rows * n),
    }, want, (1e-5, 1e-7),
        f"one row per program, BLOCK={block}; blocc {blocc_warps} warps, "
        f"Triton {triton_warps} (fastest of {ROW_WARPS} each)")


# Layer norm's forward configurations: (kernel, BLOCK, warps), BLOCK capped
# at the row's length. "loop" walks a row in blocks three times (Triton's
# tutorial's form, both peers); "row" (blocc's layer_norm_fwd_row) holds
# the whole row in registers.
LAYER_NORM_LOOP_CONFIGS = [("loop", 1024, 4), ("loop", 2048, 8),
                           ("loop", 4096, 8), ("loop", 4096, 16),
                           ("loop", 4096, 32)]
LAYER_NORM_ROW_WARPS = [4, 8, 16, 32]


def layer_norm(n, rows=4096):
    x = torch.randn(rows, n, device=DEVICE) + 2
    w, b = torch.rand(n, device=DEVICE) + 0.5, torch.randn(n, device=DEVICE)
    want = F.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5).float()
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    mean, rstd = torch.empty(rows, device=DEVICE), torch.empty(rows, device=DEVICE)
    loops = sorted({(k, min(next_pow2(n), blk), wp)
                    for k, blk, wp in LAYER_NORM_LOOP_CONFIGS})
    whole_rows = [("row", next_pow2(n), wp) for wp in LAYER_NORM_ROW_WARPS
                  if next_pow2(n) >= 32 * wp]

    def launcher(column):
        def run(config):
            kind, block, warps = config
            if column == "triton":
                T.layer_norm[(rows,)](x, outs["triton"], w, b, mean, rstd, n,
                                      1e-5, BLOCK=block, num_warps=warps)
                return
            kernel = B.layer_norm_fwd_row if kind == "row" else B.layer_norm_fwd
            kernel[(rows,)](x, outs["blocc"], w, b, mean, rstd, n, n, 1e-5,
                            BLOCK=block, num_warps=warps)
        return run
    blocc_config, blocc_run = fastest(launcher("blocc"), loops + whole_rows)
    triton_config, triton_run = fastest(launcher("triton"), loops)
    poison(outs.values())
    norm = torch.compile(lambda a: F.layer_norm(a, (n,), w, b, 1e-5))

    def text(config):
        kind, block, warps = config
        return f"{'whole row' if kind == 'row' else 'row loop'}, BLOCK={block} warps={warps}"
    return ("GB/s", 8 * rows * n, {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
        "torch": (lambda: F.layer_norm(x, (n,), w, b, 1e-5), None),
        "torch.compile": (lambda: norm(x), None),
        "copy (ceiling)": copy_column(8 * rows * n),
    }, want, (1e-4, 1e-4),
        f"blocc {text(blocc_config)}, Triton {text(triton_config)} (fastest "
        f"of {len(loops + whole_rows)} and {len(loops)} configurations)")


def gelu(n):
    x = torch.randn(n, device=DEVICE) * 3
    want = F.gelu(x.double(), approximate="tanh").float()
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    g = torch.compile(lambda a: F.gelu(a, approximate="tanh"))
    return ("GB/s", 8 * n, {
        "blocc": (lambda: B.gelu[(cdiv(n, 1024),)](x, outs["blocc"], n,
                                                   BLOCK=1024, num_warps=4),
                  outs["blocc"]),
        "triton": (lambda: T.gelu[(cdiv(n, 1024),)](x, outs["triton"], n,
                                                    BLOCK=1024, num_warps=4),
                   outs["triton"]),
        "torch": (lambda: F.gelu(x, approximate="tanh"), None),
        "torch.compile": (lambda: g(x), None),
        "copy (ceiling)": copy_column(8 * n),
    }, want, (2e-6, 2e-6), "BLOCK=1024 warps=4")


# Tile configurations (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) both
# matmuls are tuned over at each size, as Triton's tutorial autotunes its
# kernel: each runs its fastest.
MATMUL_CONFIGS = [(128, 128, 64, 4, 3), (128, 128, 64, 4, 4),
                  (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                  (128, 256, 64, 8, 4), (64, 128, 64, 4, 4)]
# A producer warpgroup keeps more stages in flight where they fit.
WARP_SPECIALIZED_CONFIGS = MATMUL_CONFIGS + [(128, 128, 64, 4, 5),
                                             (128, 128, 64, 8, 5)]


def poison(tensors):
    """NaN in every element, so that a check reads only what the next
    launch writes (not what the tuning's launches left)."""
    for t in tensors:
        t.fill_(float("nan"))


def fastest(run_config, configs=MATMUL_CONFIGS):
    """The configuration of `configs` whose run_config(config) (a launch)
    takes least time, and that launch."""
    timed = []
    for config in configs:
        try:
            timed.append((bench(lambda c=config: run_config(c)), config))
        except Exception:  # a configuration the kernel cannot take
            continue
    config = min(timed)[1]
    return config, lambda: run_config(config)


def config_text(config):
    bm, bn, bk, warps, stages = config
    return f"{bm}x{bn}x{bk} {warps} warps {stages} stages"


def matmul(n, dtype=torch.float16, kernel="matmul"):
    """Tutorial 03's matmul (kernel names blocc's: matmul, matmul_bf16, or
    a persistent one, matmul_persistent: a grid of min(SMs, tiles)
    programs walking the tiles, against Triton's persistent matmul and
    blocc's one-program-per-tile matmul)."""
    a = torch.rand(n, n, device=DEVICE, dtype=dtype) - 0.5
    b = torch.rand(n, n, device=DEVICE, dtype=dtype) - 0.5
    want = (a.double() @ b.double()).float()
    persistent = kernel.startswith("matmul_persistent")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    outs = {c: torch.full((n, n), float("nan"), device=DEVICE)
            for c in ("blocc", "triton")}

    def launcher(kernel, out, programs_per_tile, **extra):
        def run(config):
            bm, bn, bk, warps, stages = config
            tiles = cdiv(n, bm) * cdiv(n, bn)
            grid = (tiles if programs_per_tile else min(sms, tiles),)
            kernel[grid](a, b, out, n, n, n, n, 1, n, 1, n, 1,
                         num_warps=warps, num_stages=stages, BLOCK_M=bm,
                         BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, **extra)
        return run

    specialized = kernel.startswith("matmul_tma_ws")
    blocc_config, blocc_run = fastest(
        launcher(getattr(B, kernel), outs["blocc"], not persistent),
        WARP_SPECIALIZED_CONFIGS if specialized else MATMUL_CONFIGS)
    triton_config, triton_run = fastest(
        launcher(T.matmul_persistent, outs["triton"], False, NUM_SMS=sms)
        if persistent else launcher(T.matmul, outs["triton"], True))
    poison(outs.values())  # the check reads the chosen launch's output
    columns = {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
    }
    def blocc_column(name, kernel_name=None, per_tile=True,
                     configs=MATMUL_CONFIGS):
        """blocc's matmul `kernel_name` (default: the pointer matmul of the
        dtype), one program per tile or a program per SM, as column `name`;
        returns its configuration."""
        kernel_name = kernel_name or (
            "matmul_bf16" if dtype == torch.bfloat16 else "matmul")
        out = torch.full((n, n), float("nan"), device=DEVICE)
        config, run = fastest(
            launcher(getattr(B, kernel_name), out, per_tile), configs)
        columns[name] = (run, out)
        poison([out])
        return config

    walk = ""
    if kernel.startswith("matmul_tma"):
        # The same tiles through pointers (cp.async): what TMA gains.
        config = blocc_column("blocc, tiles through pointers")
        walk = (f"; tiles through tensor descriptors, copied by TMA (blocc "
                f"through pointers {config_text(config)})")
    if specialized:
        # The same copies issued by the kernel's own warps: what the
        # producer warpgroup gains.
        config = blocc_column(
            "blocc, TMA without a producer warpgroup",
            "matmul_tma_bf16" if dtype == torch.bfloat16 else "matmul_tma",
            configs=WARP_SPECIALIZED_CONFIGS)
        walk += (f"; a producer warpgroup issues the copies (blocc without "
                 f"one {config_text(config)})")
    if kernel == "matmul_persistent_tma":
        blocc_column("blocc, persistent through pointers",
                     "matmul_persistent", per_tile=False)
    if persistent:
        # The same tiles, one program each: what persistence gains.
        config = blocc_column(
            "blocc, a program per tile",
            "matmul_tma" if kernel.endswith("_tma") else None)
        walk = (f"; persistent, grid min({sms} SMs, tiles) (blocc's program "
                f"per tile {config_text(config)})")
    columns["cuBLAS (ceiling)"] = (lambda: a @ b, None)
    return ("TFLOP/s", 2 * n ** 3, columns, want, (0, 1e-3 * math.sqrt(n)),
            f"fastest of {len(MATMUL_CONFIGS)} tile configurations each"
            f"{f' ({len(WARP_SPECIALIZED_CONFIGS)} for blocc)' if specialized else ''}"
            ", GROUP_M=8: "
            f"blocc {config_text(blocc_config)}, Triton "
            f"{config_text(triton_config)}{walk} (on an H100 blocc's dot runs "
            "on wgmma, loads by cp.async)")


def matmul_bf16(n):
    return matmul(n, torch.bfloat16, "matmul_bf16")


def matmul_persistent(n):
    return matmul(n, kernel="matmul_persistent")


def matmul_persistent_tma(n):
    return matmul(n, kernel="matmul_persistent_tma")


def matmul_tma(n):
    return matmul(n, kernel="matmul_tma")


def matmul_tma_bf16(n):
    return matmul(n, torch.bfloat16, "matmul_tma_bf16")


def matmul_tma_ws(n):
    return matmul(n, kernel="matmul_tma_ws")


def matmul_tma_ws_bf16(n):
    return matmul(n, torch.bfloat16, "matmul_tma_ws_bf16")


def quantize_e4m3(x):
    """x as float8_e4m3fn and its float32 scale, amax / 448 (per tensor, as
    torch._scaled_mm takes it): x ~ scale * x8."""
    scale = x.abs().max().float() / 448
    return (x / scale).to(torch.float8_e4m3fn), scale.item()


def matmul_fp8(n, b_k_major=False):
    """Tutorial 03's fp8 matmul: e4m3 inputs, one float32 scale each,
    float32 out. B is [K, N] row-major as in the f16 rows, or with
    b_k_major stored as its transpose [N, K] (strides (1, K)): the layout
    cuBLASLt's fp8 GEMM requires and Triton's own fp8 tutorial passes."""
    a8, scale_a = quantize_e4m3(torch.rand(n, n, device=DEVICE) - 0.5)
    b8, scale_b = quantize_e4m3(torch.rand(n, n, device=DEVICE) - 0.5)
    scale = scale_a * scale_b
    # The float64 product of the quantized inputs: what is left is the
    # accumulation's error.
    want = ((a8.double() @ b8.double()) * scale).float()
    b_kn = b8.t().contiguous() if b_k_major else b8  # the memory B is read from
    b_strides = (1, n) if b_k_major else (n, 1)
    outs = {c: torch.full((n, n), float("nan"), device=DEVICE)
            for c in ("blocc", "triton")}
    grid = (cdiv(n, 128) * cdiv(n, 128),)
    # The f16 rows' tiles in bytes: 128 x 128, K in steps of 64 bytes, on 8
    # warps (on 4, blocc's sm_90 code for these tiles spills).
    tiles = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)
    # torch._scaled_mm takes B column-major; fast accumulation is the fp8
    # tensor cores' own (no promotion to float32 every few instructions),
    # which blocc's and Triton's kernels get too.
    b_cm = b_kn.t() if b_k_major else b8.t().contiguous().t()
    sa, sb = (torch.tensor(s, device=DEVICE) for s in (scale_a, scale_b))

    def scaled_mm():
        r = torch._scaled_mm(a8, b_cm, scale_a=sa, scale_b=sb,
                             out_dtype=torch.float32, use_fast_accum=True)
        return r[0] if isinstance(r, tuple) else r  # torch < 2.5: (out, amax)
    columns = {
        "blocc": (lambda: B.matmul_fp8[grid](
            a8.view(torch.uint8), b_kn.view(torch.uint8), outs["blocc"],
            scale_a, scale_b, n, n, n, n, 1, *b_strides, n, 1, num_warps=8,
            num_stages=3, **tiles), outs["blocc"]),
        "triton": (lambda: T.matmul_fp8[grid](
            a8, b_kn, outs["triton"], scale_a, scale_b, n, n, n, n, 1,
            *b_strides, n, 1, num_warps=8, num_stages=3, **tiles),
            outs["triton"]),
    }
    if hasattr(torch, "_scaled_mm"):
        columns["torch._scaled_mm (ceiling)"] = (scaled_mm, None)
    # fp8 tensor cores add each instruction's products keeping about 14
    # bits (DeepSeek-V3's report measured relative errors near 2% at
    # K = 4096): up to about 2^-13 of the running sum per instruction of 32
    # k, relative to the result and to partial sums a few times the
    # result's typical size sqrt(n) / 12 (products of uniform [-0.5, 0.5)
    # values). A misplaced fragment errs by about that size itself.
    error = (n / 32 + 2) * 2**-13
    tolerance = (error, error * 4 * math.sqrt(n) / 12)
    layout = "B K-major" if b_k_major else "B row-major"
    return ("TFLOP/s", 2 * n ** 3, columns, want, tolerance,
            f"128x128x64 tiles, GROUP_M=8, 8 warps, 3 stages, {layout} "
            "(dot on fp8 tensor cores: mma.sync m16n8k32 e4m3)")


def matmul_fp8_k_major(n):
    return matmul_fp8(n, b_k_major=True)


def attention_reference(q, k, v, scale, causal):
    """softmax(Q K^T * scale) V in float64, a few heads at a time (the
    whole score tensor of 128 heads would not fit)."""
    seq = q.shape[1]
    hidden = torch.ones(seq, seq, dtype=torch.bool, device=DEVICE).triu(1)
    out = torch.empty(q.shape, dtype=torch.float32, device=DEVICE)
    for h in range(0, q.shape[0], 8):
        s = (q[h:h + 8].double() @ k[h:h + 8].double().transpose(1, 2)) * scale
        if causal:
            s = s.masked_fill(hidden, float("-inf"))
        out[h:h + 8] = (torch.softmax(s, -1) @ v[h:h + 8].double()).float()
    return out


# Tutorial 06's fastest configurations on an H100 (attention_configs.py),
# by head dimension; blocc and Triton each run the fastest of them. Every
# one runs both products on Hopper's warpgroup MMAs.
ATTENTION_CONFIGS = {
    64: (dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
         dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=2),
         dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2)),
    128: (dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=3),
          dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=2),
          dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3)),
}


def attention_config_text(config):
    return (f"{config['BLOCK_M']}x{config['BLOCK_N']} blocks "
            f"{config['num_warps']} warps {config['num_stages']} stages"
            + (", overlapped" if config.get("OVERLAP") else ""))


def attention(seq, heads=32, dim=64, causal=False, batch=1,
              kernel="attention"):
    """Forward attention over batch x heads independent [seq, dim] problems
    (blocc's and Triton's kernels see batch * heads of them). kernel
    "attention_ws": blocc's blocks of K and V copied by TMA, issued by a
    producer warpgroup, next to blocc's attention too."""
    n = batch * heads
    q, k, v = (torch.rand(n, seq, dim, device=DEVICE, dtype=torch.float16)
               - 0.5 for _ in range(3))
    scale = 1 / math.sqrt(dim)
    want = attention_reference(q, k, v, scale, causal)
    outs = {c: torch.full_like(q, float("nan")) for c in ("blocc", "triton")}
    q4, k4, v4 = (t.view(batch, heads, seq, dim) for t in (q, k, v))

    def launcher(kernel, out, *rows):
        def run(config):
            grid = (cdiv(seq, config["BLOCK_M"]), n)
            kernel[grid](q, k, v, out, seq, *rows, scale, HEAD_DIM=dim,
                         CAUSAL=causal, **config)
        return run

    specialized = kernel == "attention_ws"
    # attention_ws in each configuration with its blocks' products in
    # order and overlapped with the next block's softmax.
    blocc_configs = ([dict(c, OVERLAP=o) for c in ATTENTION_CONFIGS[dim]
                      for o in (False, True)] if specialized
                     else ATTENTION_CONFIGS[dim])
    blocc_config, blocc_run = fastest(
        launcher(getattr(B, kernel), outs["blocc"],
                 *([n * seq] if specialized else [])),
        blocc_configs)
    triton_config, triton_run = fastest(
        launcher(T.attention, outs["triton"]), ATTENTION_CONFIGS[dim])
    poison(outs.values())  # the check reads the chosen launch's output

    def naive(q_, k_, v_):
        s = (q_ @ k_.transpose(1, 2)) * scale
        if causal:
            s = s.masked_fill(torch.ones(seq, seq, dtype=torch.bool,
                                         device=DEVICE).triu(1), float("-inf"))
        return torch.softmax(s, -1) @ v_
    columns = {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
        "SDPA (ceiling)": (lambda: F.scaled_dot_product_attention(
            q4, k4, v4, is_causal=causal), None),
    }
    walk = ""
    if specialized:
        # The same kernel whose warps issue their own copies (cp.async).
        out = torch.full_like(q, float("nan"))
        config, run = fastest(launcher(B.attention, out),
                              ATTENTION_CONFIGS[dim])
        poison([out])
        columns["blocc without a producer warpgroup"] = (run, out)
        walk = (f"; K and V copied by TMA from a producer warpgroup (blocc "
                f"without one {attention_config_text(config)})")
    if batch == 1:  # the [seq, seq] scores of 128 heads take too long
        compiled = torch.compile(naive)
        columns["torch"] = (lambda: naive(q, k, v), None)
        columns["torch.compile"] = (lambda: compiled(q, k, v), None)
    # FLOPs of the products computed: a causal problem needs half of them.
    flops = 4 * n * seq * seq * dim // (2 if causal else 1)
    return ("TFLOP/s", flops, columns, want, (1e-2, 5e-3),
            f"fastest of {len(blocc_configs)} and "
            f"{len(ATTENTION_CONFIGS[dim])} configurations: "
            f"blocc {attention_config_text(blocc_config)}, Triton "
            f"{attention_config_text(triton_config)}{walk}"
            + (", causal" if causal else ""))


def attention_d128(seq):
    return attention(seq, dim=128)


def attention_b4(seq):
    return attention(seq, batch=4)


def attention_b4_d128(seq):
    return attention(seq, dim=128, batch=4)


def attention_b4_causal(seq):
    return attention(seq, batch=4, causal=True)


def attention_b4_d128_causal(seq):
    return attention(seq, dim=128, batch=4, causal=True)


def attention_b4_ws(seq):
    return attention(seq, batch=4, kernel="attention_ws")


def attention_b4_d128_ws(seq):
    return attention(seq, dim=128, batch=4, kernel="attention_ws")


def attention_b4_causal_ws(seq):
    return attention(seq, batch=4, causal=True, kernel="attention_ws")


def attention_b4_d128_causal_ws(seq):
    return attention(seq, dim=128, batch=4, causal=True, kernel="attention_ws")


def attention_backward_reference(q, k, v, dout, scale, causal):
    """dq, dk and dv of softmax(Q K^T * scale) V at dout, by autograd in
    float64, a few heads at a time; [3, *q.shape] in float32."""
    seq = q.shape[1]
    hidden = torch.ones(seq, seq, dtype=torch.bool, device=DEVICE).triu(1)
    grads = torch.empty((3,) + tuple(q.shape), dtype=torch.float32,
                        device=DEVICE)
    for h in range(0, q.shape[0], 8):
        q64, k64, v64 = (t[h:h + 8].double().requires_grad_()
                         for t in (q, k, v))
        s = (q64 @ k64.transpose(1, 2)) * scale
        if causal:
            s = s.masked_fill(hidden, float("-inf"))
        (torch.softmax(s, -1) @ v64).backward(dout[h:h + 8].double())
        for i, t in enumerate((q64, k64, v64)):
            grads[i, h:h + 8] = t.grad.float()
    return grads


# Tutorial 06's backward kernels on the GPU: the configurations of
# attention_bwd_dkdv and of attention_bwd_dq each product is timed at (each
# kernel then runs its fastest), from what attention_configs.py --backward
# measured fastest for either product and Triton's tutorial's own blocks.
ATTENTION_BWD_DKDV_CONFIGS = [
    dict(BLOCK_M=32, BLOCK_N=64, num_warps=4, num_stages=2),
    dict(BLOCK_M=32, BLOCK_N=64, num_warps=4, num_stages=3),
    dict(BLOCK_M=64, BLOCK_N=128, num_warps=8, num_stages=2),
    dict(BLOCK_M=32, BLOCK_N=128, num_warps=4, num_stages=3),
    dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
]
ATTENTION_BWD_DQ_CONFIGS = [
    dict(BLOCK_M=64, BLOCK_N=32, num_warps=4, num_stages=2),
    dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2),
    dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
    dict(BLOCK_M=128, BLOCK_N=32, num_warps=4, num_stages=3),
    dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
]


def attention_bwd_config_text(config):
    return (f"{config['BLOCK_M']}x{config['BLOCK_N']} "
            f"{config['num_warps']}w{config['num_stages']}s")


def attention_backward(seq, heads=32, dim=64, causal=False, batch=4):
    """The backward pass of attention (dq, dk, dv from dout, given the
    forward's out and each row's log-sum-exp) over batch x heads [seq, dim]
    problems: blocc's three kernels against the same three in Triton and
    against SDPA's backward (FlashAttention-2 on an H100). Each product's
    dk-dv and dq kernels run at their fastest configuration."""
    n = batch * heads
    q, k, v, dout = (torch.rand(n, seq, dim, device=DEVICE,
                                dtype=torch.float16) - 0.5 for _ in range(4))
    scale = 1 / math.sqrt(dim)
    want = attention_backward_reference(q, k, v, dout, scale, causal)
    fwd = dict(BLOCK_M=128 if dim == 64 else 64, BLOCK_N=64, num_warps=4,
               num_stages=2)
    grads = {c: torch.full((3,) + tuple(q.shape), float("nan"), device=DEVICE,
                           dtype=torch.float16) for c in ("blocc", "triton")}
    chosen = {}

    def three_kernels(kernels, column):
        """The forward pass storing lse, once; each backward kernel's
        fastest configuration; then the timed launch of the backward
        kernels: delta, dk and dv, dq."""
        forward, preprocess, dkdv_kernel, dq_kernel = kernels
        out = torch.full_like(q, float("nan"))
        lse, delta = (torch.full((n, seq), float("nan"), device=DEVICE)
                      for _ in range(2))
        forward[(cdiv(seq, fwd["BLOCK_M"]), n)](q, k, v, out, lse, seq, scale,
                                                HEAD_DIM=dim, CAUSAL=causal,
                                                **fwd)
        g = grads[column]

        def preprocess_launch():
            preprocess[(cdiv(n * seq, 64),)](out, dout, delta, n * seq,
                                            HEAD_DIM=dim, BLOCK_M=64,
                                            num_warps=4)

        def dkdv_launch(c):
            dkdv_kernel[(cdiv(seq, c["BLOCK_N"]), n)](
                q, k, v, dout, lse, delta, g[1], g[2], seq, scale,
                HEAD_DIM=dim, CAUSAL=causal, **c)

        def dq_launch(c):
            dq_kernel[(cdiv(seq, c["BLOCK_M"]), n)](
                q, k, v, dout, lse, delta, g[0], seq, scale, HEAD_DIM=dim,
                CAUSAL=causal, **c)
        preprocess_launch()
        dkdv, dkdv_run = fastest(dkdv_launch, ATTENTION_BWD_DKDV_CONFIGS)
        dq, dq_run = fastest(dq_launch, ATTENTION_BWD_DQ_CONFIGS)
        chosen[column] = (f"dkdv {attention_bwd_config_text(dkdv)}, dq "
                          f"{attention_bwd_config_text(dq)}")

        def launch():
            preprocess_launch()
            dkdv_run()
            dq_run()
        return launch
    q4, k4, v4 = (t.view(batch, heads, seq, dim).detach().requires_grad_()
                  for t in (q, k, v))
    sdpa_out = F.scaled_dot_product_attention(q4, k4, v4, is_causal=causal)
    dout4 = dout.view(batch, heads, seq, dim)
    # FLOPs of the five products a backward pass needs (2.5 times the
    # forward's, as FlashAttention and Triton count them); causal, half.
    flops = 10 * n * seq * seq * dim // (2 if causal else 1)
    # Each gradient within 2^-8 of its largest element: half's 2^-11 on
    # P and dS, summed over the queries or keys with random signs, stays
    # far below (an element may be small by cancellation: no bound
    # relative to itself alone).
    atol = want.abs().amax(dim=(1, 2, 3), keepdim=True) * 2**-8
    columns = {
        "blocc": (three_kernels((B.attention_fwd_lse,
                                 B.attention_bwd_preprocess,
                                 B.attention_bwd_dkdv, B.attention_bwd_dq),
                                "blocc"), grads["blocc"]),
        "triton": (three_kernels((T.attention_fwd_lse,
                                  T.attention_bwd_preprocess,
                                  T.attention_bwd_dkdv, T.attention_bwd_dq),
                                 "triton"), grads["triton"]),
        # The backward pass alone, again and again on one graph.
        "SDPA backward (ceiling)": (unchecked(lambda: torch.autograd.grad(
            sdpa_out, (q4, k4, v4), dout4, retain_graph=True)), None),
    }
    poison(grads.values())  # the check reads the chosen launches' output
    return ("TFLOP/s", flops, columns, want, (2**-8, atol),
            f"fastest of {len(ATTENTION_BWD_DKDV_CONFIGS)} dk-dv and "
            f"{len(ATTENTION_BWD_DQ_CONFIGS)} dq configurations each: blocc "
            f"{chosen['blocc']}, Triton {chosen['triton']}"
            + (", causal" if causal else ""))


def attention_backward_d128(seq):
    return attention_backward(seq, dim=128)


def attention_backward_causal(seq):
    return attention_backward(seq, causal=True)


def attention_backward_d128_causal(seq):
    return attention_backward(seq, dim=128, causal=True)


def rope(seq, batch=8, heads=32, dim=128):
    half = dim // 2
    q0 = torch.rand(batch, seq, heads, dim, device=DEVICE) * 4 - 2
    theta = (torch.arange(seq, device=DEVICE, dtype=torch.float64)[:, None] *
             10000.0 ** (-torch.arange(half, device=DEVICE) / half))
    cos, sin = theta.cos().float(), theta.sin().float()
    c, s = cos[None, :, None, :].double(), sin[None, :, None, :].double()
    x1, x2 = q0[..., :half].double(), q0[..., half:].double()
    want = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).float()
    qs = {col: q0.clone() for col in ("blocc", "triton")}
    grid = (batch * seq, cdiv(heads, 4))

    def eager(q):
        a, b = q[..., :half], q[..., half:]
        cc, ss = cos[None, :, None, :], sin[None, :, None, :]
        return torch.cat([a * cc - b * ss, b * cc + a * ss], -1)
    compiled = torch.compile(eager)
    # In place: the checked launch is the columns' first; later (timed) ones
    # go on rotating the same tensor.
    return ("GB/s", 8 * q0.numel(), {
        "blocc": (lambda: B.rope[grid](qs["blocc"], cos, sin, seq, heads, dim,
                                       GROUP=4, BLOCK=half, BACKWARD=False,
                                       num_warps=2), qs["blocc"]),
        "triton": (lambda: T.rope[grid](qs["triton"], cos, sin, seq, heads, dim,
                                        GROUP=4, BLOCK=half, num_warps=2),
                   qs["triton"]),
        "torch": (lambda: eager(q0), None),
        "torch.compile": (lambda: compiled(q0), None),
        "copy (ceiling)": copy_column(8 * q0.numel()),
    }, want, (1e-5, 1e-6), "GROUP=4 heads per program, 2 warps")


# The mean's first-stage configurations: (programs per SM, BLOCK, warps).
MEAN_CONFIGS = [(4, 4096, 8), (4, 2048, 8), (8, 2048, 4), (16, 4096, 4),
                (4, 4096, 16), (8, 4096, 8)]


def mean(n):
    x = torch.rand(n, device=DEVICE) * 4 - 1
    want = x.double().mean().float().reshape(1)
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def programs(config):
        per_sm, block, _ = config
        return min(cdiv(n, block), per_sm * sms)
    outs = {c: torch.full((1,), float("nan"), device=DEVICE)
            for c in ("blocc", "triton")}
    # One buffer of partial sums per column, for the largest grid.
    partials = {c: torch.empty(max(map(programs, MEAN_CONFIGS)), device=DEVICE)
                for c in outs}

    def two_stages(kernel, column):
        def run(config):
            _, block, warps = config
            kernel[(programs(config),)](x, partials[column], n, 1.0,
                                        BLOCK=block, num_warps=warps)
            kernel[(1,)](partials[column], outs[column], programs(config),
                         1.0 / n, BLOCK=4096, num_warps=8)
        return run
    blocc_config, blocc_run = fastest(two_stages(B.partial_sums, "blocc"),
                                      MEAN_CONFIGS)
    triton_config, triton_run = fastest(two_stages(T.partial_sums, "triton"),
                                        MEAN_CONFIGS)
    poison(outs.values())
    m = torch.compile(lambda a: a.mean())

    def text(config):
        _, block, warps = config
        return f"{programs(config)} programs, BLOCK={block} warps={warps}"
    return ("GB/s", 4 * n, {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
        "torch": (lambda: x.mean().reshape(1), None),
        "torch.compile": (lambda: m(x).reshape(1), None),
        "copy (ceiling)": copy_column(4 * n),
    }, want, (1e-5, 0),
        f"two stages, then 1 program; blocc {text(blocc_config)}, Triton "
        f"{text(triton_config)} (fastest of {len(MEAN_CONFIGS)} each)")


# Dropout's (BLOCK, warps) configurations, both peers tuned over them.
DROPOUT_CONFIGS = [(1024, 4), (2048, 4), (2048, 8), (4096, 8)]


def dropout(n, p=0.5, seed=1234, four_words=False):
    """Tutorial 04's dropout: one Philox word per element (tl.rand), or with
    four_words each counter's four words for four elements (tl.rand4x)."""
    x = torch.randn(n, device=DEVICE)
    r = torch.empty(n, device=DEVICE)
    (T.uniform4x if four_words else T.uniform)[(cdiv(n, 1024),)](
        r, n, seed, BLOCK=1024)
    # Both kernels draw Triton's numbers (blocc's Philox is Triton's).
    want = torch.where(r > p, x.double() / (1 - p), 0).float()
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}

    def launcher(kernel, out):
        def run(config):
            block, warps = config
            kernel[(cdiv(n, block),)](x, out, n, p, seed, BLOCK=block,
                                      num_warps=warps)
        return run
    suffix = "4x" if four_words else ""
    words = ("four elements per Philox counter" if four_words
             else "a Philox counter per element")
    blocc_config, blocc_run = fastest(
        launcher(getattr(B, "seeded_dropout" + suffix), outs["blocc"]),
        DROPOUT_CONFIGS)
    triton_config, triton_run = fastest(
        launcher(getattr(T, "seeded_dropout" + suffix), outs["triton"]),
        DROPOUT_CONFIGS)
    poison(outs.values())
    drop = torch.compile(lambda a: F.dropout(a, p, training=True))
    return ("GB/s", 8 * n, {
        "blocc": (blocc_run, outs["blocc"]),
        "triton": (triton_run, outs["triton"]),
        # torch draws its own random numbers.
        "torch": (unchecked(lambda: F.dropout(x, p, training=True)), None),
        "torch.compile": (unchecked(lambda: drop(x)), None),
        "copy (ceiling)": copy_column(8 * n),
    }, want, (1e-6, 0),
        f"seed and offsets only, {words}; "
        f"blocc BLOCK={blocc_config[0]} warps={blocc_config[1]}, Triton "
        f"BLOCK={triton_config[0]} warps={triton_config[1]} (fastest of "
        f"{len(DROPOUT_CONFIGS)} each)")


def dropout4x(n):
    return dropout(n, four_words=True)


def layer_norm_backward(n, rows=4096):
    x = torch.randn(rows, n, device=DEVICE) + 2
    w, b = torch.rand(n, device=DEVICE) + 0.5, torch.randn(n, device=DEVICE)
    dy = torch.randn(rows, n, device=DEVICE)
    mean = x.double().mean(-1)
    rstd = 1 / torch.sqrt(x.double().var(-1, unbiased=False) + 1e-5)
    x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
    F.layer_norm(x64, (n,), w64, b64, 1e-5).backward(dy.double())
    want = torch.cat([x64.grad.flatten(), w64.grad, b64.grad]).float()
    mean, rstd = mean.float(), rstd.float()
    block = next_pow2(n)
    warps = 8 if block <= 4096 else 16
    programs = 4 * torch.cuda.get_device_properties(0).multi_processor_count
    results = {c: torch.full((rows * n + 2 * n,), float("nan"), device=DEVICE)
               for c in ("blocc", "triton")}
    partial = {c: torch.empty(2, programs, n, device=DEVICE)
               for c in ("blocc", "triton")}

    def two_kernels(dx_kernel, dwdb_kernel, column):
        res, (pdw, pdb) = results[column], partial[column]
        dx, dw, db = res[:rows * n], res[rows * n:rows * n + n], res[rows * n + n:]

        def launch():
            dx_kernel[(programs,)](dx, dy, pdw, pdb, x, w, mean, rstd, n, rows,
                                   n, BLOCK=block, num_warps=warps)
            dwdb_kernel[(cdiv(n, 128),)](pdw, pdb, dw, db, programs, n,
                                         BLOCK_M=32, BLOCK_N=128, num_warps=4)
        return launch
    xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
    y = F.layer_norm(xg, (n,), wg, bg, 1e-5)

    def eager():
        return torch.autograd.grad(y, (xg, wg, bg), dy, retain_graph=True)
    # The graph's backward runs again and again: keep its buffers.
    torch._functorch.config.donated_buffer = False
    yc = torch.compile(lambda a, c, d: F.layer_norm(a, (n,), c, d, 1e-5))(
        xg, wg, bg)

    def compiled():
        return torch.autograd.grad(yc, (xg, wg, bg), dy, retain_graph=True)
    # Bytes: x, dy read and dx written, plus the partial sums written and read.
    return ("GB/s", 4 * (3 * rows * n + 4 * programs * n), {
        "blocc": (two_kernels(B.layer_norm_bwd_dx, B.layer_norm_bwd_dwdb,
                              "blocc"), results["blocc"]),
        "triton": (two_kernels(T.layer_norm_bwd_dx, T.layer_norm_bwd_dwdb,
                               "triton"), results["triton"]),
        "torch": (unchecked(eager), None),
        "torch.compile": (unchecked(compiled), None),
        "copy (ceiling)": copy_column(4 * 3 * rows * n),
    }, want, (1e-3, 1e-3), f"{programs} programs striding over rows, "
       f"BLOCK={block} warps={warps}; dw, db from the partial sums")


SWEEPS = {
    "vector_add": (vector_add, [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 27], "f32"),
    "softmax": (softmax, [256, 1024, 4096, 8192, 16384], "f32"),
    "layer_norm": (layer_norm, [1024, 4096, 16384], "f32"),
    "gelu": (gelu, [1 << 20, 1 << 24, 1 << 27], "f32"),
    "matmul": (matmul, [1024, 2048, 4096, 8192], "f16"),
    "matmul_bf16": (matmul_bf16, [1024, 2048, 4096, 8192], "bf16"),
    "matmul_persistent": (matmul_persistent, [1024, 2048, 4096, 8192], "f16"),
    "matmul_tma": (matmul_tma, [1024, 2048, 4096, 8192], "f16"),
    "matmul_persistent_tma": (matmul_persistent_tma, [1024, 2048, 4096, 8192],
                              "f16"),
    "matmul_tma_bf16": (matmul_tma_bf16, [1024, 2048, 4096, 8192], "bf16"),
    "matmul_tma_ws": (matmul_tma_ws, [1024, 2048, 4096, 8192], "f16"),
    "matmul_tma_ws_bf16": (matmul_tma_ws_bf16, [1024, 2048, 4096, 8192],
                           "bf16"),
    "matmul_fp8": (matmul_fp8, [1024, 2048, 4096, 8192], "f8e4m3"),
    "matmul_fp8_k_major": (matmul_fp8_k_major, [1024, 2048, 4096, 8192],
                           "f8e4m3"),
    "attention": (attention, [512, 1024, 2048, 4096], "f16"),
    "attention_d128": (attention_d128, [512, 1024, 2048, 4096], "f16"),
    "attention_b4": (attention_b4, [1024, 4096], "f16"),
    "attention_b4_d128": (attention_b4_d128, [1024, 4096], "f16"),
    "attention_b4_causal": (attention_b4_causal, [1024, 4096], "f16"),
    "attention_b4_d128_causal": (attention_b4_d128_causal, [1024, 4096], "f16"),
    "attention_b4_ws": (attention_b4_ws, [1024, 4096], "f16"),
    "attention_b4_d128_ws": (attention_b4_d128_ws, [1024, 4096], "f16"),
    "attention_b4_causal_ws": (attention_b4_causal_ws, [1024, 4096], "f16"),
    "attention_b4_d128_causal_ws": (attention_b4_d128_causal_ws, [1024, 4096],
                                    "f16"),
    "attention_backward": (attention_backward, [1024, 4096], "f16"),
    "attention_backward_d128": (attention_backward_d128, [1024, 4096], "f16"),
    "attention_backward_causal": (attention_backward_causal, [1024, 4096],
                                  "f16"),
    "attention_backward_d128_causal": (attention_backward_d128_causal,
                                       [1024, 4096], "f16"),
    "rope": (rope, [256, 1024, 4096], "f32"),
    "mean": (mean, [1 << 20, 1 << 24, 1 << 28], "f32"),
    "dropout": (dropout, [1 << 20, 1 << 24, 1 << 27], "f32"),
    "dropout4x": (dropout4x, [1 << 20, 1 << 24, 1 << 27], "f32"),
    "layer_norm_backward": (layer_norm_backward, [1024, 2048, 4096], "f32"),
}


SIZE_LABELS = {"softmax": "row length, 4096 rows",
               "layer_norm": "row length, 4096 rows",
               "layer_norm_backward": "row length, 4096 rows",
               "matmul": "M = N = K", "matmul_bf16": "M = N = K",
               "matmul_persistent": "M = N = K",
               "matmul_tma": "M = N = K", "matmul_tma_bf16": "M = N = K",
               "matmul_tma_ws": "M = N = K", "matmul_tma_ws_bf16": "M = N = K",
               "matmul_persistent_tma": "M = N = K",
               "matmul_fp8": "M = N = K", "matmul_fp8_k_major": "M = N = K",
               "attention_d128": "sequence, 32 heads x 128",
               "attention": "sequence, 32 heads x 64",
               "attention_b4": "sequence, 4 x 32 heads x 64",
               "attention_b4_d128": "sequence, 4 x 32 heads x 128",
               "attention_b4_causal": "sequence, 4 x 32 heads x 64, causal",
               "attention_b4_d128_causal":
                   "sequence, 4 x 32 heads x 128, causal",
               "attention_b4_ws": "sequence, 4 x 32 heads x 64",
               "attention_b4_d128_ws": "sequence, 4 x 32 heads x 128",
               "attention_b4_causal_ws": "sequence, 4 x 32 heads x 64, causal",
               "attention_b4_d128_causal_ws":
                   "sequence, 4 x 32 heads x 128, causal",
               "attention_backward": "sequence, 4 x 32 heads x 64",
               "attention_backward_d128": "sequence, 4 x 32 heads x 128",
               "attention_backward_causal":
                   "sequence, 4 x 32 heads x 64, causal",
               "attention_backward_d128_causal":
                   "sequence, 4 x 32 heads x 128, causal",
               "rope": "sequence, 8 x 32 heads x 128"}


def mismatch(got, want, rtol, atol):
    """atol: a number, or a tensor broadcast against want."""
    got, want = got.float(), want.float()
    bad = ~((got - want).abs() <= atol + rtol * want.abs())
    if not bad.any():
        return None
    i = tuple(bad.nonzero()[0].tolist())
    return f"wrong at {list(i)}: {got[i].item()} vs {want[i].item()}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true",
                        help="the two largest sizes of each kernel only")
    parser.add_argument("--kernels", default=",".join(SWEEPS))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_sweep: no CUDA GPU (torch.cuda.is_available() is False)")
    harness.run(
        SWEEPS, args, suite="gpu-tutorials",
        hardware=torch.cuda.get_device_name(),
        notes=[f"torch {torch.__version__}, triton {triton.__version__}, "
               f"blocc {blocc.__version__}; timer triton.testing.do_bench "
               "(median)"],
        bench=bench, wait=torch.cuda.synchronize, mismatch=mismatch,
        size_labels=SIZE_LABELS)


if __name__ == "__main__":
    main()
