"""Peers of blocc_bench_gpu's vector add, on the same GPU: a Triton kernel
(one masked block per program, as blocc's), torch.add, and the device copy
(torch's copy_), each the median of triton.testing.do_bench, bandwidth as
bytes read plus written. Run where torch and triton are installed:

    python3 benchmarks/gpu/triton_vector_add.py 26 28 [--json FILE]

--json writes the figures for benchmarks/gpu/report.py.
"""
import json
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def gbs(nbytes, ms):
    return nbytes / (ms * 1e6)


def main():
    args, json_path = sys.argv[1:], None
    if "--json" in args:
        at = args.index("--json")
        json_path = args[at + 1]
        del args[at:at + 2]
    print("device:", torch.cuda.get_device_name(0), "triton", triton.__version__,
          "torch", torch.__version__)
    records = []

    def record(n, peer, config, value):
        records.append({"kernel": "vector_add", "shape": [n], "dtype": "f32",
                        "metric": "GB/s", "peer": peer, "config": config,
                        "value": value})

    for log2n in [int(a) for a in args] or [26]:
        n = 1 << log2n
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        copy_ms = triton.testing.do_bench(lambda: out.copy_(x), return_mode="median")
        print(f"\nn = 2^{log2n}: torch copy_ {copy_ms:.3f} ms, {gbs(8 * n, copy_ms):.1f} GB/s")
        record(n, "torch copy_", "8 bytes per element", gbs(8 * n, copy_ms))
        torch_ms = triton.testing.do_bench(lambda: torch.add(x, y, out=out),
                                           return_mode="median")
        print(f"torch.add                {torch_ms:10.3f} ms {gbs(12 * n, torch_ms):10.1f} GB/s")
        record(n, "torch", "torch.add", gbs(12 * n, torch_ms))
        for block in (1024, 2048, 4096):
            for warps in (4, 8):
                grid = (triton.cdiv(n, block),)
                ms = triton.testing.do_bench(
                    lambda: add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps),
                    return_mode="median")
                assert torch.equal(out, x + y)
                print(f"triton BLOCK={block} warps={warps} {ms:10.3f} ms "
                      f"{gbs(12 * n, ms):10.1f} GB/s")
                record(n, "triton", f"BLOCK={block} warps={warps}",
                       gbs(12 * n, ms))
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"peer_results": records}, f, indent=1)


if __name__ == "__main__":
    main()
