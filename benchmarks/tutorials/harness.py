"""What the tutorials' sweeps share (gpu_sweep.py, cpu_sweep.py): each
kernel's columns run at each size, checked against the float64 reference,
timed, and written in the results format (benchmarks/README.md: a record
per kernel, size and peer: blocc's value, the peer's, blocc / peer) plus
"series" (every column's values per size) for plot.py; a table is printed
as it goes.

A sweep function returns (metric, work, {column: (launch, output)},
reference, (rtol, atol), blocc's configuration). `launch()` runs the
column once; its result, or `output` when given, is checked unless it is
None (a column timed but not checked) or the column is a ceiling.
"""

import datetime
import json
import sys


# Work per second to each metric's unit.
UNITS = {"GB/s": 1e-9, "GFLOP/s": 1e-9, "TFLOP/s": 1e-12}



def provenance():
    """What every results file records of its run besides the hardware:
    the date and the command."""
    return {"date": datetime.date.today().isoformat(),
            "command": " ".join(["python3"] + sys.argv)}

def cdiv(a, b):
    return (a + b - 1) // b


def next_pow2(n):
    return 1 << max(0, (n - 1).bit_length())


def unchecked(fn):
    """A column timed but not checked (its result is not comparable: other
    random numbers, or a tuple of gradients)."""
    def launch():
        fn()
    return launch


def run(sweeps, args, *, suite, hardware, notes, bench, wait, mismatch,
        size_labels=None):
    """Runs `args.kernels` of `sweeps` ({name: (make, sizes, dtype)}),
    the two largest sizes with args.quick, and writes args.out.

    bench(launch) -> ms; wait() waits for queued work; mismatch(got, want,
    rtol, atol) -> None, or a message naming the first wrong element;
    size_labels: {kernel: what its size is}, for the plots' x axis."""
    results, series, notes = [], [], list(notes)
    failures = 0
    for name in args.kernels.split(","):
        if name not in sweeps:
            sys.exit(f"unknown kernel '{name}': expected one of "
                     f"{', '.join(sweeps)}")
        make, sizes, dtype = sweeps[name]
        if args.quick:
            sizes = sizes[-2:]
        table = {"kernel": name, "dtype": dtype, "sizes": sizes, "columns": {}}
        if size_labels and name in size_labels:
            table["size_label"] = size_labels[name]
        for size in sizes:
            metric, work, columns, want, (rtol, atol), config = make(size)
            table["metric"] = metric
            values = {}
            for column, (launch, out) in columns.items():
                try:
                    got = launch()
                    wait()
                    if out is not None:
                        got = out
                    if got is not None and "ceiling" not in column:
                        wrong = mismatch(got, want, rtol, atol)
                        if wrong:
                            raise RuntimeError(wrong)
                    ms = bench(launch)
                    values[column] = work / (ms * 1e-3) * UNITS[metric]
                except Exception as e:  # noqa: BLE001 (a peer's failure is data)
                    failures += 1
                    notes.append(f"{name} {size} {column}: {type(e).__name__}: "
                                 f"{str(e).splitlines()[0][:200]}")
                    print("  skipped:", notes[-1])
            for column, value in values.items():
                table["columns"].setdefault(column, {})[str(size)] = value
            print(f"{name:<11} {size:>10} {metric:<7}" + "".join(
                f" {c}={v:.1f}" for c, v in values.items()), flush=True)
            if "blocc" not in values:
                continue
            for column, value in values.items():
                if column == "blocc":
                    continue
                results.append({
                    "kernel": name, "shape": [size], "dtype": dtype,
                    "metric": metric, "higher_is_better": True,
                    "blocc": values["blocc"], "config": config, "peer": column,
                    "peer_value": value, "peer_config": "",
                    "ratio": values["blocc"] / value, "bar": "", "meets_bar": None})
        series.append(table)
    report = {"suite": suite, "hardware": hardware, **provenance(),
              "notes": notes, "results": results, "series": series}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print("wrote", args.out)
    if failures and getattr(args, "strict", False):
        sys.exit(f"{failures} columns failed (--strict): see 'skipped' above")
    return report
