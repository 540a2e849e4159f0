"""Certified selective risk side by side with MAPIE's BinaryClassificationController, on the binary datasets.

MAPIE is never a dependency of rejectopt: this script runs in its own environment, made once with
(any folder will do; the records were made with MAPIE 1.6.0)

    python3 -m venv mapie-venv
    mapie-venv/bin/pip install mapie==1.6.0 scikit-learn pandas
    mapie-venv/bin/pip install -e /path/to/rejectopt      # no extras

Run: ``mapie-venv/bin/python benchmarks/bench_mapie_guarantees.py [--datasets marketing phishing]
[--mirror DIR] [--repeats 200] [--deltas 0.1 0.05] [--risk-fraction 0.5]
[--out benchmarks/mapie_guarantees_records.csv]``.

Per binary dataset of the mirror: split 0 of the pipeline's splits (seed 0, default ratios), a
scikit-learn logistic regression (C = 1, standardised features) trained on Trn1; its Tst rows are the
population. Its max-probability (MCP) confidence ``c`` and prediction ``h`` on those rows are shared
by both methods. The target is a selective risk (0/1 error among the accepted rows) at most ``a =
risk_fraction x`` the full-coverage error of the population, with probability ``1 - delta``.
``repeats`` times, half the population is drawn as calibration rows (without replacement):

* **rejectopt**: ``Target("risk", 100 a, confidence=1 - delta).fit(loss, 1 - c)`` (Learn-then-Test
  fixed-sequence testing along the score from a start chosen on held-apart rows, exact binomial
  p-values; the default method);
* **MAPIE**: ``BinaryClassificationController`` with a custom ``BinaryRisk`` (occurrence ``h != y``,
  condition: the row is accepted), ``predict_function(X, lam)`` predicting ``h`` where ``c >= lam``
  and NaN (abstention) otherwise, 100 thresholds ``lam`` on ``[0.5, 0.999]``, the best one chosen by
  the smallest abstention rate (``best_predict_param_choice=abstention_rate``), at
  ``confidence_level = 1 - delta``, with MAPIE's default family-wise error control
  (``bonferroni_holm``; its ``fixed_sequence`` refuses the 2-D thresholds that abstention needs, and
  ``split_fixed_sequence`` would learn its order on rows of its own).

For each, the population's coverage and selective risk of the fitted rule are computed exactly on all
rows; a draw *violates* when the population risk exceeds ``a``; a draw where no threshold is certified
rejects everything (coverage 0, no violation). MAPIE is used as a reference, compared by values only.
Prints a Markdown table; writes one record per (dataset, delta, method) to ``--out``.
"""

import argparse
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

import mapie
import numpy as np
import pandas as pd
import sklearn
from mapie.risk_control import BinaryClassificationController, BinaryRisk, abstention_rate
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from rejectopt.datasets import REGISTRY, load_prepared, prepare_dataset
from rejectopt.selective import InfeasibleTargetError
from rejectopt.splits import make_splits
from rejectopt.targets import Target

DEFAULT_MIRROR = os.environ.get("REJECTOPT_DATA_MIRROR")
DEFAULT_OUT = Path(__file__).resolve().parent / "mapie_guarantees_records.csv"

#: MAPIE's risk: the error rate among the accepted rows (an abstention is a NaN prediction).
SELECTIVE_ERROR = BinaryRisk(
    risk_occurrence=lambda y_true, y_pred: y_pred != y_true,
    risk_condition=lambda y_true, y_pred: ~np.isnan(y_pred),
    higher_is_better=False,
)

#: MAPIE's thresholds on the max-probability confidence (2-D: the predict function gets them as its argument).
LAMBDAS = np.linspace(0.5, 0.999, 100)


def population(name, mirror, work_dir):
    """(confidence c, prediction h, label y) of split 0's Tst rows for an LR trained on Trn1."""
    raw, data = Path(work_dir) / name / "raw", Path(work_dir) / name / "data.npz"
    prepare_dataset(name, raw, data, mirror=mirror)
    X, y = load_prepared(data)
    parts = make_splits(y, n_splits=1, seed=0, dataset=name)
    trn1, tst = parts["trn1_0"], parts["tst_0"]
    scaler = StandardScaler().fit(X[trn1])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(scaler.transform(X[trn1]), y[trn1])
    proba = model.predict_proba(scaler.transform(X[tst]))
    return (
        proba.max(axis=1),
        model.classes_[proba.argmax(axis=1)].astype(float),
        y[tst].astype(float),
    )


def outcome(accept, error):
    """Population coverage and selective risk (fraction) of a deterministic rule ``accept``."""
    n = int(accept.sum())
    return n / accept.size, (float(error[accept].mean()) if n else np.nan)


def mapie_rule(c, h, y, chosen, risk, delta):
    """MAPIE's accepted rows of the population, or None when no threshold is certified."""
    controller = BinaryClassificationController(
        predict_function=lambda X, lam: np.where(X[:, 0] >= lam, X[:, 1], np.nan),
        risk=SELECTIVE_ERROR,
        target_level=risk,
        confidence_level=1.0 - delta,
        best_predict_param_choice=abstention_rate,
        list_predict_params=LAMBDAS[:, None],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        controller.calibrate(np.column_stack([c[chosen], h[chosen]]), y[chosen])
    if controller.best_predict_param is None:
        return None
    return c >= controller.best_predict_param[0]


def ours_rule(c, error, chosen, risk, delta):
    """rejectopt's certified risk target: accepted rows of the population, or None when infeasible."""
    try:
        rule = Target("risk", 100.0 * risk, confidence=1.0 - delta).fit(
            100.0 * error[chosen], 1.0 - c[chosen]
        )
    except InfeasibleTargetError:
        return None
    return rule.acceptance_probability(1.0 - c) > 0.5


def run(name, mirror, work_dir, repeats, deltas, risk_fraction):
    c, h, y = population(name, mirror, work_dir)
    error = (h != y).astype(float)
    risk = round(risk_fraction * error.mean(), 4)
    rng = np.random.default_rng(0)
    draws = [rng.choice(c.size, c.size // 2, replace=False) for _ in range(repeats)]
    records = []
    for delta in deltas:
        methods = {
            "rejectopt (ltt)": lambda chosen: ours_rule(c, error, chosen, risk, delta),
            "MAPIE (bonferroni_holm)": lambda chosen: mapie_rule(c, h, y, chosen, risk, delta),
        }
        for method, fit in methods.items():
            start = time.perf_counter()
            coverages, violations, infeasible = [], 0, 0
            for chosen in draws:
                accept = fit(chosen)
                if accept is None:
                    infeasible += 1
                    coverages.append(0.0)
                    continue
                coverage, population_risk = outcome(accept, error)
                coverages.append(coverage)
                violations += bool(population_risk > risk * (1 + 1e-12))
            high = (
                stats.beta.isf(0.025, violations + 1, repeats - violations)
                if violations < repeats
                else 1.0
            )
            records.append(
                {
                    "dataset": name,
                    "n_population": c.size,
                    "n_calibration": c.size // 2,
                    "base_risk": round(error.mean(), 4),
                    "target_risk": risk,
                    "delta": delta,
                    "method": method,
                    "repeats": repeats,
                    "mean_coverage": float(np.mean(coverages)),
                    "violation_rate": violations / repeats,
                    "violation_high": float(high),
                    "infeasible_rate": infeasible / repeats,
                    "seconds_per_fit": (time.perf_counter() - start) / repeats,
                }
            )
    return records


def markdown(frame):
    columns = [
        "dataset",
        "target_risk",
        "delta",
        "method",
        "mean_coverage",
        "violation_rate",
        "violation_high",
        "infeasible_rate",
    ]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in frame[columns].itertuples(index=False):
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    binary = [n for n, spec in REGISTRY.items() if spec.n_classes == 2]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=None,
        help=f"binary datasets (default: those of {', '.join(binary)} in the mirror)",
    )
    parser.add_argument(
        "--mirror",
        type=Path,
        default=DEFAULT_MIRROR,
        required=DEFAULT_MIRROR is None,
        help="data_mirror folder with the raw files (default $REJECTOPT_DATA_MIRROR)",
    )
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.1, 0.05])
    parser.add_argument("--risk-fraction", type=float, default=0.5)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    datasets = args.datasets or [n for n in binary if (args.mirror / n).is_dir()]
    not_binary = [n for n in datasets if n not in binary]
    if not_binary:
        parser.error(
            f"--datasets: {not_binary} are not binary datasets (binary: {', '.join(binary)})"
        )
    records = []
    with tempfile.TemporaryDirectory() as work_dir:
        for name in datasets:
            records += run(
                name, args.mirror, work_dir, args.repeats, args.deltas, args.risk_fraction
            )
    frame = pd.DataFrame(records)
    frame["mapie_version"], frame["sklearn_version"] = mapie.__version__, sklearn.__version__
    frame["python"] = platform.python_version()
    frame.to_csv(args.out, index=False)
    print(markdown(frame))
    print(f"\nrecords: {args.out}")


if __name__ == "__main__":
    main()
