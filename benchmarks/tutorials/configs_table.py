"""Markdown rows of the tensor-core kernels' best configurations, from the
JSON of matmul_configs.py and attention_configs.py: for each problem, the
fastest configuration checked against float64, beside its peers.

    python3 benchmarks/tutorials/configs_table.py \
        benchmarks/results/gpu-matmul-configs.json \
        benchmarks/results/gpu-attention-configs.json
"""

import json
import sys


def best(rows, key):
    """The fastest correct row of each problem (rows sharing key(row))."""
    out = {}
    for row in rows:
        if row["ok"] and (key(row) not in out or
                          row["tflops"] > out[key(row)]["tflops"]):
            out[key(row)] = row
    return out


def matmul_rows(report):
    mma_sync = {(r["dtype"], r["config"]): r["triton_tflops"]
                for r in report.get("triton_mma_sync", [])}
    for (dtype,), r in best(report["rows"], lambda r: (r["dtype"],)).items():
        peers = [f"cuBLAS (ceiling) {r['cublas_tflops']:.1f} "
                 f"({r['tflops'] / r['cublas_tflops']:.2f}x)"]
        if r.get("triton_tflops"):
            peers.append(f"Triton {r['triton_tflops']:.1f} "
                         f"({r['tflops'] / r['triton_tflops']:.2f}x)")
        if (dtype, r["config"]) in mma_sync:
            t = mma_sync[(dtype, r["config"])]
            peers.append(f"Triton on mma.sync {t:.1f} ({r['tflops'] / t:.2f}x)")
        bm, bn, bk, w, s = r["config"].split("x")
        yield (f"| matmul {report.get('n', 4096)}^3 "
               f"| {dtype} | {bm}x{bn}x{bk}, {w} warps, {s} stages "
               f"| {r['tflops']:.1f} | {'; '.join(peers)} |")


def attention_rows(report):
    problems = best(report["rows"], lambda r: (r["dim"], r["causal"]))
    for (dim, causal), r in sorted(problems.items()):
        name = f"attention d{dim}" + (" causal" if causal else "")
        yield (f"| {name}, {report['heads']} heads x {report['seq']} tokens "
               f"| f16 | {r['BLOCK_M']}x{r['BLOCK_N']} blocks, "
               f"{r['num_warps']} warps, {r['num_stages']} stages "
               f"| {r['tflops']:.1f} | SDPA (ceiling) {r['sdpa_tflops']:.1f} "
               f"({r['tflops'] / r['sdpa_tflops']:.2f}x) |")


def main():
    matmul, attention = (json.load(open(p)) for p in sys.argv[1:3])
    print("| problem | dtype | configuration | blocc TFLOP/s | peers "
          "(blocc / peer) |")
    print("|---|---|---|---|---|")
    for line in list(matmul_rows(matmul)) + list(attention_rows(attention)):
        print(line)


if __name__ == "__main__":
    main()
