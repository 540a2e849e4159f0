"""Time a certified risk target's refusal against its fit, and the per-threshold table.

Synthetic data: ``u ~ U(0, 1)``, ``loss ~ 100 * Bernoulli(u / 10)`` (the 0/100 loss). A refusal
(target risk 1e-4, which no sample of this size certifies) computes its advice: the smallest
target the method certifies on the rows and the sample size an error-free sample needs. The fit
is target risk ``--fit-risk`` (5) on the same rows. Prints the median of ``--repeats`` in-process
wall times (``time.perf_counter``); ``--only`` runs one case, for timing the whole process from
outside (``/usr/bin/time -v``).

``--caught`` times the refusals as a caller that only catches them (a validation's draws, the
guarantees experiment): the advice is computed when read, so a caught refusal should cost what a
fit costs; the default reads the message, which computes it. ``--record`` appends the medians to
a CSV (``label,case,n,caught,median_ms``): certify_refusals_records.csv holds the refusal path
before and after the advice became lazy.

Usage: python benchmarks/bench_certify_refusals.py [--n 1000000] [--repeats 3] [--fit-risk 5]
       [--only sgr-fit|sgr-refuse|ltt-fit|ltt-refuse|table] [--caught] [--record CSV --label L]
"""

import argparse
import csv
import os
import statistics
import time

import numpy as np

from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import Target, certification_table


def _sample(n, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return 100.0 * (rng.random(n) < u / 10), u


def _cases(loss, u, fit_risk=5.0, caught=False):
    def fit(method):
        return lambda: Target("risk", fit_risk, confidence=0.9).fit(loss, u, method=method)

    def refuse(method):
        def run():
            try:
                Target("risk", 1e-4, confidence=0.9).fit(loss, u, method=method)
            except InfeasibleTargetError as error:
                if not caught:
                    str(error)  # the message holds the advice
                return
            raise AssertionError("risk 1e-4 was certified")

        return run

    return {
        "sgr-fit": fit("sgr"),
        "sgr-refuse": refuse("sgr"),
        "ltt-fit": fit("ltt"),
        "ltt-refuse": refuse("ltt"),
        "table": lambda: certification_table(loss, u, Target("risk", fit_risk, confidence=0.9)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=None)
    parser.add_argument("--fit-risk", type=float, default=5.0)
    parser.add_argument("--caught", action="store_true")
    parser.add_argument("--record", default=None)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    loss, u = _sample(args.n)
    cases = _cases(loss, u, args.fit_risk, args.caught)
    records = []
    for name, run in cases.items():
        if args.only not in (None, name):
            continue
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(f"{name}\tn={args.n}\tmedian {median:.3f} s of {args.repeats}")
        records.append([args.label, name, args.n, int(args.caught), f"{median * 1e3:.3f}"])
    if args.record:
        new = not os.path.exists(args.record)
        with open(args.record, "a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(["label", "case", "n", "caught", "median_ms"])
            writer.writerows(records)


if __name__ == "__main__":
    main()
