"""Benchmark: linear DoubleHingeSVM vs scikit-learn's SVC(kernel="linear") and LinearSVC on marketing's Trn1.

Data: marketing (UCI bank-full, 45,211 x 51) prepared from the raw mirror with the
project's dataset code, split 0 of ``make_splits(seed=0, ratios=[0.3,0.1,0.3,0.1,0.2])``,
Trn1 (13,563 x 51) standardised with Trn1's statistics. Every model minimises
``||w||^2/2 + C sum_i loss_i`` (C weights the sum of the losses) with its own loss:
double hinge (ours, exact with a certified duality gap), hinge (SVC: libsvm SMO;
LinearSVC: liblinear dual coordinate descent with a regularised bias).

Prints, per C: wall time, ours' iterations / objective / duality gap, SVC's and
LinearSVC's time and hinge objective, and the Val1 cost risk
``(errors + d rejections) / n`` of ours; then the ratio of ours' time to the others'.
SVC runs in a child process killed after ``--svc-timeout`` seconds.

Usage: python benchmarks/bench_double_hinge.py [--C 1 10 100 1000] [--svc-timeout 900] [--threads 1]
       [--no-svc] [--no-linsvc] [--mirror DIR]
"""

import argparse
import multiprocessing as mp
import os
import tempfile
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

from rejectopt.classifiers._double_hinge import DoubleHingeSVM
from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.splits import make_splits

MIRROR = os.environ.get("REJECTOPT_DATA_MIRROR")
RATIOS = (0.3, 0.1, 0.3, 0.1, 0.2)


def load_marketing(mirror=MIRROR, split=0, seed=0):
    """Standardised (X_trn1, y_trn1, X_val1, y_val1) of marketing, labels 0/1."""
    with tempfile.TemporaryDirectory() as tmp:
        prepare_dataset(
            "marketing", f"{tmp}/raw", f"{tmp}/marketing.npz", mirror=mirror, allow_download=False
        )
        X, y = load_prepared(f"{tmp}/marketing.npz")
    splits = make_splits(y, RATIOS, n_splits=split + 1, seed=seed, dataset="marketing")
    parts = {part: splits[f"{part}_{split}"] for part in ("trn1", "val1")}
    scaler = StandardScaler().fit(X[parts["trn1"]])
    return (
        scaler.transform(X[parts["trn1"]]),
        y[parts["trn1"]],
        scaler.transform(X[parts["val1"]]),
        y[parts["val1"]],
    )


def hinge_objective(w, b, X, y, C):
    """``||w||^2/2 + C sum_i max(0, 1 - y_i (<w, x_i> + b))`` with y in {0, 1} mapped to -1/+1."""
    s = np.where(y == 1, 1.0, -1.0)
    return float(0.5 * w @ w + C * np.maximum(0.0, 1.0 - s * (X @ w + b)).sum())


def _fit_svc(queue, X, y, C):
    t0 = time.perf_counter()
    model = SVC(kernel="linear", C=C).fit(X, y)
    queue.put((time.perf_counter() - t0, model.coef_.ravel(), float(model.intercept_[0])))


def time_svc(X, y, C, timeout):
    """(seconds, hinge objective) of SVC(kernel="linear"), or (None, None) after ``timeout`` seconds."""
    queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_fit_svc, args=(queue, X, y, C))
    proc.start()
    try:
        seconds, w, b = queue.get(timeout=timeout)
    except Exception:  # queue.Empty: timed out
        proc.kill()
        proc.join()
        return None, None
    proc.join()
    return seconds, hinge_objective(w, b, X, y, C)


def time_linsvc(X, y, C):
    """(seconds, hinge objective, converged) of LinearSVC(loss="hinge") with its defaults (max_iter=1000)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        model = LinearSVC(C=C, loss="hinge", dual=True, random_state=0).fit(X, y)
        seconds = time.perf_counter() - t0
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return (
        seconds,
        hinge_objective(model.coef_.ravel(), float(model.intercept_[0]), X, y, C),
        converged,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0, 100.0, 1000.0])
    parser.add_argument(
        "--mirror",
        default=MIRROR,
        required=MIRROR is None,
        help="raw data mirror (default $REJECTOPT_DATA_MIRROR)",
    )
    parser.add_argument("--reject-cost", type=float, default=0.2)
    parser.add_argument("--tol", type=float, default=1e-8)
    parser.add_argument("--svc-timeout", type=float, default=900.0)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for DoubleHingeSVM")
    parser.add_argument("--no-svc", action="store_true", help="skip SVC(kernel='linear')")
    parser.add_argument("--no-linsvc", action="store_true", help="skip LinearSVC")
    args = parser.parse_args(argv)
    X, y, Xv, yv = load_marketing(args.mirror)
    d = args.reject_cost
    print(
        f"marketing Trn1 split 0: n={X.shape[0]} d={X.shape[1]} positives={y.mean():.3f} "
        f"Val1 n={Xv.shape[0]} reject_cost={d} tol={args.tol} threads={args.threads}"
    )
    print(
        "C\tours_s\tn_iter\tobjective\tgap\trel_gap\tval_risk\tval_reject\t"
        "svc_s\tsvc_hinge_obj\tours/svc\tlinsvc_s\tlinsvc_hinge_obj\tlinsvc_converged\tours/linsvc"
    )
    for C in args.C:
        with threadpool_limits(limits=args.threads, user_api="blas"):
            t0 = time.perf_counter()
            model = DoubleHingeSVM(reject_cost=d, C=C, tol=args.tol).fit(X, y)
            ours = time.perf_counter() - t0
        rej = model.reject(Xv)
        val_risk = (np.sum((model.predict(Xv) != yv) & ~rej) + d * rej.sum()) / len(yv)
        linsvc, lin_obj, lin_conv = (
            time_linsvc(X, y, C) if not args.no_linsvc else (None, None, None)
        )
        svc, svc_obj = (None, None) if args.no_svc else time_svc(X, y, C, args.svc_timeout)
        svc_txt = (
            "n/a" if args.no_svc else f">{args.svc_timeout:g}" if svc is None else f"{svc:.2f}"
        )
        ratio_svc = "n/a" if svc is None else f"{ours / svc:.3f}"
        lin_txt = (
            "n/a\tn/a\tn/a\tn/a"
            if linsvc is None
            else f"{linsvc:.2f}\t{lin_obj:.8g}\t{lin_conv}\t{ours / linsvc:.3f}"
        )
        print(
            f"{C:g}\t{ours:.2f}\t{model.n_iter_}\t{model.objective_:.10g}\t{model.gap_:.2e}\t"
            f"{model.rel_gap_:.2e}\t{val_risk:.5f}\t{rej.mean():.4f}\t{svc_txt}\t"
            f"{'n/a' if svc_obj is None else f'{svc_obj:.8g}'}\t{ratio_svc}\t{lin_txt}",
            flush=True,
        )


if __name__ == "__main__":
    main()
