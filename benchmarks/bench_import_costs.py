"""Import costs: how long each heavy optional dependency takes to import in a fresh interpreter.

Run: ``python benchmarks/bench_import_costs.py [--runs 3] [--modules scipy.stats ...]
[--records benchmarks/import_costs_records.csv]``.

The library imports these modules at their first use (``lazy_loader`` or a function-level import)
and its comments say why: the module is heavy to import and only one path needs it. This script
holds the measurement those comments point to. Each run starts a fresh interpreter
(``sys.executable``), imports numpy first (every rejectopt import loads it, so its cost is not the
optional module's), then times ``importlib.import_module(module)`` with ``time.perf_counter``; the
record is the median of ``--runs`` runs. A module that is not installed is skipped with a message.

Writes ``--records`` (CSV, one row per module, rewritten on each run): ``module``,
``median_seconds``, ``runs``, ``python`` (version), ``date`` (UTC, ISO). The numbers depend on the
machine and its disk cache; what the comments rely on is their order of magnitude, and that each
costs far more than reading a registry.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import platform
import statistics
import subprocess
import sys
from pathlib import Path

#: The optional or heavy imports the library defers, and the two registries (read without them).
MODULES = (
    "scipy.stats",
    "scipy.special",
    "scipy.ndimage",
    "matplotlib.figure",
    "sklearn",
    "sklearn.datasets",
    "sklearn.linear_model",
    "xgboost",
    "rejectopt.classifiers",
    "rejectopt.scores",
)

_PROBE = """
import importlib, time
import numpy
start = time.perf_counter()
importlib.import_module({module!r})
print(time.perf_counter() - start)
"""


def time_import(module: str, runs: int) -> list[float] | None:
    """Seconds to import ``module`` in ``runs`` fresh interpreters; None if it is not installed."""
    seconds = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE.format(module=module)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"{module}: skipped ({done.stderr.strip().splitlines()[-1]})", file=sys.stderr)
            return None
        seconds.append(float(done.stdout.strip()))
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modules", nargs="+", default=list(MODULES))
    parser.add_argument(
        "--records", type=Path, default=Path(__file__).with_name("import_costs_records.csv")
    )
    args = parser.parse_args(argv)
    date = dt.datetime.now(dt.timezone.utc).date().isoformat()
    rows = []
    for module in args.modules:
        seconds = time_import(module, args.runs)
        if seconds is None:
            continue
        median = statistics.median(seconds)
        print(f"{module:24s} {median:.3f} s (median of {args.runs})")
        rows.append(
            {
                "module": module,
                "median_seconds": f"{median:.3f}",
                "runs": args.runs,
                "python": platform.python_version(),
                "date": date,
            }
        )
    with open(args.records, "w", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["module", "median_seconds", "runs", "python", "date"]
        )
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
