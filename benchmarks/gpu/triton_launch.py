"""Peers of blocc_bench_gpu_launch, on the same GPU:

- cold compile: Triton's first call of the row softmax kernel
  (triton_fused.py's softmax_row, 64 rows of N = 1024, 4 warps) in a fresh
  Python process whose Triton cache (TRITON_CACHE_DIR) is an empty
  temporary folder, until the GPU finishes: Triton's front end, its MLIR
  passes, LLVM, ptxas, the cubin's load and the launch (torch and triton
  are imported and the CUDA context made before the clock starts). The
  median of --runs such processes; then a second process on each filled
  cache (Triton's disk cache), and a second specialization in the same
  process (BLOCK = 2048: what each further kernel costs once Triton's
  one-time setup is done).

Launch overhead from Python (blocc, Triton, torch.add on the same tensors)
is python_launch.py's.

    python3 benchmarks/gpu/triton_launch.py [--runs 5] [--json FILE]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS, N = 64, 1024


def first_calls():
    """In a fresh process: ms of the first call and of a new specialization."""
    import torch
    sys.path.insert(0, HERE)
    from triton_fused import softmax_row

    x = torch.randn(ROWS, N, device="cuda")
    y = torch.empty_like(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    softmax_row[(ROWS,)](y, x, N, BLOCK=1024, num_warps=4)
    torch.cuda.synchronize()
    first = (time.perf_counter() - start) * 1e3
    assert torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-7)
    start = time.perf_counter()
    softmax_row[(ROWS,)](y, x, N, BLOCK=2048, num_warps=4)
    torch.cuda.synchronize()
    second = (time.perf_counter() - start) * 1e3
    assert torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-7)
    print(json.dumps({"first": first, "new_specialization": second}))


def child(cache_dir):
    env = dict(os.environ, TRITON_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, os.path.abspath(__file__),
                          "--first-calls"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    if "--first-calls" in sys.argv:
        first_calls()
        return
    runs, json_path = 5, None
    args = sys.argv[1:]
    while args:
        arg = args.pop(0)
        if arg == "--runs":
            runs = int(args.pop(0))
        elif arg == "--json":
            json_path = args.pop(0)
        else:
            sys.exit(f"usage: triton_launch.py [--runs N] [--json FILE] "
                     f"(unknown argument {arg})")
    import torch
    import triton
    print("device:", torch.cuda.get_device_name(0), "triton",
          triton.__version__, "torch", torch.__version__)
    cold, warm, new_spec = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="triton-cold-") as cache:
            first = child(cache)
            cold.append(first["first"])
            new_spec.append(first["new_specialization"])
            warm.append(child(cache)["first"])
    print("softmax first call, empty cache (ms):",
          " ".join(f"{v:.1f}" for v in cold))
    print("softmax first call, Triton's cache filled (ms):",
          " ".join(f"{v:.1f}" for v in warm))
    print("softmax new specialization in the process (ms):",
          " ".join(f"{v:.1f}" for v in new_spec))
    shape = [ROWS, N]
    records = [
        {"kernel": "cold compile", "shape": shape, "dtype": "f32",
         "metric": "ms", "higher_is_better": False, "peer": "triton",
         "config": "softmax, first call in a process, empty cache",
         "value": statistics.median(cold)},
        {"kernel": "compile, disk cache", "shape": shape, "dtype": "f32",
         "metric": "ms", "higher_is_better": False, "peer": "triton",
         "config": "softmax, first call in a second process",
         "value": statistics.median(warm)},
        {"kernel": "compile, new specialization", "shape": shape,
         "dtype": "f32", "metric": "ms", "higher_is_better": False,
         "peer": "triton", "config": "softmax BLOCK=2048 after BLOCK=1024",
         "value": statistics.median(new_spec)},
    ]
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"peer_results": records}, f, indent=1)


if __name__ == "__main__":
    main()
