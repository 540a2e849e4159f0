"""How much a certified risk target certifies: Learn-then-Test beside the full set alone, SGR and the oracle.

Run: ``python benchmarks/bench_certified_power.py [--draws 400] [--ns 30 100 300 1000 5000]
[--deltas 0.05 0.1] [--mirror DIR] [--out benchmarks/certified_power_records.csv]``. The letter
population needs the raw files (``--mirror`` or the environment variable ``REJECTOPT_DATA_MIRROR``, a
folder laid out as in the guide's "Running it"); without them its rows are left out and said so.

Each population is a finite table of (0/100 loss, uncertainty) rows with a target risk ``a``; a
calibration sample of ``n`` rows is drawn i.i.d. from it (with replacement, so the table *is* the
distribution and every population quantity is exact):

* **flat**: 200,000 rows, error probability 5 % whatever the score, ``a`` = 8 % (the full set is the
  best cut; the case where the fixed-sequence test from a start used to refuse);
* **increasing**: 200,000 rows, ``u ~ U(0, 1)``, ``P(error | u) = u / 2``, ``a`` = 10 % (best
  coverage 0.4);
* **five tied levels**: 200,000 rows on 5 score values, error probabilities 2, 4, 8, 15 and 30 %,
  ``a`` = 8 % (best coverage 0.8: levels 1-4, risk 7.25 %);
* **letter**: a logistic regression trained on 7,000 rows of letter, its MCP uncertainty on the other
  13,000 (23.5 % errors), ``a`` = 5 %, as on the Guarantees page.

Per (population, n, delta), ``draws`` samples are fitted by: ``ltt`` (``fit_certified_risk``, the
library's default, seeded by the draw), ``full`` (the full set alone: accept everything when its
Clopper-Pearson bound at delta is <= a), ``sgr`` (Geifman & El-Yaniv's binary search with its union
bound), and the ``oracle`` (the largest cut of the population whose risk is <= a; no data). A draw
that certifies nothing accepts nothing (coverage 0, no violation). Per cell and method: the share of
draws that certify (``feasible_rate``), that violate (population risk > a), the mean population
coverage, and the CPU seconds of the cell (``time.process_time``). The checks of ``ltt``: violation
rate <= delta + 3 sigma (sigma = sqrt(delta (1 - delta) / draws)); feasible rate >= the better of
full and SGR minus 0.02; mean coverage >= theirs minus 0.01. Prints a Markdown table; writes one
record per (population, n, delta, method).

``--timing`` measures instead what a refusal's advice costs (CPU seconds, ``time.process_time``) on
a bounded loss (0-4, B = 4, Hoeffding-Bentkus): the refusal of a 1,000,000-row sample (fit and
advice) against the advice it replaced, the smallest pointwise Hoeffding-Bentkus bound over every
cut (50 bisection steps per cut), computed in the same run; and ``validate_target`` with 50
repeats on 100,000 rows of a target no draw certifies. Writes ``certified_advice_timing.json``.
"""

import argparse
import math
import os
import time

import numpy as np
import pandas as pd

from rejectopt._certify import _evaluate, _population_sums, _risk_upper_bound, fit_certified_risk
from rejectopt.selective import InfeasibleTargetError, SelectionFunction, fit_geifman_el_yaniv

ROWS = 200_000


def synthetic(kind, seed=0):
    """The flat, increasing or five-tied-levels population: (loss, uncertainty, target)."""
    rng = np.random.default_rng(seed)
    u = rng.random(ROWS)
    if kind == "flat":
        p, target = np.full(ROWS, 0.05), 8.0
    elif kind == "increasing":
        p, target = u / 2, 10.0
    else:
        level = rng.integers(0, 5, ROWS)
        u = level / 4.0
        p, target = np.array([0.02, 0.04, 0.08, 0.15, 0.30])[level], 8.0
    return 100.0 * (rng.random(ROWS) < p), u, target


def letter(mirror):
    """Letter's logistic regression and MCP uncertainty on 13,000 held-out rows (the Guarantees page's)."""
    import tempfile

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rejectopt.datasets import load_prepared, prepare_dataset
    from rejectopt.metrics import per_example_loss

    with tempfile.TemporaryDirectory() as folder:
        prepare_dataset("letter", os.path.join(folder, "raw"), os.path.join(folder, "letter.npz"), mirror=mirror)
        X, y = load_prepared(os.path.join(folder, "letter.npz"))
    rows = np.random.default_rng(0).permutation(len(y))
    train, population = rows[:7000], rows[7000:]
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X[train], y[train])
    loss = per_example_loss("zero_one", y[population], clf.predict(X[population]))
    return np.asarray(loss, dtype=float), 1 - clf.predict_proba(X[population]).max(axis=1), 5.0


def oracle_coverage(table, target):
    """Largest population coverage of a cut {s <= v} whose population risk is <= target."""
    _, _, cum_counts, cum_sums = table
    counts, sums = cum_counts[1:], cum_sums[1:]
    ok = sums <= target * counts
    return float(counts[ok].max() / cum_counts[-1]) if ok.any() else 0.0


def fits(loss, s, target, delta, draw):
    """The selection of each method on one sample (None: it certifies nothing)."""
    out = {}
    try:
        out["ltt"] = fit_certified_risk(loss, s, target, 1 - delta, random_state=draw)
    except InfeasibleTargetError:
        out["ltt"] = None
    full = float(_risk_upper_bound(loss.sum(), loss.size, delta, 100.0, True)) <= target
    out["full"] = SelectionFunction(math.inf, 1.0) if full else None
    try:
        out["sgr"] = fit_geifman_el_yaniv(loss, s, target, delta, loss_scale=100.0)[0]
    except InfeasibleTargetError:
        out["sgr"] = None
    return out


def run_cell(name, population, table, target, n, delta, draws, seed):
    loss_all, s_all = population
    rng = np.random.default_rng(seed)
    tally = {m: [0, 0, 0.0] for m in ("ltt", "full", "sgr")}
    start = time.process_time()
    for draw in range(draws):
        rows = rng.integers(0, loss_all.size, n)
        for method, selection in fits(loss_all[rows], s_all[rows], target, delta, draw).items():
            if selection is None:
                continue
            coverage, risk = _evaluate(selection, table)
            tally[method][0] += 1
            tally[method][1] += bool(risk > target * (1 + 1e-12))
            tally[method][2] += coverage
    seconds = time.process_time() - start
    oracle = oracle_coverage(table, target)
    records = [dict(population=name, target=target, n=n, delta=delta, method=m, draws=draws,
                    feasible_rate=v[0] / draws, violation_rate=v[1] / draws, mean_coverage=v[2] / draws,
                    oracle_coverage=oracle, cpu_seconds=seconds) for m, v in tally.items()]
    records.append(dict(population=name, target=target, n=n, delta=delta, method="oracle", draws=draws,
                        feasible_rate=float(oracle > 0), violation_rate=0.0, mean_coverage=oracle,
                        oracle_coverage=oracle, cpu_seconds=0.0))
    return records


def checks(frame):
    """Per cell, whether ltt meets the three checks (the docstring's)."""
    rows = []
    for (name, n, delta), cell in frame.groupby(["population", "n", "delta"], sort=False):
        by = cell.set_index("method")
        sigma = math.sqrt(delta * (1 - delta) / by.loc["ltt", "draws"])
        best_feasible = max(by.loc["full", "feasible_rate"], by.loc["sgr", "feasible_rate"])
        best_coverage = max(by.loc["full", "mean_coverage"], by.loc["sgr", "mean_coverage"])
        rows.append(dict(population=name, n=n, delta=delta,
                         valid=by.loc["ltt", "violation_rate"] <= delta + 3 * sigma,
                         feasible_ok=by.loc["ltt", "feasible_rate"] >= best_feasible - 0.02,
                         coverage_ok=by.loc["ltt", "mean_coverage"] >= best_coverage - 0.01,
                         feasible_gap=by.loc["ltt", "feasible_rate"] - best_feasible,
                         coverage_gap=by.loc["ltt", "mean_coverage"] - best_coverage))
    return pd.DataFrame(rows)


def timing(out):
    """CPU seconds of a refusal's advice, now and as it was (the pointwise bound of every cut)."""
    import json

    from rejectopt._certify import _prefix_sums
    from rejectopt.targets import Target, validate_target

    rng = np.random.default_rng(0)
    n = 1_000_000
    s = rng.random(n)
    loss = np.minimum(4.0, rng.poisson(0.5, n)).astype(float)  # flat: mean 0.5 of B = 4
    start = time.process_time()
    try:
        fit_certified_risk(loss, s, 0.3, 0.95, loss_bound=4.0)
    except InfeasibleTargetError as error:
        advice = error.best_bound
    refusal = time.process_time() - start
    start = time.process_time()
    _, trials, sums = _prefix_sums(loss, s)
    old_best = float(_risk_upper_bound(sums, trials, 0.05, 4.0, False).min())
    pointwise = time.process_time() - start
    rows = 100_000
    start = time.process_time()
    check = validate_target(loss[:rows], s[:rows], Target("risk", 0.3, confidence=0.95), repeats=50,
                            loss_bound=4.0)
    validate = time.process_time() - start
    record = {"rows": n, "refusal_cpu_seconds": round(refusal, 2), "advice": advice,
              "old_pointwise_advice_cpu_seconds": round(pointwise, 2), "old_pointwise_advice": old_best,
              "validate_rows": rows, "validate_repeats": 50, "validate_cpu_seconds": round(validate, 2),
              "validate_infeasible_rate": check.infeasible_rate}
    with open(out, "w") as handle:
        json.dump(record, handle, indent=1)
    print(record)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--ns", type=int, nargs="+", default=[30, 100, 300, 1000, 5000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument("--populations", nargs="+", default=["flat", "increasing", "tied", "letter"])
    parser.add_argument("--mirror", default=os.environ.get("REJECTOPT_DATA_MIRROR"))
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "certified_power_records.csv"))
    parser.add_argument("--timing", action="store_true", help="measure the cost of a refusal's advice instead")
    args = parser.parse_args(argv)
    if args.timing:
        timing(os.path.join(os.path.dirname(args.out), "certified_advice_timing.json"))
        return
    records = []
    total = time.process_time()
    for p_index, name in enumerate(args.populations):
        if name == "letter":
            if not args.mirror:
                print("letter left out: give --mirror or set REJECTOPT_DATA_MIRROR")
                continue
            loss, s, target = letter(args.mirror)
        else:
            loss, s, target = synthetic(name)
        table = _population_sums(loss, s)
        for n in args.ns:
            for delta in args.deltas:
                records += run_cell(name, (loss, s), table, target, n, delta, args.draws,
                                    seed=[p_index, n, int(round(1000 * delta))])
                print(name, n, delta, "done", flush=True)
    frame = pd.DataFrame(records)
    frame.to_csv(args.out, index=False)
    verdict = checks(frame)
    verdict.to_csv(args.out.replace(".csv", "_checks.csv"), index=False)
    wide = frame.pivot_table(index=["population", "target", "n", "delta"], columns="method", sort=False,
                             values=["feasible_rate", "violation_rate", "mean_coverage"])
    print(wide.round(3).to_markdown())
    print(verdict.to_markdown(index=False))
    print(f"total CPU seconds: {time.process_time() - total:.1f}")


if __name__ == "__main__":
    main()
