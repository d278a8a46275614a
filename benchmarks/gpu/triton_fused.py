"""Peers of blocc_bench_gpu_fused, on the same GPU: row softmax f32 and
layer norm forward (f32, f16) written in Triton in the same forms as
blocc's kernels (one row per program, the row in one block; layer norm
also as loops over column blocks), torch.softmax and
torch.nn.functional.layer_norm, and the device copy (torch's copy_), each
the median of triton.testing.do_bench, bandwidth as bytes read plus
written (counted as blocc_bench_gpu_fused counts them). Run where torch
and triton are installed:

    python3 benchmarks/gpu/triton_fused.py [rows] [--json FILE]

--json writes the figures for benchmarks/gpu/report.py.
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

# The tutorials' Triton kernels are these benchmarks' too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tutorials"))
from triton_kernels import layer_norm as layer_norm_loop  # noqa: E402
from triton_kernels import softmax as softmax_row  # noqa: E402


@triton.jit
def layer_norm_row(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, n, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n
    centered = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / n + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * n + cols, centered * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


def gbs(nbytes, ms):
    return nbytes / (ms * 1e6)


def bench(f):
    return triton.testing.do_bench(f, return_mode="median")


def main():
    args, json_path = sys.argv[1:], None
    if "--json" in args:
        at = args.index("--json")
        json_path = args[at + 1]
        del args[at:at + 2]
    rows = int(args[0]) if args else 4096
    print("device:", torch.cuda.get_device_name(0), "triton", triton.__version__,
          "torch", torch.__version__)
    records = []

    def record(kernel, n, dtype, peer, config, value):
        records.append({"kernel": kernel, "shape": [rows, n], "dtype": dtype,
                        "metric": "GB/s", "peer": peer, "config": config,
                        "value": value})

    a = torch.ones(rows * 16384, device="cuda")
    c = torch.empty_like(a)
    ms = bench(lambda: c.copy_(a))
    print(f"torch copy_ of {a.numel()} floats: {gbs(8 * a.numel(), ms):.1f} GB/s")

    print("\nsoftmax f32, rows =", rows)
    for n in (256, 1024, 4096, 8192, 16384):
        x = torch.randn(rows, n, device="cuda") * 20
        y = torch.empty_like(x)
        block = triton.next_power_of_2(n)
        want = torch.softmax(x, dim=1)
        for warps in (4, 8, 16):
            if block // (32 * warps) < 1:
                continue
            ms = bench(lambda: softmax_row[(rows,)](y, x, n, BLOCK=block,
                                                    num_warps=warps))
            assert torch.allclose(y, want, rtol=1e-4, atol=1e-7)
            print(f"triton N={n} BLOCK={block} warps={warps} {ms:9.4f} ms "
                  f"{gbs(8 * x.numel(), ms):9.1f} GB/s")
            record("softmax", n, "f32", "triton",
                   f"BLOCK={block} warps={warps}", gbs(8 * x.numel(), ms))
        ms = bench(lambda: torch.softmax(x, dim=1))
        print(f"torch.softmax N={n} {ms:9.4f} ms {gbs(8 * x.numel(), ms):9.1f} GB/s")
        record("softmax", n, "f32", "torch", "torch.softmax",
               gbs(8 * x.numel(), ms))

    print("\nlayer norm forward, rows =", rows)
    for dtype, name in ((torch.float32, "f32"), (torch.float16, "f16")):
        for n in (1024, 4096, 16384):
            x = (torch.randn(rows, n, device="cuda") * 2).to(dtype)
            w = torch.rand(n, device="cuda").to(dtype) + 0.5
            b = torch.randn(n, device="cuda").to(dtype)
            y = torch.empty_like(x)
            mean = torch.empty(rows, device="cuda")
            rstd = torch.empty(rows, device="cuda")
            size = x.element_size()
            nbytes = 2 * x.numel() * size + 2 * n * size + 8 * rows
            want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(),
                                                  b.float(), 1e-5)
            block = triton.next_power_of_2(n)
            for warps in (4, 8, 16):
                if block // (32 * warps) < 1:
                    continue
                ms = bench(lambda: layer_norm_row[(rows,)](
                    x, y, w, b, mean, rstd, n, 1e-5, BLOCK=block,
                    num_warps=warps))
                assert torch.allclose(y.float(), want, rtol=2e-2, atol=2e-2)
                print(f"triton row {name} N={n} BLOCK={block} warps={warps} "
                      f"{ms:9.4f} ms {gbs(nbytes, ms):9.1f} GB/s")
                record("layer_norm_fwd", n, name, "triton",
                       f"row BLOCK={block} warps={warps}", gbs(nbytes, ms))
            loop_block = min(block, 65536 // size)
            warps = min(max(loop_block // 256, 1), 8)
            ms = bench(lambda: layer_norm_loop[(rows,)](
                x, y, w, b, mean, rstd, n, 1e-5, BLOCK=loop_block,
                num_warps=warps))
            assert torch.allclose(y.float(), want, rtol=2e-2, atol=2e-2)
            print(f"triton loop {name} N={n} BLOCK={loop_block} warps={warps} "
                  f"{ms:9.4f} ms {gbs(nbytes, ms):9.1f} GB/s")
            record("layer_norm_fwd", n, name, "triton",
                   f"loop BLOCK={loop_block} warps={warps}", gbs(nbytes, ms))
            ms = bench(lambda: torch.nn.functional.layer_norm(x, (n,), w, b, 1e-5))
            # torch writes no mean/rstd in inference: its bytes are x, y, w, b.
            print(f"torch layer_norm {name} N={n} {ms:9.4f} ms "
                  f"{gbs(2 * x.numel() * size + 2 * n * size, ms):9.1f} GB/s")
            # Compared by time: torch's figure counted with blocc's bytes.
            record("layer_norm_fwd", n, name, "torch",
                   "torch.nn.functional.layer_norm", gbs(nbytes, ms))
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"peer_results": records}, f, indent=1)


if __name__ == "__main__":
    main()
