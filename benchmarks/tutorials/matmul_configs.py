"""Tutorial 03's matmul on the GPU over its tile sizes, warps and stages,
at one problem size, checked against float64 first: which configuration
to run (and autotune over), measured rather than guessed.

    python3 benchmarks/tutorials/matmul_configs.py [--n 4096]
        [--dtypes f16,bf16] [--configs 128x128x32x4x3,...] [--out F.json]

Prints TFLOP/s per configuration (BLOCK_MxBLOCK_NxBLOCK_KxWARPSxSTAGES)
beside cuBLAS (torch's a @ b) and Triton's tutorial kernel with the same
configuration, in the same run. With DISABLE_MMA_V3=1 in the
environment Triton compiles its dots to mma.sync rather than Hopper's
wgmma: the peer for what mma.sync alone reaches on an H100.
"""

import argparse
import itertools
import json
import math
import os
import sys

try:
    import torch
    import triton
except ImportError as e:
    sys.exit(f"matmul_configs: needs torch and triton with a GPU ({e})")

import blocc
from blocc import kernels as B

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import triton_kernels as T  # noqa: E402

CONFIGS = [(m, n, k, w, s)
           for m, n, k, w, s in itertools.product(
               (64, 128, 256), (64, 128, 256), (32, 64), (4, 8), (2, 3, 4))
           if m * n >= 128 * 64 and m * n // (w * 32) <= 128 and
           m * n // (w * 32) >= 32]
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def parse_configs(text):
    return [tuple(int(x) for x in c.split("x")) for c in text.split(",")]


def bench(fn):
    return triton.testing.do_bench(fn, return_mode="median")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtypes", default="f16,bf16")
    parser.add_argument("--configs", help="only these, as BMxBNxBKxWxS,...")
    parser.add_argument("--out")
    args = parser.parse_args()
    configs = parse_configs(args.configs) if args.configs else CONFIGS
    n, flops = args.n, 2 * args.n ** 3
    rows = []
    triton_label = ("Triton (mma.sync)" if os.environ.get("DISABLE_MMA_V3")
                    else "Triton")
    for name in args.dtypes.split(","):
        dtype = DTYPES[name]
        a = torch.rand(n, n, device="cuda", dtype=dtype) - 0.5
        b = torch.rand(n, n, device="cuda", dtype=dtype) - 0.5
        want = (a.double() @ b.double()).float()
        cublas = flops / bench(lambda: a @ b) / 1e9
        print(f"{name} {n}^3: cuBLAS {cublas:.1f} TFLOP/s")
        kernel = B.matmul if name == "f16" else B.matmul_bf16
        for bm, bn, bk, warps, stages in configs:
            out = torch.full((n, n), float("nan"), device="cuda")
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
            tiles = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)

            def run(k=kernel, o=out):
                k[grid](a, b, o, n, n, n, n, 1, n, 1, n, 1, num_warps=warps,
                        num_stages=stages, **tiles)

            def run_triton(o=torch.empty_like(out)):
                T.matmul[grid](a, b, o, n, n, n, n, 1, n, 1, n, 1,
                               num_warps=warps, num_stages=stages, **tiles)
            label = f"{bm}x{bn}x{bk}x{warps}x{stages}"
            try:
                run()
                torch.cuda.synchronize()
                err = (out - want).abs().max().item()
                ok = err <= 1e-3 * math.sqrt(n)
                tflops = flops / bench(run) / 1e9
            except Exception as e:  # noqa: BLE001 (a config may not compile)
                print(f"  {label}: {str(e).splitlines()[0]}")
                continue
            try:
                triton_tflops = flops / bench(run_triton) / 1e9
            except Exception:  # noqa: BLE001 (nor Triton's)
                triton_tflops = None
            rows.append(dict(dtype=name, config=label, ok=ok, tflops=tflops,
                             cublas_tflops=cublas,
                             triton_tflops=triton_tflops,
                             triton=triton_label))
            print(f"  {label}: {tflops:.1f} TFLOP/s ({tflops / cublas:.2f}x "
                  f"cuBLAS; {triton_label} {triton_tflops or 0:.1f})"
                  + ("" if ok else f"  WRONG (max error {err:.3g})"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(),
                           blocc=blocc.__version__, n=n, rows=rows), f,
                      indent=1)


if __name__ == "__main__":
    main()
