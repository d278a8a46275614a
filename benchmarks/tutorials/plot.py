"""PNG plots of a sweep's JSON (gpu_sweep.py's "series"): one per kernel,
x = size (log scale), y = GB/s or TFLOP/s, a line per column (blocc, its
peers, the ceiling dashed), titled with the hardware and the date. With
--markdown, also prints its table of blocc / peer at every size
(tables.py, which keeps benchmarks/README.md's tables to their JSON).

    python3 benchmarks/tutorials/plot.py RESULTS.json OUT_DIR [--markdown]

Needs matplotlib (pip install matplotlib): run it where the JSON was
copied to, not on the GPU host.
"""

import argparse
import json
import os

import matplotlib

from tables import sweep_table

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("out_dir")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    with open(args.results) as f:
        report = json.load(f)
    os.makedirs(args.out_dir, exist_ok=True)
    for table in report["series"]:
        sizes = table["sizes"]
        fig, ax = plt.subplots(figsize=(6, 4))
        for column, values in table["columns"].items():
            xs = [s for s in sizes if str(s) in values]
            ys = [values[str(s)] for s in xs]
            style = "--" if "ceiling" in column else "-"
            width = 2.5 if column == "blocc" else 1.2
            ax.plot(xs, ys, style, marker="o", linewidth=width, label=column)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"size ({table.get('size_label', 'elements')})")
        ax.set_ylabel(table["metric"])
        ax.set_title(f"{table['kernel']} ({table['dtype']}), "
                     f"{report['hardware']}, {report['date']}", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(args.out_dir, f"{table['kernel']}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        print("wrote", path)
    if args.markdown:
        print("\n" + sweep_table(report), end="")


if __name__ == "__main__":
    main()
