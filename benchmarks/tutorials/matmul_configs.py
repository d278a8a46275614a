"""Tutorial 03's matmul on the GPU over its tile sizes, warps and stages,
at one problem size, checked against float64 first: which configuration
to run (and autotune over), measured rather than guessed.

    python3 benchmarks/tutorials/matmul_configs.py [--n 4096]
        [--dtypes f16,bf16,fp8] [--configs 128x128x32x4x3,...] [--out F.json]

Prints TFLOP/s per configuration (BLOCK_MxBLOCK_NxBLOCK_KxWARPSxSTAGES)
beside cuBLAS (torch's a @ b; for fp8, torch._scaled_mm) and Triton's
tutorial kernel with the same configuration, in the same run. fp8 is
matmul_fp8 on e4m3 inputs scaled per tensor, over BLOCK_K of 64 and 128
(bytes, as f16's 32 and 64 are 64 and 128 bytes). With DISABLE_MMA_V3=1 in the
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
import harness  # noqa: E402
import triton_kernels as T  # noqa: E402
from gpu_sweep import quantize_e4m3  # noqa: E402

CONFIGS = [(m, n, k, w, s)
           for m, n, k, w, s in itertools.product(
               (64, 128, 256), (64, 128, 256), (32, 64), (4, 8), (2, 3, 4))
           if m * n >= 128 * 64 and m * n // (w * 32) <= 128 and
           m * n // (w * 32) >= 32]
FP8_CONFIGS = [(m, n, k * 2, w, s) for m, n, k, w, s in CONFIGS]
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def parse_configs(text):
    return [tuple(int(x) for x in c.split("x")) for c in text.split(",")]


def bench(fn):
    return triton.testing.do_bench(fn, return_mode="median")


def problem(name, n):
    """One dtype's n^3 product: (the float64 reference, the largest error
    allowed, cuBLAS's launch, and blocc's and Triton's, which take
    (out, grid) and the launch's options)."""
    strides = (n, n, n, n, 1, n, 1, n, 1)  # M, N, K and the three strides
    if name == "fp8":
        a, scale_a = quantize_e4m3(torch.rand(n, n, device="cuda") - 0.5)
        b, scale_b = quantize_e4m3(torch.rand(n, n, device="cuda") - 0.5)
        want = ((a.double() @ b.double()) * (scale_a * scale_b)).float()
        b_cm = b.t().contiguous().t()  # torch._scaled_mm takes B so
        sa, sb = (torch.tensor(s, device="cuda") for s in (scale_a, scale_b))

        def cublas():
            torch._scaled_mm(a, b_cm, scale_a=sa, scale_b=sb,
                             out_dtype=torch.float32, use_fast_accum=True)

        def run(out, grid, **options):
            B.matmul_fp8[grid](a.view(torch.uint8), b.view(torch.uint8), out,
                               scale_a, scale_b, *strides, **options)

        def run_triton(out, grid, **options):
            T.matmul_fp8[grid](a, b, out, scale_a, scale_b, *strides,
                               **options)
        # fp8 tensor cores keep about 14 bits of each instruction's sum
        # (gpu_sweep.py's matmul_fp8 says why this bound): the relative
        # part at the largest |c| (about 5 sqrt(n) / 12) and the absolute.
        error = (n / 32 + 2) * 2**-13
        return (want, error * 9 * math.sqrt(n) / 12, cublas, run, run_triton)
    a = torch.rand(n, n, device="cuda", dtype=DTYPES[name]) - 0.5
    b = torch.rand(n, n, device="cuda", dtype=DTYPES[name]) - 0.5
    kernel = B.matmul if name == "f16" else B.matmul_bf16

    def run(out, grid, **options):
        kernel[grid](a, b, out, *strides, **options)

    def run_triton(out, grid, **options):
        T.matmul[grid](a, b, out, *strides, **options)
    return ((a.double() @ b.double()).float(), 1e-3 * math.sqrt(n),
            lambda: a @ b, run, run_triton)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtypes", default="f16,bf16")
    parser.add_argument("--configs", help="only these, as BMxBNxBKxWxS,...")
    parser.add_argument("--out")
    args = parser.parse_args()
    n, flops = args.n, 2 * args.n ** 3
    rows = []
    triton_label = ("Triton (mma.sync)" if os.environ.get("DISABLE_MMA_V3")
                    else "Triton")
    for name in args.dtypes.split(","):
        want, tolerance, cublas_run, blocc_run, triton_run = problem(name, n)
        cublas = flops / bench(cublas_run) / 1e9
        print(f"{name} {n}^3: cuBLAS {cublas:.1f} TFLOP/s")
        configs = (parse_configs(args.configs) if args.configs else
                   FP8_CONFIGS if name == "fp8" else CONFIGS)
        for bm, bn, bk, warps, stages in configs:
            out = torch.full((n, n), float("nan"), device="cuda")
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
            options = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8,
                           num_warps=warps, num_stages=stages)

            def run(o=out):
                blocc_run(o, grid, **options)

            def run_triton(o=torch.empty_like(out)):
                triton_run(o, grid, **options)
            label = f"{bm}x{bn}x{bk}x{warps}x{stages}"
            try:
                run()
                torch.cuda.synchronize()
                err = (out - want).abs().max().item()
                ok = err <= tolerance
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
                           **harness.provenance(), blocc=blocc.__version__,
                           n=n, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
