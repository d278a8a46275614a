"""Tutorial 06's attention on the GPU over its block sizes, warps and
stages, at one problem size, checked against float64 first: which
configuration to run (and autotune over), measured rather than guessed.

    python3 benchmarks/tutorials/attention_configs.py [--seq 4096]
        [--batch 4] [--out attention-configs.json] [--backward]
        [--configs 64x64x4,32x128x4x3] [--dims 64,128] [--causal false]

Prints TFLOP/s per configuration, head dimensions 64 and 128, causal and
not, beside torch's scaled_dot_product_attention in the same run. With
--backward, the backward kernels instead: attention_bwd_dkdv's and
attention_bwd_dq's configurations each timed alone (ms), beside Triton's
kernels of the same algorithm at the same configuration, then the best
of each with the preprocess kernel as one backward pass, beside SDPA's
backward.
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
from gpu_sweep import attention_backward_reference, attention_reference  # noqa: E402
import harness  # noqa: E402
import triton_kernels as T  # noqa: E402

CONFIGS = [dict(BLOCK_M=m, BLOCK_N=n, num_warps=w, num_stages=s)
           for m, n, w, s in itertools.product((64, 128), (32, 64, 128), (4, 8),
                                               (2, 3))
           if m % (16 * w) == 0]

# The backward kernels: a dot's rows (BLOCK_N for dk and dv, BLOCK_M for
# dq) are split over the warps, 16 rows each at least.
BWD_BLOCKS = [dict(BLOCK_M=m, BLOCK_N=n, num_warps=w, num_stages=s)
              for m, n, w, s in itertools.product((16, 32, 64, 128),
                                                  (16, 32, 64, 128), (4, 8),
                                                  (1, 2, 3, 4))]
DKDV_CONFIGS = [c for c in BWD_BLOCKS if c["BLOCK_N"] % (16 * c["num_warps"]) == 0
                and c["BLOCK_M"] <= 64]
DQ_CONFIGS = [c for c in BWD_BLOCKS if c["BLOCK_M"] % (16 * c["num_warps"]) == 0
              and c["BLOCK_N"] <= 64]


def chosen(configs, wanted):
    """The configurations named by --configs (BLOCK_MxBLOCK_NxWARPS, or
    with xSTAGES after it), all where it names none."""
    if not wanted:
        return configs
    named = [tuple(int(x) for x in c.split("x")) for c in wanted.split(",")]
    return [c for c in configs
            if (c["BLOCK_M"], c["BLOCK_N"], c["num_warps"]) in named
            or (c["BLOCK_M"], c["BLOCK_N"], c["num_warps"],
                c["num_stages"]) in named]


# Each backward configuration runs in blocc and in Triton's kernels of the
# same algorithm (triton_kernels.py): which kernel trails Triton, and by
# how much.
IMPLEMENTATIONS = (("blocc", B), ("triton", T))


def timed_launch(launch, out, want, written):
    """(within bounds, median ms) of `launch`, which writes `written()`
    into `out` (poisoned first), checked as gpu_sweep.py checks the
    gradients (within 2^-8 of each one's largest element); None where it
    does not compile."""
    out.fill_(float("nan"))
    try:
        launch()
        torch.cuda.synchronize()
        got = written().float()
        atol = want.abs().amax(dim=(1, 2, 3), keepdim=True)
        ok = bool(((got - want).abs() <= 2**-8 * (atol + want.abs())).all())
        return ok, triton.testing.do_bench(launch, return_mode="median")
    except Exception:  # noqa: BLE001 (a config may not compile)
        return None


def backward(args, dims, causal_cases):
    """The backward kernels' configurations; returns the JSON rows."""
    n, seq, rows = args.batch * args.heads, args.seq, []
    for dim, causal in itertools.product(dims, causal_cases):
        q, k, v, dout = (torch.rand(n, seq, dim, device="cuda",
                                    dtype=torch.float16) - 0.5
                         for _ in range(4))
        scale = 1 / math.sqrt(dim)
        want = attention_backward_reference(q, k, v, dout, scale, causal)
        out = torch.empty_like(q)
        lse, delta = (torch.empty(n, seq, device="cuda") for _ in range(2))
        B.attention_fwd_lse[(triton.cdiv(seq, 64), n)](
            q, k, v, out, lse, seq, scale, HEAD_DIM=dim, BLOCK_M=64,
            BLOCK_N=64, CAUSAL=causal, num_warps=4)

        def preprocess():
            B.attention_bwd_preprocess[(triton.cdiv(n * seq, 64),)](
                out, dout, delta, n * seq, HEAD_DIM=dim, BLOCK_M=64)
        preprocess()
        flops = 10 * n * seq * seq * dim // (2 if causal else 1)
        q4, k4, v4 = (t.view(args.batch, args.heads, seq, dim).detach()
                      .requires_grad_() for t in (q, k, v))
        o4 = F.scaled_dot_product_attention(q4, k4, v4, is_causal=causal)
        sdpa = triton.testing.do_bench(lambda: torch.autograd.grad(
            o4, (q4, k4, v4), dout.view(o4.shape), retain_graph=True),
            return_mode="median")
        print(f"d={dim} causal={causal}: SDPA backward {sdpa:.3f} ms "
              f"({flops / sdpa / 1e9:.1f} TFLOP/s)")
        grads = torch.empty((3,) + tuple(q.shape), device="cuda",
                            dtype=torch.float16)

        def dkdv(kernels, c):
            kernels.attention_bwd_dkdv[(triton.cdiv(seq, c["BLOCK_N"]), n)](
                q, k, v, dout, lse, delta, grads[1], grads[2], seq, scale,
                HEAD_DIM=dim, CAUSAL=causal, **c)

        def dq(kernels, c):
            kernels.attention_bwd_dq[(triton.cdiv(seq, c["BLOCK_M"]), n)](
                q, k, v, dout, lse, delta, grads[0], seq, scale,
                HEAD_DIM=dim, CAUSAL=causal, **c)
        # kernel: (its configurations, its launch, the gradients it writes)
        launches = {"dkdv": (chosen(DKDV_CONFIGS, args.configs), dkdv, (1, 3)),
                    "dq": (chosen(DQ_CONFIGS, args.configs), dq, (0, 1))}
        best = {}
        for kernel, (configs, launch, (lo, hi)) in launches.items():
            for config in configs:
                timed = {name: timed_launch(
                    lambda: launch(kernels, config), grads, want[lo:hi],
                    lambda: grads[lo:hi]) for name, kernels in IMPLEMENTATIONS}
                if timed["blocc"] is None:
                    print(f"  {kernel} {config}: does not compile")
                    continue
                ok, ms = timed["blocc"]
                theirs = timed["triton"]
                print(f"  {kernel} {config}: {ms:.3f} ms"
                      + ("" if ok else "  WRONG")
                      + (f", Triton {theirs[1]:.3f} ms ({theirs[1] / ms:.2f}x)"
                         if theirs and theirs[0] else ""))
                rows.append(dict(dim=dim, causal=causal, kernel=kernel,
                                 **config, ok=ok, ms=ms, sdpa_ms=sdpa,
                                 triton_ms=theirs[1] if theirs and theirs[0]
                                 else None))
                if ok and (kernel not in best or ms < best[kernel][1]):
                    best[kernel] = (config, ms)
        if len(best) == 2:
            total = (triton.testing.do_bench(preprocess, return_mode="median")
                     + best["dkdv"][1] + best["dq"][1])
            print(f"  best: dkdv {best['dkdv'][0]}, dq {best['dq'][0]}: "
                  f"{total:.3f} ms with the preprocess, "
                  f"{flops / total / 1e9:.1f} TFLOP/s ({sdpa / total:.2f}x "
                  "SDPA)")
    return rows


def provenance():
    """What a result file records of its run: device, date, versions and
    the command."""
    return dict(device=torch.cuda.get_device_name(), **harness.provenance(),
                blocc=blocc.__version__, torch=torch.__version__,
                triton=triton.__version__)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--configs",
                        help="only these, as BLOCK_MxBLOCK_NxWARPS[xSTAGES]"
                             ",...")
    parser.add_argument("--causal", default="false,true",
                        help="the cases to run: false, true or both")
    parser.add_argument("--dims", default="64,128")
    parser.add_argument("--out")
    parser.add_argument("--backward", action="store_true",
                        help="the backward kernels' configurations")
    args = parser.parse_args()
    causal_cases = [c == "true" for c in args.causal.split(",")]
    if args.backward:
        rows = backward(args, [int(d) for d in args.dims.split(",")],
                        causal_cases)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(dict(provenance(), seq=args.seq,
                               heads=args.batch * args.heads, backward=True,
                               rows=rows), f, indent=1)
        return
    configs = chosen(CONFIGS, args.configs)
    n, seq = args.batch * args.heads, args.seq
    rows = []
    dims = [int(d) for d in args.dims.split(",")]
    for dim, causal in itertools.product(dims, causal_cases):
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
            json.dump(dict(provenance(), seq=seq, heads=n, rows=rows), f,
                      indent=1)


if __name__ == "__main__":
    main()
