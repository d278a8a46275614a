"""Peers of blocc_bench_gpu's vector add, on the same GPU: a Triton kernel
(one masked block per program, as blocc's), torch.add, and the device copy
(torch's copy_), each the median of triton.testing.do_bench, bandwidth as
bytes read plus written. Run where torch and triton are installed:

    python3 benchmarks/gpu/triton_vector_add.py 26 28
"""
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
    print("device:", torch.cuda.get_device_name(0), "triton", triton.__version__,
          "torch", torch.__version__)
    for log2n in [int(a) for a in sys.argv[1:]] or [26]:
        n = 1 << log2n
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        copy_ms = triton.testing.do_bench(lambda: out.copy_(x), return_mode="median")
        print(f"\nn = 2^{log2n}: torch copy_ {copy_ms:.3f} ms, {gbs(8 * n, copy_ms):.1f} GB/s")
        torch_ms = triton.testing.do_bench(lambda: torch.add(x, y, out=out),
                                           return_mode="median")
        print(f"torch.add                {torch_ms:10.3f} ms {gbs(12 * n, torch_ms):10.1f} GB/s")
        for block in (1024, 2048, 4096):
            for warps in (4, 8):
                grid = (triton.cdiv(n, block),)
                ms = triton.testing.do_bench(
                    lambda: add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps),
                    return_mode="median")
                assert torch.equal(out, x + y)
                print(f"triton BLOCK={block} warps={warps} {ms:10.3f} ms "
                      f"{gbs(12 * n, ms):10.1f} GB/s")


if __name__ == "__main__":
    main()
