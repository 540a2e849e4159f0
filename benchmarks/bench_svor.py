"""Benchmark the exact SVOR solver at the size of MSD's Trn1 (150,000 x 90, 41 classes).

Run: ``python benchmarks/bench_svor.py [--n 150000] [--d 90] [--classes 41] [--C 1 10 100 1000]``.
Prints wall time, interior point iterations and the certified duality gap per C.
Synthetic data from an ordinal model: ``z = <x, w*> + noise`` cut into equal-frequency bins.
"""

import argparse
import time

import numpy as np

from rejectopt.classifiers import SVOR


def make_ordinal(n, d, n_classes, noise=1.0, seed=0):
    """Standardised Gaussian features, labels = equal-frequency bins of a noisy projection."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    z = X @ (rng.standard_normal(d) / np.sqrt(d)) + noise * rng.standard_normal(n)
    cuts = np.quantile(z, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(cuts, z)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=150_000)
    parser.add_argument("--d", type=int, default=90)
    parser.add_argument("--classes", type=int, default=41)
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0, 100.0, 1000.0])
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    X, y = make_ordinal(args.n, args.d, args.classes)
    print(f"n={args.n} d={args.d} Y={args.classes} tol={args.tol}")
    print("C\ttime_s\tn_iter\tobjective\tgap\trel_gap\ttrain_MAE\tthresholds_sorted")
    for C in args.C:
        t0 = time.perf_counter()
        model = SVOR(C=C, n_classes=args.classes, tol=args.tol, verbose=args.verbose).fit(X, y)
        elapsed = time.perf_counter() - t0
        mae = np.abs(model.predict(X) - y).mean()
        print(
            f"{C:g}\t{elapsed:.1f}\t{model.n_iter_}\t{model.objective_:.8g}\t"
            f"{model.gap_:.2e}\t{model.rel_gap_:.2e}\t{mae:.4f}\t"
            f"{bool(np.all(np.diff(model.thresholds_) >= 0))}",
            flush=True,
        )


if __name__ == "__main__":
    main()
