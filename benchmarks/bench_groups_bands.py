"""CPU time and peak memory of selective_report(groups=) and risk_coverage_band against one AuRC.

Each measurement runs in its own Python subprocess on the same seeded data (``u ~ U(0, 1)``,
loss ``100 Bernoulli(u)``, the paper's 0/100 loss; integer group labels drawn uniformly
among ``--groups``). The subprocess times only the call (``time.process_time``, data
generation and the one-off import of scipy.stats excluded) and reports its own peak resident
memory (``ru_maxrss``). The yardstick
is ``aurc(loss, u)`` in a subprocess of its own, run alternately with the task, so a drift of
the shared machine's speed hits both: the ratio is the median of the per-pair ratios, and
the extra memory is the task's peak minus the yardstick's (same data in memory).

Usage::

    python benchmarks/bench_groups_bands.py --n 1000000 --tasks report band band_simultaneous
    python benchmarks/bench_groups_bands.py --n 10000000 --tasks report --repeats 3

Appends one row per task to benchmarks/bench_groups_bands_records.csv (``--label`` names the
code measured, e.g. "before" or "after").
"""

import argparse
import csv
import datetime
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RECORDS = Path(__file__).with_name("bench_groups_bands_records.csv")
FIELDS = [
    "date",
    "commit",
    "label",
    "n",
    "groups",
    "task",
    "cpu_s",
    "aurc_cpu_s",
    "ratio",
    "peak_mb",
    "aurc_peak_mb",
    "extra_peak_mb",
    "repeats",
]


def _data(n, groups, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    u = rng.random(n)
    loss = 100.0 * (rng.random(n) < u)
    return loss, u, rng.integers(0, groups, n)


def _child(task, n, groups):
    """Run one task on the seeded data; print its CPU seconds and this process's peak RSS (MB)."""
    import scipy.stats  # noqa: F401  - the library imports it at first use: a one-off cost, not the call's

    from rejectopt import metrics

    loss, u, labels = _data(n, groups)
    calls = {
        "aurc": lambda: metrics.aurc(loss, u),
        "report": lambda: metrics.selective_report(loss, u, labels, selection=0.5, confidence=0.95),
        "aurc_groups": lambda: metrics.aurc(loss, u, groups=labels),
        "band": lambda: metrics.risk_coverage_band(loss, u),
        "band_simultaneous": lambda: metrics.risk_coverage_band(loss, u, simultaneous=True),
    }
    start = time.process_time()
    calls[task]()
    cpu = time.process_time() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes
    print(json.dumps({"cpu_s": cpu, "peak_mb": peak_mb}))


def _run(task, n, groups):
    out = subprocess.run(
        [sys.executable, __file__, "--child", task, "--n", str(n), "--groups", str(groups)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _commit():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except OSError:
        return ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--tasks", nargs="+", default=["report", "band", "band_simultaneous"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="after")
    parser.add_argument("--child")
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child, args.n[0], args.groups)
    rows = []
    for n in args.n:
        for task in args.tasks:
            pairs = [
                (_run("aurc", n, args.groups), _run(task, n, args.groups))
                for _ in range(args.repeats)
            ]
            ratio = statistics.median(t["cpu_s"] / b["cpu_s"] for b, t in pairs)
            base_cpu = statistics.median(b["cpu_s"] for b, _ in pairs)
            cpu = statistics.median(t["cpu_s"] for _, t in pairs)
            base_peak = max(b["peak_mb"] for b, _ in pairs)
            peak = max(t["peak_mb"] for _, t in pairs)
            row = {
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
                "commit": _commit(),
                "label": args.label,
                "n": n,
                "groups": args.groups,
                "task": task,
                "cpu_s": round(cpu, 3),
                "aurc_cpu_s": round(base_cpu, 3),
                "ratio": round(ratio, 2),
                "peak_mb": round(peak),
                "aurc_peak_mb": round(base_peak),
                "extra_peak_mb": round(peak - base_peak),
                "repeats": args.repeats,
            }
            print(
                f"n={n:>10,} {task:18s} {cpu:8.2f} CPU-s = {ratio:5.1f} x aurc ({base_cpu:.2f} s); "
                f"peak {peak:7.0f} MB, {peak - base_peak:+7.0f} MB over aurc's",
                flush=True,
            )
            rows.append(row)
    new = not RECORDS.exists()
    with RECORDS.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
