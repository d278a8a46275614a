"""Launch overhead from Python: host time per launch of a cached vector add
of 1024 float32 elements (one program of BLOCK = 1024), blocc's shipped
kernel next to the same kernel written in Triton and next to torch.add, on
the same tensors in one process. Each sample times a burst of launches on
the host clock; the GPU is waited for (one synchronize) after the burst,
outside the timed span; the figure is the median sample, in microseconds
per launch. Every result is checked.

    python3 benchmarks/gpu/python_launch.py [--samples 50] [--burst 100]
        [--json FILE] [--device cuda|cpu]

--device cuda (the default) needs torch; Triton is timed where it is
installed. --device cpu times blocc alone on host memory (numpy arrays,
and torch CPU tensors where torch is installed), on the CPU backend: the
binding's cost without a GPU, next to torch.add on the same CPU tensors.
--json writes the records for benchmarks/gpu/report.py (kernel `launch
overhead (Python)`: blocc's value, and one peer record each for Triton
and torch.add).

On a GPU host that cannot build blocc (scripts/gpu-python's bundle):

    bash scripts/gpu-python run python3 benchmarks/gpu/python_launch.py \\
        --json $OUT/python_launch.json
"""
import json
import statistics
import sys
import time

import numpy as np

import blocc
from blocc.kernels import add

N = 1024
KERNEL = "launch overhead (Python)"


def per_launch_us(launch, wait, samples, burst):
    """Median host microseconds per launch over `samples` bursts."""
    for _ in range(burst):
        launch()
    wait()
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(burst):
            launch()
        times.append((time.perf_counter() - start) * 1e6 / burst)
        wait()
    return statistics.median(times)


def triton_add():
    """The vector add in Triton, or None where Triton is not installed."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def triton_vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets,
                 tl.load(x_ptr + offsets, mask=mask) +
                 tl.load(y_ptr + offsets, mask=mask), mask=mask)

    return triton_vector_add


def cuda_launches():
    """(peer, config, launch, expected output check) on torch CUDA tensors."""
    import torch
    x = torch.rand(N, device="cuda")
    y = torch.rand(N, device="cuda")
    out = torch.empty_like(x)
    expected = x + y
    peers = [("blocc", "blocc.kernels.add[(1,)](x, y, out, n, BLOCK=1024)",
              lambda: add[(1,)](x, y, out, N, BLOCK=1024))]
    triton_kernel = triton_add()
    if triton_kernel is not None:
        peers.append(("triton", "triton_vector_add[(1,)](x, y, out, n, "
                      "BLOCK=1024)",
                      lambda: triton_kernel[(1,)](x, y, out, N, BLOCK=1024)))
    peers.append(("torch.add", "torch.add(x, y, out=out)",
                  lambda: torch.add(x, y, out=out)))

    def check(peer):
        torch.cuda.synchronize()
        if not torch.equal(out, expected):
            sys.exit(f"python_launch.py: {peer}: wrong result")
        out.fill_(float("nan"))

    return peers, torch.cuda.synchronize, check


def cpu_launches():
    """blocc on host memory: numpy arrays, torch CPU tensors, torch.add."""
    rng = np.random.default_rng(1)
    x, y = rng.random((2, N), dtype=np.float32)
    out = np.empty_like(x)
    outputs = {"blocc": out}
    peers = [("blocc", "numpy arrays, CPU backend",
              lambda: add[(1,)](x, y, out, N, BLOCK=1024))]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
        tout = torch.empty_like(tx)
        outputs["blocc, torch CPU tensors"] = tout.numpy()
        outputs["torch.add"] = tout.numpy()
        peers.append(("blocc, torch CPU tensors", "torch CPU tensors, CPU "
                      "backend", lambda: add[(1,)](tx, ty, tout, N,
                                                   BLOCK=1024)))
        peers.append(("torch.add", "torch.add(x, y, out=out), CPU tensors",
                      lambda: torch.add(tx, ty, out=tout)))

    def check(peer):
        got = outputs[peer]
        if not np.array_equal(got, x + y):
            sys.exit(f"python_launch.py: {peer}: wrong result")
        got.fill(np.nan)

    return peers, lambda: None, check


def main():
    samples, burst, json_path, device = 50, 100, None, "cuda"
    args = sys.argv[1:]
    while args:
        arg = args.pop(0)
        if arg in ("--samples", "--burst", "--json", "--device") and args:
            value = args.pop(0)
            if arg == "--samples":
                samples = int(value)
            elif arg == "--burst":
                burst = int(value)
            elif arg == "--json":
                json_path = value
            else:
                device = value
        else:
            sys.exit("usage: python_launch.py [--samples N] [--burst N] "
                     "[--json FILE] [--device cuda|cpu]")
    peers, wait, check = cuda_launches() if device == "cuda" else cpu_launches()
    print(f"host time per launch, vector add of {N} float32 on one program "
          f"({device}; median of {samples} bursts of {burst})")
    results = {}
    for peer, config, launch in peers:
        results[peer] = (config, per_launch_us(launch, wait, samples, burst))
        check(peer)
        print(f"  {peer:<26} {results[peer][1]:7.2f} us   {config}")
    if device == "cuda":
        blocc_us = results["blocc"][1]
        for peer, bar in (("torch.add", 1.0), ("triton", 0.3)):
            if peer in results:
                ratio = blocc_us / results[peer][1]
                print(f"  blocc / {peer}: {ratio:.2f}x (bar <= {bar}x)")
    if json_path:
        write_json(json_path, device, results)


def write_json(path, device, results):
    def record(**fields):
        return dict(kernel=KERNEL if device == "cuda" else KERNEL + ", CPU",
                    shape=[N], dtype="f32", metric="us",
                    higher_is_better=False, **fields)

    config, blocc_us = results.pop("blocc")
    data = {"results": [record(config=config, blocc=blocc_us, peer="none")],
            "peer_results": [record(peer=peer, config=config, value=value)
                             for peer, (config, value) in results.items()]}
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
