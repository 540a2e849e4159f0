"""Time the metrics of rejectopt.metrics, and bootstrap_ci vectorised against a per-resample loop.

Synthetic data: ``u ~ U(0, 1)``, ``loss ~ 100 * Bernoulli(u)`` (the paper's 0/100 loss),
optionally with ties (``--ties``: uncertainties rounded to 2 decimals). Prints the wall
time of each metric at several sample sizes and of ``bootstrap_ci`` on "augrc" and "aurc"
(array path) against the same intervals computed by calling the metric once per resample.

Usage: python benchmarks/bench_metrics.py [--n 1000 100000 1000000] [--resamples 1000] [--ties]
"""

import argparse
import functools
import time

import numpy as np

from rejectopt.metrics import (
    augrc,
    aurc,
    bootstrap_ci,
    coverage_at_risk,
    eaugrc,
    eaurc,
    risk_at_coverage,
)


def _sample(n, ties, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    loss = 100.0 * (rng.random(n) < u)
    return loss, (np.round(u, 2) if ties else u)


def _best_of(function, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--ties", action="store_true")
    args = parser.parse_args(argv)
    metrics = {
        "aurc": aurc,
        "aurc(ties=average)": functools.partial(aurc, ties="average"),
        "augrc": augrc,
        "eaurc": eaurc,
        "eaugrc": eaugrc,
        "risk_at_coverage(0.8)": functools.partial(risk_at_coverage, coverage=0.8),
        "coverage_at_risk(5)": functools.partial(coverage_at_risk, risk=5.0),
    }
    print(f"{'metric':24s}" + "".join(f"{f'n={n:,}':>14s}" for n in args.n))
    samples = {n: _sample(n, args.ties) for n in args.n}
    for name, metric in metrics.items():
        row = [_best_of(lambda: metric(*samples[n])) for n in args.n]
        print(f"{name:24s}" + "".join(f"{t * 1e3:11.2f} ms" for t in row))
    n = min(args.n, key=lambda v: abs(v - 1000))
    loss, u = samples[n]
    print(f"\nbootstrap_ci, n={n:,}, {args.resamples} resamples (level 0.95, seed 0)")
    for name in ("augrc", "aurc"):
        function = metrics[name]
        fast_time = _best_of(
            lambda: bootstrap_ci(name, loss, u, n_resamples=args.resamples, random_state=0)
        )
        slow_time = _best_of(
            lambda: bootstrap_ci(
                lambda a, b: function(a, b), loss, u, n_resamples=args.resamples, random_state=0
            ),
            repeats=1,
        )
        fast = bootstrap_ci(name, loss, u, n_resamples=args.resamples, random_state=0)
        slow = bootstrap_ci(
            lambda a, b: function(a, b), loss, u, n_resamples=args.resamples, random_state=0
        )
        print(
            f"  {name:6s} vectorised {fast_time * 1e3:8.1f} ms, loop {slow_time * 1e3:8.1f} ms "
            f"({slow_time / fast_time:.0f}x); intervals {fast.low:.6g}..{fast.high:.6g}, "
            f"max difference {max(abs(fast.low - slow.low), abs(fast.high - slow.high)):.1e}"
        )


if __name__ == "__main__":
    main()
