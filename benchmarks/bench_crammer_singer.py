"""Benchmark the certified Crammer-Singer SVM on the C grid of real Trn1 splits, optionally against liblinear.

Run: ``python benchmarks/bench_crammer_singer.py [--datasets letter avila sattelite]
[--C 1 10 100 1000] [--tol 1e-3] [--liblinear] [--liblinear-C 1000] [--mirror DIR]``.

Per dataset: Trn1 / Val1 of split 0 (seed 0, ratios 0.3/0.1/0.3/0.1/0.2, as the
pipeline's ``make_splits``), standardised on Trn1; ``fit_crammer_singer_path``
fits the whole grid warm-started along C, single-threaded BLAS. Prints per C:
wall time, Newton iterations, primal objective, relative duality gap, Val1
error; with ``--liblinear`` also the objective (of the same function) and time
of ``LinearSVC(multi_class="crammer_singer", tol=1e-4, max_iter=100000)`` as
``make_classifier`` configured it before the certified solver (the "before";
slow: about a minute per fit on letter).
"""

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from rejectopt.classifiers._crammer_singer import (
    CrammerSingerSVM,
    crammer_singer_objective,
    fit_crammer_singer_path,
)
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.splits import DEFAULT_RATIOS, make_splits

DEFAULT_MIRROR = os.environ.get("REJECTOPT_DATA_MIRROR")


def load_trn1_val1(name, mirror, work_dir):
    """Standardised (Trn1, Val1) of split 0, exactly as the pipeline makes them."""
    npz = Path(work_dir) / f"{name}.npz"
    prepare_dataset(name, Path(work_dir) / "raw", npz, mirror=mirror, allow_download=False)
    X, y = load_prepared(npz)
    parts = make_splits(y, ratios=DEFAULT_RATIOS, n_splits=1, seed=0, dataset=name)
    trn, val = parts["trn1_0"], parts["val1_0"]
    scaler = StandardScaler().fit(X[trn])
    return scaler.transform(X[trn]), y[trn], scaler.transform(X[val]), y[val]


def timed_path(X, y, C_grid, tol):
    """``fit_crammer_singer_path`` with the wall and CPU seconds of each fit along the path."""
    seconds = {}
    fit_one = CrammerSingerSVM._fit

    def timed(self, *args, **kwargs):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fit_one(self, *args, **kwargs)
        seconds[self.C] = (time.perf_counter() - t0, time.process_time() - c0)
        return result

    CrammerSingerSVM._fit = timed
    try:
        return fit_crammer_singer_path(X, y, C_grid, tol=tol), seconds
    finally:
        CrammerSingerSVM._fit = fit_one


def liblinear_fit(X, y, C):
    """``(objective, seconds, converged)`` of liblinear's Crammer-Singer solver as the pipeline runs it."""
    svc = LinearSVC(
        C=C,
        loss="hinge",
        multi_class="crammer_singer",
        tol=1e-4,
        max_iter=100_000,
        intercept_scaling=1.0,
        random_state=0,
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        svc.fit(X, y)
    elapsed = time.perf_counter() - t0
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return (
        crammer_singer_objective(X, y, svc.coef_, svc.intercept_, C, classes=svc.classes_),
        elapsed,
        converged,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", nargs="+", default=["letter", "avila", "sattelite"])
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0, 100.0, 1000.0])
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument(
        "--mirror",
        default=DEFAULT_MIRROR,
        required=DEFAULT_MIRROR is None,
        help="data_mirror folder with the raw files (default $REJECTOPT_DATA_MIRROR)",
    )
    parser.add_argument("--liblinear", action="store_true", help="also fit liblinear (slow)")
    parser.add_argument(
        "--liblinear-C",
        type=float,
        nargs="+",
        default=None,
        help="C values for liblinear (default: all of --C)",
    )
    args = parser.parse_args(argv)
    lib_C = set(args.C if args.liblinear_C is None else args.liblinear_C)
    print(
        "dataset\tn\td\tK\tC\ttime_s\tcpu_s\tn_iter\tobjective\trel_gap\tval1_error"
        "\tliblinear_objective\tliblinear_time_s\tliblinear_converged\tliblinear_excess"
    )
    with tempfile.TemporaryDirectory() as work_dir, threadpool_limits(limits=1):
        for name in args.datasets:
            X, y, X_val, y_val = load_trn1_val1(name, args.mirror, work_dir)
            t0, c0 = time.perf_counter(), time.process_time()
            path, seconds = timed_path(X, y, args.C, args.tol)
            total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
            for C in sorted(args.C):
                est = path[args.C.index(C)]
                wall, cpu = seconds[C]
                row = [
                    name,
                    X.shape[0],
                    X.shape[1],
                    est.classes_.size,
                    f"{C:g}",
                    f"{wall:.2f}",
                    f"{cpu:.2f}",
                    est.n_iter_,
                    f"{est.objective_:.8g}",
                    f"{est.rel_gap_:.2e}",
                    f"{np.mean(est.predict(X_val) != y_val):.4f}",
                ]
                if args.liblinear and C in lib_C:
                    obj, lib_seconds, converged = liblinear_fit(X, y, C)
                    row += [
                        f"{obj:.8g}",
                        f"{lib_seconds:.1f}",
                        converged,
                        f"{obj / est.objective_ - 1:+.2%}",
                    ]
                else:
                    row += ["", "", "", ""]
                print("\t".join(str(v) for v in row), flush=True)
            print(f"{name}\ttotal\t\t\t\t{total:.2f}\t{total_cpu:.2f}", flush=True)


if __name__ == "__main__":
    main()
