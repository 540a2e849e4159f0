"""compare_scores at scale against its former path, and its interval's coverage at small n.

Timing (``--timing``): ``compare_scores(loss, a, b)`` with 2,000 resamples of n = 1,000,000 rows
(the AuRC, the default metric), each path in its own process so that its peak memory is its own:

* ``new``: the library as it is (multiplicities over score a's rank order, the AuRC of a resample
  from one running count; ``rejectopt.metrics._bootstrap._ResampledAurc``);
* ``old``: the former path, copied below: a block of two resamples at a time as float weights in
  example order through ``_risk_coverage._aurc_rows``. At about a quarter of a CPU-second a
  resample it runs ``--old-resamples`` (default 200) and its CPU time is scaled to 2,000: a block
  costs the same whatever its place in the run (the record keeps both figures).

CPU seconds are ``time.process_time()`` of the call (data generation excluded), peak memory the
process's ``ru_maxrss``.

Coverage (``--coverage``): a population with a known difference. ``r ~ U(0, 1)``, an error
(loss 1) with probability ``0.1 + 0.5 r``, scores ``a = r + N(0, 0.3)`` and ``b = r + N(0, 0.3)``:
exchangeable, so the true difference of AuRCs is 0 at every n. The share of samples whose 95 %
interval covers 0 and whose p-value is below 0.05 (type-I error), per n. A second population
with ``b = r + N(0, 0.8)`` (a worse score) has a true difference computed from 20 samples of
10^6 rows; its coverage is reported too.

Usage: python benchmarks/bench_compare_scores.py [--timing] [--coverage] [--reps 2000] [--resamples 1000]
Writes benchmarks/compare_scores_records.json (timing) and compare_scores_coverage_records.json.
"""

import argparse
import json
import pathlib
import platform
import resource
import subprocess
import sys
import time

import numpy as np

from rejectopt.metrics import aurc, compare_scores

RECORD = pathlib.Path(__file__).with_name("compare_scores_records.json")  # the timing
COVERAGE_RECORD = pathlib.Path(__file__).with_name("compare_scores_coverage_records.json")
N, RESAMPLES = 1_000_000, 2000


def _timing_sample(n, seed=0):
    rng = np.random.default_rng(seed)
    risk = rng.random(n)
    loss = 100.0 * (rng.random(n) < 0.1 + 0.5 * risk)
    return loss, risk + rng.normal(0, 0.3, n), risk + rng.normal(0, 0.6, n)


def _old_compare_aurc(loss, uncertainty_a, uncertainty_b, n_resamples, random_state=0):
    """The former compare_scores for metric="aurc": blocks of float weights through ``_aurc_rows``."""
    from rejectopt.metrics._risk_coverage import (
        _aurc_rows,
        _Sample,
    )  # the former path's own internals

    rng = np.random.default_rng(random_state)
    n = loss.size
    block = max(1, (1 << 21) // n)
    values = np.empty(n_resamples)
    sample_a, sample_b = _Sample(loss, uncertainty_a), _Sample(loss, uncertainty_b)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        index = rng.integers(0, n, size=(rows, n), dtype=np.intp)
        offsets = (np.arange(rows, dtype=np.intp) * n)[:, None]
        weights = (
            np.bincount((index + offsets).ravel(), minlength=rows * n)
            .reshape(rows, n)
            .astype(np.float64)
        )
        values[start : start + rows] = _aurc_rows(sample_a, weights) - _aurc_rows(sample_b, weights)
    return np.quantile(values, [0.025, 0.975])


def _worker(which, n_resamples):
    loss, a, b = _timing_sample(N)
    start = time.process_time()
    if which == "new":
        result = compare_scores(loss, a, b, n_resamples=n_resamples)
        ci = [result.ci.low, result.ci.high]
    else:
        ci = _old_compare_aurc(loss, a, b, n_resamples).tolist()
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    print(
        json.dumps(
            {
                "path": which,
                "n": N,
                "resamples": n_resamples,
                "cpu_s": round(cpu, 2),
                "peak_mib": round(peak, 1),
                "ci": ci,
            }
        )
    )


def _run_worker(which, n_resamples):
    out = subprocess.run(
        [sys.executable, __file__, "--worker", which, str(n_resamples)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def timing(old_resamples):
    new = _run_worker("new", RESAMPLES)
    old = _run_worker("old", old_resamples)
    old["cpu_s_scaled_to_2000"] = round(old["cpu_s"] * RESAMPLES / old_resamples, 1)
    record = {
        "new": new,
        "old": old,
        "speed-up": round(old["cpu_s_scaled_to_2000"] / new["cpu_s"], 1),
    }
    print(json.dumps(record, indent=1))
    return record


def _null_and_alternative(rng, n, noise_b):
    risk = rng.random(n)
    loss = (rng.random(n) < 0.1 + 0.5 * risk).astype(float)
    return loss, risk + rng.normal(0, 0.3, n), risk + rng.normal(0, noise_b, n)


def coverage(reps, resamples=1000, sizes=(30, 50, 100, 200, 500)):
    truth_rng = np.random.default_rng(123)
    big = [_null_and_alternative(truth_rng, 1_000_000, 0.8) for _ in range(20)]
    differences = [aurc(loss, a) - aurc(loss, b) for loss, a, b in big]
    true_difference = float(np.mean(differences))
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        for name, noise_b, truth in (("null", 0.3, 0.0), ("worse b", 0.8, true_difference)):
            covered = rejected = 0
            start = time.process_time()
            for r in range(reps):
                result = compare_scores(
                    *_null_and_alternative(rng, n, noise_b), n_resamples=resamples, random_state=r
                )
                covered += result.ci.low <= truth <= result.ci.high
                rejected += result.p_value < 0.05
            rows.append(
                {
                    "population": name,
                    "n": n,
                    "reps": reps,
                    "resamples": resamples,
                    "true_difference": truth,
                    "coverage_95": covered / reps,
                    "rejection_rate_5pct": rejected / reps,
                    "cpu_s": round(time.process_time() - start, 1),
                }
            )
            print(rows[-1], flush=True)
    return {
        "true_difference_worse_b": true_difference,
        "true_difference_se": float(np.std(differences, ddof=1) / np.sqrt(len(differences))),
        "rows": rows,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--old-resamples", type=int, default=200)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap resamples in --coverage"
    )
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args.worker[0], int(args.worker[1]))
    machine = f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}"
    if args.timing:
        record = {"machine": machine, "timing": timing(args.old_resamples)}
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
    if args.coverage:
        record = {"machine": machine, "coverage": coverage(args.reps, args.resamples)}
        COVERAGE_RECORD.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
