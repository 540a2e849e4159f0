"""CPU time of each failure-detection metric against one AuRC on the same rows.

Seeded data: ``u ~ U(0, 1)`` (every score distinct: the most ROC points, the hull's worst case),
a 0/1 loss ``Bernoulli(u)``, ten classes for the balanced-accuracy areas (``y_pred`` wrong
exactly where the loss is 1). Each metric and the yardstick ``aurc(loss, u)`` are timed with
``time.process_time`` around the call only, alternately, ``--repeats`` times; the record is the
median time of each and their ratio.

Usage::

    python benchmarks/bench_failure_metrics.py --n 10000000 --repeats 3

Appends one row per metric to benchmarks/failure_metrics_records.csv, with the date, commit
and machine.
"""

import argparse
import csv
import datetime
import platform
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

from rejectopt.metrics import aurc
from rejectopt.metrics._failure_registry import FAILURE_METRICS

RECORDS = Path(__file__).with_name("failure_metrics_records.csv")
FIELDS = ["date", "commit", "machine", "n", "metric", "cpu_s", "aurc_cpu_s", "ratio", "repeats"]


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    loss = (rng.random(n) < u).astype(np.float64)
    y_true = rng.integers(0, 10, n)
    y_pred = np.where(loss == 1, (y_true + 1) % 10, y_true)
    return {"loss": loss, "uncertainty": u, "y_true": y_true, "y_pred": y_pred}


def _seconds(function, *args):
    start = time.process_time()
    function(*args)
    return time.process_time() - start


def _machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}; {platform.system()} {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--metrics", nargs="*", default=list(FAILURE_METRICS))
    args = parser.parse_args()
    data = _data(args.n)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    rows = []
    for name in args.metrics:
        metric = FAILURE_METRICS[name]
        inputs = [data[key] for key in metric.inputs]
        times, yardstick = [], []
        for _ in range(args.repeats):
            yardstick.append(_seconds(aurc, data["loss"], data["uncertainty"]))
            times.append(_seconds(metric.function, *inputs))
        cpu, base = statistics.median(times), statistics.median(yardstick)
        rows.append(
            {
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M"),
                "commit": commit,
                "machine": _machine(),
                "n": args.n,
                "metric": name,
                "cpu_s": f"{cpu:.3f}",
                "aurc_cpu_s": f"{base:.3f}",
                "ratio": f"{cpu / base:.2f}",
                "repeats": args.repeats,
            }
        )
        print(f"{name:22s} {cpu:7.3f} s   aurc {base:7.3f} s   ratio {cpu / base:5.2f}")
    new = not RECORDS.exists()
    with RECORDS.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
