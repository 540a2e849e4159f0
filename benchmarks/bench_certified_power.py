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
bound), ``full_tested`` (the full set alone on the rows ltt tests, its own seeded split of the draw:
on a flat risk the error count of those rows is sufficient, so no procedure that holds start rows
out certifies the full set more often, up to the binomial test's discreteness), and the ``oracle``
(the largest cut of the population whose risk is <= a; no data). A draw
that certifies nothing accepts nothing (coverage 0, no violation). Per cell and method: the share of
draws that certify (``feasible_rate``), that violate (population risk > a), the mean population
coverage, and the CPU seconds of the cell (``time.process_time``). The checks of ``ltt``: violation
rate <= delta + 3 sigma (sigma = sqrt(delta (1 - delta) / draws)); feasible rate >= the better of
full and SGR minus 0.02; mean coverage >= theirs minus 0.01. Prints a Markdown table; writes one
record per (population, n, delta, method).

``--remedies`` also fits the remedies of :data:`REMEDIES` on the same draws (each valid; none
meets more cells than ltt) and writes their records and a summary per method beside ``--out``.

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

from rejectopt import _certify
from rejectopt._certify import _evaluate, _population_sums, _risk_upper_bound, fit_certified_risk
from rejectopt.selective import InfeasibleTargetError, SelectionFunction, fit_geifman_el_yaniv

ROWS = 200_000

#: The methods of every cell; ``--remedies`` adds :data:`REMEDIES`.
METHODS = ("ltt", "full", "sgr", "full_tested")


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
        prepare_dataset(
            "letter", os.path.join(folder, "raw"), os.path.join(folder, "letter.npz"), mirror=mirror
        )
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
    rows = _certify._ltt_rows(
        loss, s, _certify.START_FRACTION, draw
    )  # ltt's own split of this draw
    tested = (
        rows.n_tested
        and float(_risk_upper_bound(rows.sums[-1], rows.n_tested, delta, 100.0, True)) <= target
    )
    out["full_tested"] = SelectionFunction(math.inf, 1.0) if tested else None
    return out


# --------------------------------------------------------------------------------------------
# Remedies measured and set aside (``--remedies``): each is valid, and none met more cells
# --------------------------------------------------------------------------------------------
def _weighted_chain(rows, pvalues, weights):
    """Fixed-sequence tests along the cuts, each cut's level passed on to the next cut when it is rejected.

    ``weights[k]`` is cut ``k``'s own share of delta (the full set is the last cut). A graphical
    procedure (Bretz, Maurer, Brannath & Posch 2009) whose every edge leads to the next larger cut:
    the levels that reach a true null come from disjoint runs of false nulls below it, so the
    family-wise error is at most ``sum(weights)``. Returns the selection of the largest rejected cut.
    """
    carry, top = 0.0, -1
    for k in range(int(np.flatnonzero(weights)[0]), pvalues.size):
        level = weights[k] + carry
        carry = level if pvalues[k] <= level else 0.0
        top = k if carry > 0 else top
    if top < 0:
        return None
    return (
        SelectionFunction(math.inf, 1.0)
        if top == pvalues.size - 1
        else SelectionFunction(float(rows.values[top + 1]), 0.0)
    )


def remedy(kind, loss, s, target, delta, draw):
    """One remedy's selection on a sample (None: nothing certified); ``kind`` a key of :data:`REMEDIES`."""
    n = loss.size
    rows = _certify._ltt_rows(loss, s, _certify.START_FRACTION, draw)
    pvalues = _certify._risk_pvalue(rows.sums, rows.trials, target, 100.0, True)
    if (
        rows.start_loss.size == 0
    ):  # below 190 rows every variant is ltt's: the full set alone at delta
        return SelectionFunction(math.inf, 1.0) if pvalues[-1] <= delta else None
    if (
        kind == "fixed_half"
    ):  # the full set on every row at delta / 2, no weight from the start rows
        if float(_certify._risk_pvalue(loss.sum(), n, target, 100.0, True)) <= delta / 2:
            return SelectionFunction(math.inf, 1.0)
        full, chain = 0.0, delta / 2
    else:
        share = _certify._ltt_full_share(rows, target, delta, 100.0)
        if (
            kind == "steeper_share"
        ):  # more of delta to the full set wherever the start rows give it a chance
            share = min(1.0 - _certify.FULL_SHARE_MIN, 1.0 - (1.0 - share) ** 2)
        full = delta * share
        chain = delta - full
    start = _certify._ltt_start(
        rows.start_loss, rows.start_s, target, chain, rows.n_tested, 100.0, True
    )
    weights = np.zeros(pvalues.size)
    weights[-1] = full
    starts = [(start, 1.0)]
    if (
        kind == "two_starts"
    ):  # half of the chain's level also starts at the earliest cut predicted to pass
        values, trials, sums = _certify._prefix_sums(rows.start_loss, rows.start_s)
        scale = rows.n_tested / rows.start_loss.size
        predicted = _certify._risk_pvalue(sums * scale, trials * scale, target, 100.0, True)
        j = int(np.flatnonzero(predicted <= max(chain, float(predicted.min())))[0])
        starts = [(start, 0.5), (math.inf if j == values.size - 1 else float(values[j]), 0.5)]
    for where, share in starts:
        k = int(np.searchsorted(rows.values, where, side="right")) - 1
        if k >= 0:
            weights[k] += share * chain
    if not weights.any():
        return None
    return _weighted_chain(rows, pvalues, weights)


#: The remedies of the issue measured beside ltt: ``passing`` (ltt with the chain's level passed on
#: to the full set when the run reaches it), ``two_starts`` (``passing`` with half of the chain's
#: level at a second, earlier start) and ``fixed_half`` (the full set on every row at delta / 2 and
#: the chain at delta / 2: no start row decides the split, so the full set keeps the start rows) and
#: ``steeper_share`` (``passing`` with the full set's share ``1 - (1 - w)^2``).
REMEDIES = ("passing", "two_starts", "fixed_half", "steeper_share")


def run_cell(name, population, table, target, n, delta, draws, seed, remedies=()):
    loss_all, s_all = population
    rng = np.random.default_rng(seed)
    tally = {m: [0, 0, 0.0] for m in (*METHODS, *remedies)}
    start = time.process_time()
    for draw in range(draws):
        rows = rng.integers(0, loss_all.size, n)
        selections = fits(loss_all[rows], s_all[rows], target, delta, draw)
        for kind in remedies:
            selections[kind] = remedy(kind, loss_all[rows], s_all[rows], target, delta, draw)
        for method, selection in selections.items():
            if selection is None:
                continue
            coverage, risk = _evaluate(selection, table)
            tally[method][0] += 1
            tally[method][1] += bool(risk > target * (1 + 1e-12))
            tally[method][2] += coverage
    seconds = time.process_time() - start
    oracle = oracle_coverage(table, target)
    records = [
        dict(
            population=name,
            target=target,
            n=n,
            delta=delta,
            method=m,
            draws=draws,
            feasible_rate=v[0] / draws,
            violation_rate=v[1] / draws,
            mean_coverage=v[2] / draws,
            oracle_coverage=oracle,
            cpu_seconds=seconds,
        )
        for m, v in tally.items()
    ]
    records.append(
        dict(
            population=name,
            target=target,
            n=n,
            delta=delta,
            method="oracle",
            draws=draws,
            feasible_rate=float(oracle > 0),
            violation_rate=0.0,
            mean_coverage=oracle,
            oracle_coverage=oracle,
            cpu_seconds=0.0,
        )
    )
    return records


def checks(frame, method="ltt"):
    """Per cell, whether ``method`` meets the three checks (the docstring's)."""
    rows = []
    for (name, n, delta), cell in frame.groupby(["population", "n", "delta"], sort=False):
        by = cell.set_index("method")
        sigma = math.sqrt(delta * (1 - delta) / by.loc[method, "draws"])
        best_feasible = max(by.loc["full", "feasible_rate"], by.loc["sgr", "feasible_rate"])
        best_coverage = max(by.loc["full", "mean_coverage"], by.loc["sgr", "mean_coverage"])
        rows.append(
            dict(
                population=name,
                n=n,
                delta=delta,
                method=method,
                valid=by.loc[method, "violation_rate"] <= delta + 3 * sigma,
                feasible_ok=by.loc[method, "feasible_rate"] >= best_feasible - 0.02,
                coverage_ok=by.loc[method, "mean_coverage"] >= best_coverage - 0.01,
                feasible_gap=by.loc[method, "feasible_rate"] - best_feasible,
                coverage_gap=by.loc[method, "mean_coverage"] - best_coverage,
            )
        )
    return pd.DataFrame(rows)


def remedies_summary(frame):
    """Per method (ltt, the full set on ltt's tested rows, each remedy): cells missed, and the mean
    coverage over cells."""
    out = []
    for method in ("ltt", "full_tested", *[m for m in REMEDIES if m in set(frame["method"])]):
        verdict = checks(frame, method)
        missed = verdict[~(verdict["valid"] & verdict["feasible_ok"] & verdict["coverage_ok"])]
        out.append(
            dict(
                method=method,
                cells=len(verdict),
                missed=len(missed),
                mean_coverage=frame.loc[frame["method"] == method, "mean_coverage"].mean(),
                missed_cells=" ".join(
                    f"{r.population}/{r.n}/{r.delta}" for r in missed.itertuples()
                ),
            )
        )
    return pd.DataFrame(out)


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
    check = validate_target(
        loss[:rows], s[:rows], Target("risk", 0.3, confidence=0.95), repeats=50, loss_bound=4.0
    )
    validate = time.process_time() - start
    record = {
        "rows": n,
        "refusal_cpu_seconds": round(refusal, 2),
        "advice": advice,
        "old_pointwise_advice_cpu_seconds": round(pointwise, 2),
        "old_pointwise_advice": old_best,
        "validate_rows": rows,
        "validate_repeats": 50,
        "validate_cpu_seconds": round(validate, 2),
        "validate_infeasible_rate": check.infeasible_rate,
    }
    with open(out, "w") as handle:
        json.dump(record, handle, indent=1)
    print(record)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--ns", type=int, nargs="+", default=[30, 100, 300, 1000, 5000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument(
        "--populations", nargs="+", default=["flat", "increasing", "tied", "letter"]
    )
    parser.add_argument("--mirror", default=os.environ.get("REJECTOPT_DATA_MIRROR"))
    parser.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "certified_power_records.csv")
    )
    parser.add_argument(
        "--timing", action="store_true", help="measure the cost of a refusal's advice instead"
    )
    parser.add_argument(
        "--remedies",
        action="store_true",
        help="also fit the remedies set aside (REMEDIES); their records and summary go to "
        "<out>_remedies.csv and <out>_remedies_summary.csv",
    )
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
                records += run_cell(
                    name,
                    (loss, s),
                    table,
                    target,
                    n,
                    delta,
                    args.draws,
                    seed=[p_index, n, int(round(1000 * delta))],
                    remedies=REMEDIES if args.remedies else (),
                )
                print(name, n, delta, "done", flush=True)
    frame = pd.DataFrame(records)
    if args.remedies:
        frame.to_csv(args.out.replace(".csv", "_remedies.csv"), index=False)
        summary = remedies_summary(frame)
        summary.to_csv(args.out.replace(".csv", "_remedies_summary.csv"), index=False)
        print(summary.to_markdown(index=False))
        frame = frame[frame["method"].isin([*METHODS, "oracle"])]
    frame.to_csv(args.out, index=False)
    verdict = checks(frame)
    verdict.to_csv(args.out.replace(".csv", "_checks.csv"), index=False)
    wide = frame.pivot_table(
        index=["population", "target", "n", "delta"],
        columns="method",
        sort=False,
        values=["feasible_rate", "violation_rate", "mean_coverage"],
    )
    print(wide.round(3).to_markdown())
    print(verdict.to_markdown(index=False))
    print(f"total CPU seconds: {time.process_time() - total:.1f}")


if __name__ == "__main__":
    main()
