"""The release gate "risk <= a AND coverage >= w" side by side with MAPIE's multi-risk control.

MAPIE is never a dependency of rejectopt: like ``bench_mapie_guarantees.py`` this script runs in an
environment holding both (its docstring says how to make one; the records were made with MAPIE
1.6.0). Importing this module needs no MAPIE: the tests read :func:`page_table` from it.

Run: ``mapie-venv/bin/python benchmarks/bench_mapie_gate.py [--repeats 200] [--ns 1000 4000]
[--deltas 0.05 0.1] [--learn-fraction 0.2] [--out benchmarks/mapie_gate_records.csv]``.

The task is binary and ships with scikit-learn (no download): digits, odd against even. A
logistic regression (C = 1, standardised features) is trained on a stratified half (seed 0); the
other half's 899 rows are the population. Their max-probability confidence ``c``, prediction
``h`` and 0/1 error are shared by every method. Per setting (target risk ``a``, floor ``w`` =
``floor_share`` x the population's largest coverage with risk <= ``a``, rounded to 0.01), n and
delta, ``repeats`` calibration samples of ``n`` rows are drawn with replacement from the
population (the same draws for every method) and fitted by:

* ``rejectopt gate``: ``Target("risk", 100 a, confidence=1 - delta, min_coverage=w)`` (the
  coverage by an order statistic at ``delta rho``, rho = 0.1; the risk by fixed-sequence testing
  on every row from the cut just below the coverage cut, at ``delta (1 - rho)``);
* ``MAPIE bonferroni_holm``: ``BinaryClassificationController`` with two risks, the selective
  error (a custom ``BinaryRisk``: occurrence ``h != y``, condition "accepted") at ``a`` and
  MAPIE's ``abstention_rate`` at ``1 - w``, the predict function returning ``h`` where ``c >=
  lam`` and NaN (abstention) elsewhere, 100 thresholds ``lam`` on [0.5, 0.999] (2-D parameters,
  as abstention needs), the certified threshold of largest coverage
  (``best_predict_param_choice=abstention_rate``), family-wise control by Holm (the default);
* ``MAPIE split_fixed_sequence``: the same controller with ``fwer_method="split_fixed_sequence"``:
  ``learn_fixed_sequence_order(..., binary=True)`` on the first ``learn_fraction`` of the draw's
  rows (the ordering), ``calibrate`` on the rest. MAPIE's plain ``fixed_sequence`` refuses
  several risks and 2-D parameters.

MAPIE's p-value per threshold is the larger of the two risks' (binary Hoeffding-Bentkus) p-values:
one intersection-union test per threshold at the whole of delta. A draw is *granted* when the
method certifies a threshold, *violated* when the granted rule's population risk exceeds ``a``
or its population coverage is below ``w`` (exact: the population is the finite table the draws
come from); a refused draw accepts nothing (coverage 0, no violation). MAPIE is a reference,
compared by values only. Writes one record per (a, w, n, delta, method) to ``--out`` and prints
the page's table.
"""

import argparse
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

DEFAULT_OUT = Path(__file__).resolve().parent / "mapie_gate_records.csv"

#: (target risk a, floor as a share of the population's largest coverage at risk a).
SETTINGS = ((0.05, 0.75), (0.02, 0.75), (0.05, 0.9))
#: MAPIE's thresholds on the max-probability confidence, as in ``bench_mapie_guarantees.py``.
LAMBDAS = np.linspace(0.5, 0.999, 100)
METHODS = ("rejectopt gate", "MAPIE bonferroni_holm", "MAPIE split_fixed_sequence")


def population():
    """(confidence c, prediction h, label y) of the held-out half of digits, odd against even."""
    X, y = load_digits(return_X_y=True)
    y = y % 2
    X_trn, X_pop, y_trn, y_pop = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_trn)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(scaler.transform(X_trn), y_trn)
    proba = model.predict_proba(scaler.transform(X_pop))
    return (
        proba.max(axis=1),
        model.classes_[proba.argmax(axis=1)].astype(float),
        y_pop.astype(float),
    )


def oracle_coverage(c, error, risk):
    """The population's largest coverage of a cut ``c >= t`` whose risk is <= ``risk``."""
    levels = np.unique(c)[::-1]
    accepted = np.array([(c >= t).sum() for t in levels])
    errors = np.array([error[c >= t].sum() for t in levels])
    ok = errors <= risk * accepted + 1e-9
    return float(accepted[ok].max() / c.size) if ok.any() else 0.0


def gate_rule(c, error, chosen, risk, floor, delta):
    """rejectopt's release gate: the population's accepted rows, or None when refused."""
    from rejectopt.selective import InfeasibleTargetError  # the MAPIE environment's install
    from rejectopt.targets import Target

    target = Target("risk", 100.0 * risk, confidence=1.0 - delta, min_coverage=floor)
    try:
        rule = target.fit(100.0 * error[chosen], 1.0 - c[chosen])
    except InfeasibleTargetError:
        return None
    return rule.acceptance_probability(1.0 - c) > 0.5


def mapie_rule(c, h, y, chosen, risk, floor, delta, fwer_method, learn_fraction):
    """MAPIE's two-risk controller: the population's accepted rows, or None when refused."""
    from mapie.risk_control import (  # MAPIE: the reference, never a rejectopt dependency
        BinaryClassificationController,
        BinaryRisk,
        abstention_rate,
    )

    selective_error = BinaryRisk(
        risk_occurrence=lambda y_true, y_pred: y_pred != y_true,
        risk_condition=lambda y_true, y_pred: ~np.isnan(y_pred),
        higher_is_better=False,
    )
    controller = BinaryClassificationController(
        predict_function=lambda X, lam: np.where(X[:, 0] >= lam, X[:, 1], np.nan),
        risk=[selective_error, abstention_rate],
        target_level=[float(risk), float(1.0 - floor)],
        confidence_level=1.0 - delta,
        best_predict_param_choice=abstention_rate,
        list_predict_params=LAMBDAS[:, None],
        fwer_method=fwer_method,
    )
    X = np.column_stack([c, h])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fwer_method == "split_fixed_sequence":
            learn, chosen = np.split(chosen, [int(round(learn_fraction * chosen.size))])
            controller.learn_fixed_sequence_order(X[learn], y[learn], binary=True)
        controller.calibrate(X[chosen], y[chosen])
    if controller.best_predict_param is None:
        return None
    return c >= controller.best_predict_param[0]


def cell(pop, draws, risk, floor, delta, method, learn_fraction):
    """Grant rate, violation rate and its upper 95 % bound, mean coverage, seconds per fit."""
    c, h, y, error = pop
    start, granted, violations, coverages = time.perf_counter(), 0, 0, []
    for chosen in draws:
        if method == METHODS[0]:
            accept = gate_rule(c, error, chosen, risk, floor, delta)
        else:
            fwer = method.split()[1]
            accept = mapie_rule(c, h, y, chosen, risk, floor, delta, fwer, learn_fraction)
        if accept is None:
            coverages.append(0.0)
            continue
        granted += 1
        coverage = accept.mean()
        coverages.append(float(coverage))
        population_risk = error[accept].mean() if accept.any() else 0.0
        violations += bool(population_risk > risk + 1e-12 or coverage < floor - 1e-12)
    repeats = len(draws)
    high = (
        stats.beta.isf(0.025, violations + 1, repeats - violations) if violations < repeats else 1.0
    )
    return {
        "grant_rate": granted / repeats,
        "violation_rate": violations / repeats,
        "violation_high": float(high),
        "mean_coverage": float(np.mean(coverages)),
        "seconds_per_fit": (time.perf_counter() - start) / repeats,
    }


def run(repeats, ns, deltas, learn_fraction):
    c, h, y = population()
    error = (h != y).astype(float)
    pop = (c, h, y, error)
    records = []
    for risk, share in SETTINGS:
        oracle = oracle_coverage(c, error, risk)
        floor = round(share * oracle, 2)
        for n in ns:
            rng = np.random.default_rng(n)
            draws = [rng.choice(c.size, n, replace=True) for _ in range(repeats)]
            for delta in deltas:
                for method in METHODS:
                    result = cell(pop, draws, risk, floor, delta, method, learn_fraction)
                    records.append(
                        {
                            "task": "digits odd/even",
                            "n_population": c.size,
                            "base_risk": round(float(error.mean()), 4),
                            "target_risk": risk,
                            "oracle_coverage": round(oracle, 4),
                            "min_coverage": floor,
                            "n": n,
                            "delta": delta,
                            "method": method,
                            "repeats": repeats,
                            "learn_fraction": learn_fraction,
                            **result,
                        }
                    )
                    print(records[-1], flush=True)
    return pd.DataFrame(records)


def page_table(record):
    """The Guarantees page's table: one row per cell, grant / violation / coverage per method."""
    head = ["target risk", "floor", "n", "delta"]
    short = {"rejectopt gate": "gate", "MAPIE bonferroni_holm": "Holm"}
    short["MAPIE split_fixed_sequence"] = "SFST"
    for method in METHODS:
        head += [f"{short[method]} {what}" for what in ("grants", "violates", "coverage")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = ["target_risk", "min_coverage", "n", "delta"]
    for key, rows in record.groupby(keys, sort=False):
        by = rows.set_index("method")
        cells = [f"{key[0]:g}", f"{key[1]:g}", f"{int(key[2]):,}", f"{key[3]:g}"]
        for method in METHODS:
            cells += [f"{by.loc[method, what]:.3f}" for what in ("grant_rate", "violation_rate")]
            cells.append(f"{by.loc[method, 'mean_coverage']:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--ns", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument("--learn-fraction", type=float, default=0.2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    import mapie  # MAPIE: the reference, never a rejectopt dependency
    import sklearn

    frame = run(args.repeats, args.ns, args.deltas, args.learn_fraction)
    frame["mapie_version"], frame["sklearn_version"] = mapie.__version__, sklearn.__version__
    frame["python"] = platform.python_version()
    frame.to_csv(args.out, index=False)
    print(page_table(frame))
    print(f"\nrecords: {args.out}")


if __name__ == "__main__":
    main()
