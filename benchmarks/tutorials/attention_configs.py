"""Tutorial 06's attention on the GPU over its block sizes, warps and
stages, at one problem size, checked against float64 first: which
configuration to run (and autotune over), measured rather than guessed.

    python3 benchmarks/tutorials/attention_configs.py [--seq 4096]
        [--batch 4] [--out attention-configs.json]

Prints TFLOP/s per configuration, head dimensions 64 and 128, causal and
not, beside torch's scaled_dot_product_attention in the same run.
"""

import argparse
import itertools
import json
import math
import sys

try:
    import torch
    import torch.nn.functional as F
    import triton
except ImportError as e:
    sys.exit(f"attention_configs: needs torch and triton with a GPU ({e})")

import blocc
from blocc import kernels as B

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from gpu_sweep import attention_reference  # noqa: E402

CONFIGS = [dict(BLOCK_M=m, BLOCK_N=n, num_warps=w, num_stages=s)
           for m, n, w, s in itertools.product((64, 128), (32, 64, 128), (4, 8),
                                               (2, 3))
           if m % (16 * w) == 0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--configs",
                        help="only these, as BLOCK_MxBLOCK_NxWARPS,...")
    parser.add_argument("--dims", default="64,128")
    parser.add_argument("--out")
    args = parser.parse_args()
    configs = CONFIGS
    if args.configs:
        wanted = {tuple(int(x) for x in c.split("x"))
                  for c in args.configs.split(",")}
        configs = [c for c in CONFIGS if (c["BLOCK_M"], c["BLOCK_N"],
                                          c["num_warps"]) in wanted]
    n, seq = args.batch * args.heads, args.seq
    rows = []
    dims = [int(d) for d in args.dims.split(",")]
    for dim, causal in itertools.product(dims, (False, True)):
        q, k, v = (torch.rand(n, seq, dim, device="cuda", dtype=torch.float16)
                   - 0.5 for _ in range(3))
        scale = 1 / math.sqrt(dim)
        want = attention_reference(q, k, v, scale, causal)
        flops = 4 * n * seq * seq * dim // (2 if causal else 1)
        q4, k4, v4 = (t.view(args.batch, args.heads, seq, dim)
                      for t in (q, k, v))
        sdpa = triton.testing.do_bench(lambda: F.scaled_dot_product_attention(
            q4, k4, v4, is_causal=causal), return_mode="median")
        print(f"d={dim} causal={causal}: SDPA {flops / sdpa / 1e9:.1f} TFLOP/s")
        for config in configs:
            out = torch.full_like(q, float("nan"))
            grid = (triton.cdiv(seq, config["BLOCK_M"]), n)

            def run():
                B.attention[grid](q, k, v, out, seq, scale, HEAD_DIM=dim,
                                  CAUSAL=causal, **config)
            try:
                run()
                torch.cuda.synchronize()
                ok = torch.allclose(out.float(), want, rtol=1e-2, atol=5e-3)
                ms = triton.testing.do_bench(run, return_mode="median")
            except Exception as e:  # noqa: BLE001 (a config may not compile)
                print(f"  {config}: {str(e).splitlines()[0]}")
                continue
            tflops = flops / ms / 1e9
            rows.append(dict(dim=dim, causal=causal, **config, ok=ok,
                             tflops=tflops, sdpa_tflops=flops / sdpa / 1e9))
            print(f"  {config}: {tflops:.1f} TFLOP/s "
                  f"({tflops * sdpa * 1e9 / flops:.2f}x SDPA)"
                  + ("" if ok else "  WRONG"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(),
                           blocc=blocc.__version__, seq=seq, heads=n,
                           rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
