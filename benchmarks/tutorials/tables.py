"""The markdown tables of the tutorials' sweeps, from their JSON: a row
per kernel and size, blocc's value and each peer's with blocc / peer.

    python3 benchmarks/tutorials/tables.py [--check] README.md

rewrites every table of README.md that stands between
`<!-- table: RESULTS.json -->` and `<!-- end table -->` (the path relative
to README.md's directory) from that file; with --check it changes nothing
and fails naming each table that differs from its JSON, as CI runs it, so
that a table cannot drift from the results it shows.
"""

import json
import os
import re
import sys

BLOCK = re.compile(r"(<!-- table: (\S+) -->\n)(.*?)(<!-- end table -->)",
                   re.S)


def sweep_table(report):
    """The table of one sweep's results ("series" of gpu_sweep.py and
    cpu_sweep.py), one line per row, header first."""
    lines = ["| kernel | size | dtype | metric | blocc | peers (blocc / peer) |",
             "|---|---|---|---|---|---|"]
    for table in report["series"]:
        blocc = table["columns"].get("blocc", {})
        for s in table["sizes"]:
            if str(s) not in blocc:
                continue
            peers = "; ".join(
                f"{c} {v[str(s)]:.1f} ({blocc[str(s)] / v[str(s)]:.2f}x)"
                for c, v in table["columns"].items()
                if c != "blocc" and str(s) in v)
            lines.append(f"| {table['kernel']} | {s} | {table['dtype']} | "
                         f"{table['metric']} | {blocc[str(s)]:.1f} | {peers} |")
    return "\n".join(lines) + "\n"


def regenerate(text, directory):
    """`text` with each marked table rebuilt, and the results files whose
    tables changed."""
    changed = []

    def rebuild(match):
        with open(os.path.join(directory, match.group(2))) as f:
            table = sweep_table(json.load(f))
        if table != match.group(3):
            changed.append(match.group(2))
        return match.group(1) + table + match.group(4)
    return BLOCK.sub(rebuild, text), changed


def main():
    args = sys.argv[1:]
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) != 1:
        sys.exit("usage: tables.py [--check] README.md")
    with open(paths[0]) as f:
        text = f.read()
    updated, changed = regenerate(text, os.path.dirname(paths[0]) or ".")
    if check:
        if changed:
            sys.exit(f"{paths[0]}: the tables of {', '.join(changed)} differ "
                     "from those results: run benchmarks/tutorials/tables.py "
                     f"{paths[0]}")
        print(f"{paths[0]}: every table matches its results")
        return
    with open(paths[0], "w") as f:
        f.write(updated)
    print(f"{paths[0]}: {len(changed)} table(s) rewritten")


if __name__ == "__main__":
    main()
