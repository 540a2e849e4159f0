"""Time the calibration metrics and probly's AURC against one AuRC at the same number of rows.

Synthetic data: ``n`` rows of 3-class softmax probabilities and labels drawn from them; the AuRC
reference is :func:`rejectopt.metrics.aurc` of the 0/1 losses of the argmax prediction against
``1 - max probability``. Each metric is timed 3 times and the median written to
``benchmarks/calibration_metrics_records.csv`` (metric, n, seconds, ratio to the AuRC); the
target is a ratio of at most 3.

Usage: PYTHONPATH=src python benchmarks/bench_calibration_metrics.py [--n 10000000]
"""

import argparse
import csv
import functools
import statistics
import time
from pathlib import Path

import numpy as np

from rejectopt.metrics import aurc
from rejectopt.metrics._calibration import (
    adaptive_calibration_error,
    brier_score,
    expected_calibration_error,
    maximum_calibration_error,
    negative_log_likelihood,
)

OUT = Path(__file__).with_name("calibration_metrics_records.csv")


def _sample(n, k=3, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 2.0
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1).clip(0, k - 1)
    return p, y


def _median_time(function, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    n = parser.parse_args().n
    p, y = _sample(n)
    loss = (p.argmax(axis=1) != y).astype(float)
    uncertainty = 1.0 - p.max(axis=1)
    reference = _median_time(functools.partial(aurc, loss, uncertainty))
    timed = {
        "ece (torch-uncertainty)": functools.partial(expected_calibration_error, p, y),
        "ece (fd-shifts)": functools.partial(
            expected_calibration_error, p, y, convention="fd-shifts"
        ),
        "mce": functools.partial(maximum_calibration_error, p, y),
        "adaptive_ece": functools.partial(adaptive_calibration_error, p, y),
        "brier": functools.partial(brier_score, p, y),
        "nll": functools.partial(negative_log_likelihood, p, y),
        "aurc (probly)": functools.partial(aurc, loss, uncertainty, convention="probly"),
    }
    rows = [{"metric": "aurc (paper)", "n": n, "seconds": reference, "ratio_to_aurc": 1.0}]
    for name, function in timed.items():
        seconds = _median_time(function)
        rows.append(
            {"metric": name, "n": n, "seconds": seconds, "ratio_to_aurc": seconds / reference}
        )
        print(f"{name:26s} {seconds:8.3f} s  {seconds / reference:5.2f} x AuRC", flush=True)
    with OUT.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    **row,
                    "seconds": f"{row['seconds']:.4f}",
                    "ratio_to_aurc": f"{row['ratio_to_aurc']:.3f}",
                }
            )


if __name__ == "__main__":
    main()
