"""SelectiveClassifier's ``cv``: a held-out split (``cv=None``) against cross-fitting (``cv=5``, ``cv=10``).

Run: ``.venv/bin/python benchmarks/bench_estimator_cv.py [--seeds 8] [--out benchmarks/bench_estimator_cv.csv]``.

On scikit-learn's digits (1,797 rows, 10 classes), for each seed a stratified half is the training
sample and the other half the test rows (``train_test_split(..., test_size=0.5, stratify=y,
random_state=seed)``). ``SelectiveClassifier(LogisticRegression(max_iter=2000), target="coverage",
value=0.8, random_state=seed, cv=cv)`` is fitted on the training half with every other parameter
at its default (SELE, the C grid 0, 1, 10, 100, 1000); the record is its coverage and selective
risk (0/100 loss, percent) on the test rows, the rows the selection function was calibrated on,
and the CPU seconds of ``fit`` (``time.process_time``, one BLAS/OpenMP thread), each
``cv`` measured in the same run, seed by seed, so that they share the machine's state (after one
unrecorded warm-up fit per ``cv``, which pays for the imports and compilation). One record per (cv,
seed) goes to ``--out``; the summary (mean and sample sd over the seeds of the coverage error
``coverage - 0.8``, its mean absolute value, the test risk and the fit time) is printed as a
Markdown table. The default of ``cv`` is chosen from this table (see SelectiveClassifier's ``cv``).
"""

import argparse
import platform
import time
import warnings
from pathlib import Path

import pandas as pd
import sklearn
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from rejectopt.estimator import SelectiveClassifier

DEFAULT_OUT = Path(__file__).resolve().parent / "bench_estimator_cv.csv"
TARGET_COVERAGE = 0.8
CVS = (None, 5, 10)


def run(seed, cv, X, y):
    """One fit on a stratified half of digits and its test coverage, test risk and fit CPU seconds."""
    X_trn, X_tst, y_trn, y_tst = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=seed
    )
    model = SelectiveClassifier(
        LogisticRegression(max_iter=2000),
        target="coverage",
        value=TARGET_COVERAGE,
        random_state=seed,
        cv=cv,
    )
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # a missed coverage on the report rows is what is measured here
        model.fit(X_trn, y_trn)
    seconds = time.process_time() - start
    accept = model.accept(X_tst)
    wrong = model.estimator_.predict(X_tst) != y_tst
    return {
        "cv": "None" if cv is None else cv,
        "seed": seed,
        "n_train": len(y_trn),
        "n_test": len(y_tst),
        "n_calibration": len(model.split_["calibration"]),
        "n_classifier": len(model.split_["classifier"]),
        "test_coverage": float(accept.mean()),
        "coverage_error": float(accept.mean() - TARGET_COVERAGE),
        "test_selective_risk": float(100.0 * wrong[accept].mean()),
        "test_risk_all": float(100.0 * wrong.mean()),
        "fit_cpu_seconds": seconds,
        "sklearn_version": sklearn.__version__,
        "python": platform.python_version(),
    }


def summary(records):
    """Mean and sample sd over the seeds, per cv."""
    grouped = records.groupby("cv", sort=False)
    return pd.DataFrame(
        {
            "seeds": grouped.size(),
            "n_calibration": grouped["n_calibration"].mean(),
            "coverage_mean": grouped["test_coverage"].mean(),
            "coverage_min": grouped["test_coverage"].min(),
            "coverage_max": grouped["test_coverage"].max(),
            "error_mean": grouped["coverage_error"].mean(),
            "error_sd": grouped["coverage_error"].std(ddof=1),
            "abs_error_mean": grouped["coverage_error"].apply(lambda e: e.abs().mean()),
            "test_risk_mean": grouped["test_selective_risk"].mean(),
            "fit_cpu_s_mean": grouped["fit_cpu_seconds"].mean(),
            "fit_cpu_s_sd": grouped["fit_cpu_seconds"].std(ddof=1),
        }
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    X, y = load_digits(return_X_y=True)
    threadpool_limits(
        1
    )  # one BLAS/OpenMP thread: on a shared machine idle threads' spinning inflates CPU time
    for cv in CVS:  # warm-up, not recorded: the first fit also pays for imports and compilation
        run(0, cv, X, y)
    rows = [
        run(seed, cv, X, y) for seed in range(args.seeds) for cv in CVS
    ]  # each seed's cvs side by side
    records = pd.DataFrame(rows)
    records.to_csv(args.out, index=False)
    print(summary(records).to_markdown(floatfmt=".4f"))


if __name__ == "__main__":
    main()
