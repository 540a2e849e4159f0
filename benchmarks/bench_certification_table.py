"""Time certification_table over every cut against its thinned listing, and select's thresholds.csv.

Synthetic data as ``bench_certify_refusals.py``: ``u ~ U(0, 1)`` (all scores distinct),
``loss ~ 100 * Bernoulli(u / 10)``. ``full`` lists every cut (``max_cuts=None``), ``thinned``
the cuts select keeps (``THRESHOLDS_MAX_CUTS``); ``select-csv`` is select's whole thresholds.csv
step (thinned table, its CSV bytes), ``select-csv-full`` the same step over every cut, as select
wrote it before. Prints the median of ``--repeats`` in-process wall times.

Usage: python benchmarks/bench_certification_table.py [--n 1000000] [--repeats 3]
       [--only full|thinned|select-csv|select-csv-full]
"""

import argparse
import statistics
import time
from types import SimpleNamespace

import numpy as np

from rejectopt.cli._select import THRESHOLDS_MAX_CUTS, _thresholds_csv
from rejectopt.selective import SelectionFunction
from rejectopt.targets import Target, certification_table


def _sample(n, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return 100.0 * (rng.random(n) < u / 10), u


def _cases(loss, u):
    target = Target("risk", 5, confidence=0.9)
    fit = SimpleNamespace(
        parts={"calibration": np.arange(u.size)},
        uncertainty=u,
        selection=SelectionFunction(threshold=float(np.quantile(u, 0.4)), accept_prob=1.0),
    )
    return {
        "full": lambda: certification_table(loss, u, target),
        "thinned": lambda: certification_table(loss, u, target, max_cuts=THRESHOLDS_MAX_CUTS),
        "select-csv": lambda: _thresholds_csv(fit, loss, target, None),
        "select-csv-full": lambda: _thresholds_csv(fit, loss, target, None, max_cuts=u.size),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=None)
    args = parser.parse_args()
    loss, u = _sample(args.n)
    for name, run in _cases(loss, u).items():
        if args.only not in (None, name):
            continue
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        print(f"{name}\tn={args.n}\tmedian {statistics.median(times):.3f} s of {args.repeats}")


if __name__ == "__main__":
    main()
