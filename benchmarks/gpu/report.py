"""Merges one run of the GPU benchmarks into one table and one JSON file
(the results format, benchmarks/README.md): the blocc programs' files
(blocc_bench_gpu, blocc_bench_gpu_fused, blocc_bench_gpu_launch --json;
each record blocc's
value for one configuration next to the peer the program measured itself:
the device copy, raw cuLaunchKernel) and the Python peers' files
(triton_*.py --json: Triton's and PyTorch's values; python_launch.py's
blocc, Triton and torch.add launch from Python), all from the same GPU
in the same invocation (scripts/run-benchmarks gpu).

Per (kernel, shape, dtype, metric) the best configuration of each side is
compared (best blocc config against the best Triton config, as an
autotuner would pick), one record per peer, with its bar and
whether it is met.

    python3 benchmarks/gpu/report.py --out gpu.json [--command TEXT] FILE...
    python3 benchmarks/gpu/report.py --markdown gpu.json   # README's table
"""
import json
import sys
import time

CEILING = "cuMemcpyDtoD (ceiling)"


def lower_is_better(record):
    if "higher_is_better" in record:
        return not record["higher_is_better"]
    return record.get("metric") in ("ms", "us")


def key_of(record):
    return (record["kernel"], tuple(record["shape"]), record.get("dtype", "f32"),
            record["metric"])


def better(a, b, lower):
    """Whether value a beats value b."""
    return a < b if lower else a > b


def bar_for(kernel, shape, peer):
    """The bar for blocc against `peer`: ("ratio", x), blocc's ratio at
    least x; ("times", x), blocc's value at most x times the peer's (host
    times); or ("max", v), blocc's value below v."""
    n = shape[-1]
    if kernel == "vector_add":
        return {CEILING: ("ratio", 0.95), "triton": ("ratio", 1.0)}.get(peer)
    if kernel == "softmax":
        if peer == "triton":
            return ("ratio", 1.0)
        if peer == CEILING and n >= 4096:
            return ("ratio", 0.9)
    if kernel == "layer_norm_fwd":
        if peer == "torch":
            return ("ratio", 1.0)
        if peer == CEILING and n == 16384:
            return ("ratio", 0.85)
    if kernel == "launch overhead" and peer.startswith("cuLaunchKernel"):
        return ("times", 1.2)
    if kernel == "launch overhead (Python)":
        return {"torch.add": ("times", 1.0), "triton": ("times", 0.3)}.get(peer)
    if kernel == "cold compile" and peer in ("triton", "none"):
        return ("max", 100.0)
    return None


def ratio_of(blocc, peer_value, lower):
    if not blocc or not peer_value:
        return None
    return peer_value / blocc if lower else blocc / peer_value


def meets(bar, blocc_value, peer_value, ratio):
    kind, x = bar
    if kind == "ratio":
        return ratio is not None and ratio >= x
    if kind == "times":
        return peer_value is not None and blocc_value <= x * peer_value
    return blocc_value < x


def bar_text(bar, metric):
    kind, x = bar
    return {"ratio": f">= {x:g}x", "times": f"<= {x:g}x peer"}.get(
        kind, f"< {x:g} {metric}")


def load(paths):
    blocc, peers, hardware, notes = {}, {}, set(), []
    for path in paths:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            notes.append(f"{path}: not read ({e})")
            continue
        if "hardware" in data:
            hardware.add(data["hardware"])
        for r in data.get("results", []):
            blocc.setdefault(key_of(r), []).append(r)
        for r in data.get("peer_results", []):
            peers.setdefault(key_of(r), {}).setdefault(r["peer"], []).append(r)
        notes.extend(data.get("notes", []))
    return blocc, peers, hardware, notes


ORDER = ["vector_add", "softmax", "layer_norm_fwd", "launch overhead",
         "launch overhead (Python)", "cold compile", "compile, disk cache", "compile, new specialization"]


def row_order(key):
    kernel, shape, dtype, metric = key
    rank = ORDER.index(kernel) if kernel in ORDER else len(ORDER)
    return (rank, kernel, dtype, list(shape), metric)


def merge(blocc, peers):
    """One output record per (key, peer)."""
    out = []
    for key in sorted(set(blocc) | set(peers), key=row_order):
        kernel, shape, dtype, metric = key
        mine = blocc.get(key, [])
        lower = lower_is_better(mine[0] if mine else
                                next(iter(peers[key].values()))[0])
        best = None
        for r in mine:
            if r.get("blocc") and (best is None or
                                   better(r["blocc"], best["blocc"], lower)):
                best = r
        comparisons = []
        if best and best.get("peer") not in (None, "none") and best.get(
                "peer_value"):
            comparisons.append((best["peer"], best["peer_value"], ""))
        for name, records in sorted(peers.get(key, {}).items()):
            top = None
            for r in records:
                if r.get("value") and (top is None or
                                       better(r["value"], top["value"], lower)):
                    top = r
            if top:
                comparisons.append((name, top["value"], top.get("config", "")))
        if not comparisons:
            comparisons.append(("none", None, ""))
        for peer, value, peer_config in comparisons:
            bar = bar_for(kernel, list(shape), peer)
            blocc_value = best["blocc"] if best else None
            ratio = ratio_of(blocc_value, value, lower)
            met = None
            if bar and blocc_value is not None:
                met = meets(bar, blocc_value, value, ratio)
            out.append({
                "kernel": kernel, "shape": list(shape), "dtype": dtype,
                "metric": metric, "higher_is_better": not lower,
                "blocc": blocc_value, "config": best["config"] if best else "",
                "peer": peer, "peer_value": value, "peer_config": peer_config,
                "ratio": ratio,
                "bar": bar_text(bar, metric) if bar else "",
                "meets_bar": met,
            })
    return out


def number(v):
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def print_table(records, hardware, notes):
    print("\nGPU:", ", ".join(sorted(hardware)) or "unknown")
    head = (f"{'kernel':<28} {'shape':<11} {'dtype':<5} {'metric':<6} "
            f"{'blocc':>8}  {'peer':<26} {'peer':>8} {'ratio':>7}  "
            f"{'bar':<12} met")
    print(head)
    print("-" * len(head))
    for r in records:
        shape = "x".join(str(d) for d in r["shape"])
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        met = {True: "yes", False: "NO", None: ""}[r["meets_bar"]]
        print(f"{r['kernel']:<28} {shape:<11} {r['dtype']:<5} "
              f"{r['metric']:<6} {number(r['blocc']):>8}  {r['peer']:<26} "
              f"{number(r['peer_value']):>8} {ratio:>7}  {r['bar']:<12} {met}")
    print("\nblocc's configurations (the best of each row):")
    seen = set()
    for r in records:
        k = (r["kernel"], tuple(r["shape"]), r["dtype"])
        if r["config"] and k not in seen:
            seen.add(k)
            shape = "x".join(str(d) for d in r["shape"])
            print(f"  {r['kernel']:<28} {shape:<11} {r['dtype']:<5} "
                  f"{r['config']}")
    for note in notes:
        print("note:", note)


def markdown_table(path):
    """The README's table from a merged results file: one row per kernel,
    shape and dtype, the peers side by side, and the bars this row misses."""
    with open(path) as f:
        results = json.load(f)
    rows = {}
    for r in results["results"]:
        row = rows.setdefault(
            (r["kernel"], tuple(r["shape"]), r["dtype"], r["metric"]),
            {"blocc": r["blocc"], "peers": {}, "missed": [], "bars": 0})
        row["peers"][r["peer"]] = (r["peer_value"], r["ratio"])
        if r["meets_bar"] is not None:
            row["bars"] += 1
            if not r["meets_bar"]:
                row["missed"].append(f"{r['peer']} {r['bar']}")
    columns = [("triton", "Triton"), ("torch", "torch"), (CEILING, "copy")]
    print(f"{results['hardware']}, {results['date']}: "
          f"`{results['command']}`\n")
    print("| kernel | shape | dtype | metric | blocc | "
          + " | ".join(f"{label} (ratio)" for _, label in columns)
          + " | other peer (ratio) | bars |")
    print("|---" * (7 + len(columns)) + "|")

    def cell(value, ratio):
        return "-" if value is None else f"{number(value)} ({ratio:.2f}x)"

    for (kernel, shape, dtype, metric), row in rows.items():
        cells = [cell(*row["peers"].get(peer, (None, None)))
                 for peer, _ in columns]
        others = [f"{peer}: {cell(*v)}" for peer, v in row["peers"].items()
                  if peer not in dict(columns)]
        bars = ("" if not row["bars"] else
                "missed: " + "; ".join(row["missed"]) if row["missed"] else
                "met")
        print(f"| {kernel.replace('_', ' ')} | "
              f"{'x'.join(str(d) for d in shape)} | {dtype} | {metric} | "
              f"{number(row['blocc'])} | " + " | ".join(cells)
              + f" | {'; '.join(others) or '-'} | {bars} |")


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--markdown":
        return markdown_table(args[1])
    out_path, command, inputs = None, "", []
    while args:
        arg = args.pop(0)
        if arg == "--out" and args:
            out_path = args.pop(0)
        elif arg == "--command" and args:
            command = args.pop(0)
        elif arg.startswith("--"):
            sys.exit(f"usage: report.py --out FILE [--command TEXT] FILE... "
                     f"(unknown option {arg})")
        else:
            inputs.append(arg)
    blocc, peers, hardware, notes = load(inputs)
    if not blocc:
        sys.exit("report.py: no blocc results among " + " ".join(inputs))
    records = merge(blocc, peers)
    print_table(records, hardware, notes)
    missed = [r for r in records if r["meets_bar"] is False]
    print(f"\n{sum(r['meets_bar'] is True for r in records)} bars met, "
          f"{len(missed)} missed")
    if out_path:
        head = {"suite": "gpu", "hardware": ", ".join(sorted(hardware)),
                "date": time.strftime("%Y-%m-%d", time.gmtime()),
                "command": command}
        with open(out_path, "w") as f:
            # One record a line, as the other results files.
            f.write(json.dumps(head)[:-1] + ',\n "results": [\n')
            f.write(",\n".join("  " + json.dumps(r) for r in records))
            f.write("\n ],\n \"notes\": " + json.dumps(notes) + "}\n")
        print("wrote", out_path)


if __name__ == "__main__":
    main()
