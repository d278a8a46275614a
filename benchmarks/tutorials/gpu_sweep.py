"""The tutorials' kernels side by side on one GPU, in one process, on the
same torch tensors: blocc (blocc.kernels, launched from Python), the same
kernel in Triton (triton_kernels.py), PyTorch eager and torch.compile, and
the ceilings (the device copy for memory-bound kernels, cuBLAS for matmul,
torch's scaled_dot_product_attention for attention). Every column is
checked against a torch reference before it is timed, all with one timer:
triton.testing.do_bench (median of runs after warm-up, L2 flushed).

    python3 benchmarks/tutorials/gpu_sweep.py --out gpu-sweep.json [--quick]

Writes DESIGN.md's results format (a record per kernel, size and peer:
blocc's value, the peer's, blocc / peer) plus "series" (every column's
values per size) for benchmarks/tutorials/plot.py, and prints a table.
A column that fails its check or raises is reported and left out.
"""

import argparse
import datetime
import json
import math
import os
import sys

try:
    import torch
    import torch.nn.functional as F
    import triton
except ImportError as e:
    sys.exit(f"gpu_sweep: needs torch and triton with a CUDA GPU ({e})")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_kernels as T  # noqa: E402

import blocc  # noqa: E402
from blocc import kernels as B  # noqa: E402

DEVICE = "cuda"


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def cdiv(a, b):
    return (a + b - 1) // b


def next_pow2(n):
    return 1 << max(0, (n - 1).bit_length())


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


def softmax(n, rows=4096):
    x = torch.randn(rows, n, device=DEVICE) * 4
    want = torch.softmax(x.double(), -1).float()
    block = next_pow2(n)
    warps = 4 if block <= 1024 else 8 if block <= 4096 else 16
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    soft = torch.compile(lambda a: torch.softmax(a, -1))
    return ("GB/s", 8 * rows * n, {
        "blocc": (lambda: B.softmax[(rows,)](outs["blocc"], x, n, n, rows, n,
                                             BLOCK=block, num_warps=warps),
                  outs["blocc"]),
        "triton": (lambda: T.softmax[(rows,)](outs["triton"], x, n,
                                              BLOCK=block, num_warps=warps),
                   outs["triton"]),
        "torch": (lambda: torch.softmax(x, -1), None),
        "torch.compile": (lambda: soft(x), None),
        "copy (ceiling)": copy_column(8 * rows * n),
    }, want, (1e-5, 1e-7), f"one row per program, BLOCK={block} warps={warps}")


def layer_norm(n, rows=4096):
    x = torch.randn(rows, n, device=DEVICE) + 2
    w, b = torch.rand(n, device=DEVICE) + 0.5, torch.randn(n, device=DEVICE)
    want = F.layer_norm(x.double(), (n,), w.double(), b.double(), 1e-5).float()
    block = min(next_pow2(n), 4096)
    outs = {c: torch.full_like(x, float("nan")) for c in ("blocc", "triton")}
    mean, rstd = torch.empty(rows, device=DEVICE), torch.empty(rows, device=DEVICE)
    norm = torch.compile(lambda a: F.layer_norm(a, (n,), w, b, 1e-5))
    return ("GB/s", 8 * rows * n, {
        "blocc": (lambda: B.layer_norm_fwd[(rows,)](
            x, outs["blocc"], w, b, mean, rstd, n, n, 1e-5, BLOCK=block,
            num_warps=8), outs["blocc"]),
        "triton": (lambda: T.layer_norm[(rows,)](x, outs["triton"], w, b, n,
                                                 1e-5, BLOCK=block, num_warps=8),
                   outs["triton"]),
        "torch": (lambda: F.layer_norm(x, (n,), w, b, 1e-5), None),
        "torch.compile": (lambda: norm(x), None),
        "copy (ceiling)": copy_column(8 * rows * n),
    }, want, (1e-4, 1e-4), f"row loop, BLOCK={block} warps=8")


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


def matmul(n):
    a = torch.rand(n, n, device=DEVICE, dtype=torch.float16) - 0.5
    b = torch.rand(n, n, device=DEVICE, dtype=torch.float16) - 0.5
    want = (a.double() @ b.double()).float()
    outs = {c: torch.full((n, n), float("nan"), device=DEVICE)
            for c in ("blocc", "triton")}
    grid = (cdiv(n, 128) * cdiv(n, 64),)
    tiles = dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    return ("TFLOP/s", 2 * n ** 3, {
        "blocc": (lambda: B.matmul[grid](a, b, outs["blocc"], n, n, n, n, 1, n,
                                         1, n, 1, num_warps=4, **tiles),
                  outs["blocc"]),
        "triton": (lambda: T.matmul[grid](a, b, outs["triton"], n, n, n, n, 1,
                                          n, 1, n, 1, num_warps=4, **tiles),
                   outs["triton"]),
        "cuBLAS (ceiling)": (lambda: a @ b, None),
    }, want, (0, 1e-3 * math.sqrt(n)), "128x64x32 tiles, GROUP_M=8, 4 warps "
       "(dot on FMA units)")


def attention(seq, heads=32, dim=64):
    q, k, v = (torch.rand(heads, seq, dim, device=DEVICE, dtype=torch.float16)
               - 0.5 for _ in range(3))
    scale = 1 / math.sqrt(dim)
    want = torch.softmax((q.double() @ k.double().transpose(1, 2)) * scale,
                         -1) @ v.double()
    outs = {c: torch.full_like(q, float("nan")) for c in ("blocc", "triton")}
    grid = (cdiv(seq, 64), heads)

    def naive(q_, k_, v_):
        return torch.softmax((q_ @ k_.transpose(1, 2)) * scale, -1) @ v_
    compiled = torch.compile(naive)
    return ("TFLOP/s", 4 * heads * seq * seq * dim, {
        "blocc": (lambda: B.attention[grid](q, k, v, outs["blocc"], seq, scale,
                                            HEAD_DIM=dim, BLOCK_M=64, BLOCK_N=64,
                                            CAUSAL=False, num_warps=4),
                  outs["blocc"]),
        "triton": (lambda: T.attention[grid](q, k, v, outs["triton"], seq, scale,
                                             HEAD_DIM=dim, BLOCK_M=64,
                                             BLOCK_N=64, num_warps=4),
                   outs["triton"]),
        "torch": (lambda: naive(q, k, v), None),
        "torch.compile": (lambda: compiled(q, k, v), None),
        "SDPA (ceiling)": (lambda: F.scaled_dot_product_attention(
            q[None], k[None], v[None]), None),
    }, want.float(), (1e-2, 5e-3), "64x64 blocks, 4 warps")


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


def mean(n):
    x = torch.rand(n, device=DEVICE) * 4 - 1
    want = x.double().mean().float().reshape(1)
    block = 4096
    programs = min(cdiv(n, block), 4 * torch.cuda.get_device_properties(0)
                   .multi_processor_count)
    partials = {c: torch.empty(programs, device=DEVICE) for c in ("blocc", "triton")}
    outs = {c: torch.full((1,), float("nan"), device=DEVICE)
            for c in ("blocc", "triton")}

    def two_stages(kernel, column):
        def launch():
            kernel[(programs,)](x, partials[column], n, 1.0, BLOCK=block,
                                num_warps=8)
            kernel[(1,)](partials[column], outs[column], programs, 1.0 / n,
                         BLOCK=block, num_warps=8)
        return launch
    m = torch.compile(lambda a: a.mean())
    return ("GB/s", 4 * n, {
        "blocc": (two_stages(B.partial_sums, "blocc"), outs["blocc"]),
        "triton": (two_stages(T.partial_sums, "triton"), outs["triton"]),
        "torch": (lambda: x.mean().reshape(1), None),
        "torch.compile": (lambda: m(x).reshape(1), None),
        "copy (ceiling)": copy_column(4 * n),
    }, want, (1e-5, 0), f"two stages, {programs} then 1 program, BLOCK={block}")


SWEEPS = {
    "vector_add": (vector_add, [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 27], "f32"),
    "softmax": (softmax, [256, 1024, 4096, 8192, 16384], "f32"),
    "layer_norm": (layer_norm, [1024, 4096, 16384], "f32"),
    "gelu": (gelu, [1 << 20, 1 << 24, 1 << 27], "f32"),
    "matmul": (matmul, [512, 1024, 2048, 4096], "f16"),
    "attention": (attention, [512, 1024, 2048, 4096], "f16"),
    "rope": (rope, [256, 1024, 4096], "f32"),
    "mean": (mean, [1 << 20, 1 << 24, 1 << 28], "f32"),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true",
                        help="the two largest sizes of each kernel only")
    parser.add_argument("--kernels", default=",".join(SWEEPS))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_sweep: no CUDA GPU (torch.cuda.is_available() is False)")
    results, series, notes = [], [], []
    for name in args.kernels.split(","):
        make, sizes, dtype = SWEEPS[name]
        if args.quick:
            sizes = sizes[-2:]
        table = {"kernel": name, "dtype": dtype, "sizes": sizes, "columns": {}}
        for size in sizes:
            metric, work, columns, want, (rtol, atol), config = make(size)
            table["metric"] = metric
            values = {}
            for column, (launch, out) in columns.items():
                try:
                    got = launch()
                    torch.cuda.synchronize()
                    if out is not None:
                        got = out
                    if got is not None and "ceiling" not in column:
                        bad = ~torch.isclose(got.float(), want.float(), rtol=rtol,
                                             atol=atol)
                        if bad.any():
                            i = bad.nonzero()[0].tolist()
                            raise RuntimeError(
                                f"wrong at {i}: {got[tuple(i)].item()} vs "
                                f"{want[tuple(i)].item()}")
                    ms = bench(launch)
                    scale = 1e-9 if metric == "GB/s" else 1e-12
                    values[column] = work / (ms * 1e-3) * scale
                except Exception as e:  # noqa: BLE001 (a peer's failure is data)
                    notes.append(f"{name} {size} {column}: {type(e).__name__}: "
                                 f"{str(e).splitlines()[0][:200]}")
                    print("  skipped:", notes[-1])
            for column, value in values.items():
                table["columns"].setdefault(column, {})[str(size)] = value
            line = f"{name:<11} {size:>10} {metric:<7}" + "".join(
                f" {c}={v:.1f}" for c, v in values.items())
            print(line, flush=True)
            if "blocc" not in values:
                continue
            for column, value in values.items():
                if column == "blocc":
                    continue
                results.append({
                    "kernel": name, "shape": [size], "dtype": dtype,
                    "metric": metric, "higher_is_better": True,
                    "blocc": values["blocc"], "config": config, "peer": column,
                    "peer_value": value, "peer_config": "",
                    "ratio": values["blocc"] / value, "bar": "", "meets_bar": None})
        series.append(table)
    report = {
        "suite": "gpu-tutorials", "hardware": torch.cuda.get_device_name(),
        "date": datetime.date.today().isoformat(),
        "command": "python3 benchmarks/tutorials/gpu_sweep.py " +
                   " ".join(sys.argv[1:]),
        "notes": [f"torch {torch.__version__}, triton {triton.__version__}, "
                  f"blocc {blocc.__version__}; timer triton.testing.do_bench "
                  "(median)"] + notes,
        "results": results, "series": series}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
