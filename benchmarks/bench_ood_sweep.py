"""Benchmark: the O(n log n) OOD operating-point sweep at n = 1,000,000 (supplement B.2).

Times, on synthetic data with ties, ``operating_points`` (all TPR/FPR/precision/risk values),
``selective_risk_at_tpr_fpr``, ``selective_risk_at_precision_recall``, ``auroc`` and the
randomised ``fit_bounded_tpr_fpr``. Goal: each under 2 s on the project's 2-core machine.
Reports the best of ``--repeat`` runs (the machine may be shared) and checks the metric
against a second, independent computation from the operating points.

Usage: python benchmarks/bench_ood_sweep.py [--n 1000000] [--repeat 3] [--out ood_sweep.tsv]
"""

import argparse
import platform
import time

import numpy as np

from rejectopt import ood


def make_data(n, seed=0):
    """20 % OOD; an uncertainty rounded to 1e-4 (many ties); 0/1 losses more likely when uncertain."""
    rng = np.random.default_rng(seed)
    is_ood = rng.random(n) < 0.2
    u = np.round(rng.random(n) + 0.6 * is_ood, 4)
    loss = (rng.random(n) < 0.3 * u).astype(float)
    loss[is_ood] = np.nan
    return loss, is_ood, u


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None, help="optional TSV output")
    args = parser.parse_args(argv)

    loss, is_ood, u = make_data(args.n)
    cases = {
        "operating_points": lambda: ood._metrics.operating_points(loss, is_ood, u),
        "selective_risk_at_tpr_fpr": lambda: ood.selective_risk_at_tpr_fpr(
            loss, is_ood, u, 0.7, 0.2
        ),
        "selective_risk_at_precision_recall": lambda: ood.selective_risk_at_precision_recall(
            loss, is_ood, u, 0.9, 0.7
        ),
        "auroc": lambda: ood.auroc(is_ood, u),
        "fit_bounded_tpr_fpr": lambda: ood.fit_bounded_tpr_fpr(loss, is_ood, u, 0.7, 0.2),
    }
    rows = []
    results = {}
    for name, fn in cases.items():
        seconds, results[name] = best_time(fn, args.repeat)
        rows.append((name, args.n, seconds))
        print(f"{name:38s} n={args.n:>9,d}  {seconds:7.3f} s  {'ok' if seconds < 2 else 'SLOW'}")

    pts = results["operating_points"]
    feasible = (pts.tpr >= 0.7) & (pts.fpr <= 0.2) & (pts.n_id_accepted > 0)
    check = float(np.min(pts.selective_risk[feasible])) if feasible.any() else float("nan")
    metric = results["selective_risk_at_tpr_fpr"]
    print(
        f"selective risk at TPR 0.7 / FPR 0.2: {metric:.6f} (from the operating points: {check:.6f})"
    )
    print(
        f"{len(pts.threshold) - 1:,d} distinct thresholds; {platform.processor() or platform.machine()}, "
        f"numpy {np.__version__}"
    )
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("function\tn\tseconds\n")
            for name, n, seconds in rows:
                fh.write(f"{name}\t{n}\t{seconds:.4f}\n")


if __name__ == "__main__":
    main()
