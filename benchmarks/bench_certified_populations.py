"""Per-group and graded-loss certificates on the four populations of the power benchmark.

Run: ``python benchmarks/bench_certified_populations.py [--draws 300] [--ns 300 1000 3000 5000]
[--deltas 0.05 0.1] [--mirror DIR] [--out benchmarks/certified_populations_records.csv]``. The
populations are those of ``bench_certified_power.py`` (flat, increasing, five tied levels, letter
with ``--mirror`` or ``REJECTOPT_DATA_MIRROR``), each a finite table of (0/100 loss, uncertainty)
rows with its risk target ``a``. Calibration samples of ``n`` rows are drawn from the table with
replacement, so the table *is* the distribution and every population risk and coverage of a cut
is exact. Each population gets two derived columns, drawn once (seeded) and never redrawn, which
leave its (loss, uncertainty) rows as they are:

* **group** (:data:`GROUPS`): each row's label is drawn given its error indicator ``e``, with
  ``P(g | error) = pi_g m_g`` and ``P(g | no error) = pi_g (1 - m_g r) / (1 - r)``, ``r`` the
  table's error rate, ``pi`` = 0.5, 0.4, 0.1 (the shares) and ``m`` = 0.8, 1.0, 2.0 (the risk
  ratios): group ``g`` holds about ``pi_g`` of the rows and errs at about ``m_g r``, the small
  "hard" group twice as often as the table. Given ``e`` the label is independent of the score,
  so within a group the error odds are the table's scaled by ``m_g (1 - r) / (1 - m_g r)`` at
  every score. The flat population's hard group errs at 10 % whatever the score, above its 8 %
  target: only cuts of its first few rows meet the target (its oracle coverage is 0.00005), so
  nearly any certificate it holds is a violation.
* **magnitude**: an error costs 1, 2, 3 or 4 with probabilities 0.55, 0.25, 0.12, 0.08 (mean
  :data:`MEAN_MAGNITUDE` = 1.73), drawn per row independently of everything else; the graded
  loss is ``e x magnitude`` in [0, B], B = 4 (the same errors, graded), and its target is
  ``a / 100 x 1.73``: a cut whose error rate is ``a / 100`` has about that graded risk, so the
  oracle coverages of the two losses are close (both are recorded).

Per (population, n, delta), ``draws`` samples are fitted, the same rows for both kinds:

* **groups**: ``fit_certified_groups(loss, u, group, Target("risk", a, confidence=1 - delta))``
  (``per-group``), the same with ``simultaneous=True``, and ``pooled``: the per-group fit's
  pooled threshold (all rows at ``1 - delta``) applied to every group. Per method and group:
  ``own_rate`` (the group holds its own certificate; NaN for ``pooled``), ``violation_rate``
  (its own certificate and the group's population risk above ``a``; for ``pooled``, the pooled
  threshold's risk on the group above ``a``), ``mean_coverage`` (the group's population coverage
  of the threshold applied to it, 0 in a refused draw), ``refused_rate``; the group ``any`` is
  the share of draws in which some group's claim is false.
* **graded**: ``fit_certified_risk(graded, u, a', 1 - delta, loss_bound=4, tail=t)`` for ``t``
  in :data:`TAILS`, seeded by the draw: ``refused_rate``, ``violation_rate`` (population
  graded risk above ``a'``), ``mean_coverage`` (0 when refused).

``cpu_seconds`` is each kind's CPU time in the cell (``time.process_time``, one process).
Checks (:func:`checks`): every per-group violation rate, the simultaneous ``any`` rate and every
tail's violation rate <= delta + 3 sigma, sigma = sqrt(delta (1 - delta) / draws), the binomial
standard error of a rate whose truth is delta. The pooled threshold's worst group (``any`` of
``pooled``) is reported, not checked: it violates in more than delta of the draws in every cell
of the four populations, since the hard group errs at twice the table's rate and the pooled cut
is fitted to the table (least at 300 rows, where the pooled fit is often refused or covers
little). Writes the records and ``<out>_checks.csv``; prints the checks, the coverage betting
and auto certify beyond Hoeffding-Bentkus per cell (:func:`tail_gains`) and the page's tables
(:func:`page_table`). ``--checks-only`` recomputes the checks and tables from ``--out``.
"""

import argparse
import math
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from bench_certified_power import letter, oracle_coverage, synthetic  # noqa: E402

from rejectopt._certify import _evaluate, _population_sums, fit_certified_risk  # noqa: E402
from rejectopt.selective import InfeasibleTargetError, SelectionFunction  # noqa: E402
from rejectopt.targets import Target, fit_certified_groups  # noqa: E402

#: The groups, their shares of the rows and their risks as multiples of the table's error rate.
GROUPS = ("easy", "middle", "hard")
SHARES = (0.5, 0.4, 0.1)
RISK_RATIOS = (0.8, 1.0, 2.0)
GROUP_METHODS = ("per-group", "simultaneous", "pooled")
#: An error's cost in the graded loss, and its probabilities.
MAGNITUDES = (1.0, 2.0, 3.0, 4.0)
MAGNITUDE_PROBS = (0.55, 0.25, 0.12, 0.08)
MEAN_MAGNITUDE = float(np.dot(MAGNITUDES, MAGNITUDE_PROBS))
LOSS_BOUND = 4.0
TAILS = ("hb", "betting", "auto")


class Population:
    """One population's rows, derived columns and exact tables (per group, and graded)."""

    def __init__(self, name, index, loss, s, target):
        self.name, self.loss, self.s, self.target = name, loss, s, target
        rng = np.random.default_rng([index, 2026])  # fixed once per population
        error = loss > 0
        rate = float(error.mean())
        pi, m = np.array(SHARES), np.array(RISK_RATIOS)
        given_error = pi * m
        given_correct = pi * (1 - m * rate) / (1 - rate)
        draw = rng.random(loss.size)
        cum_error, cum_correct = np.cumsum(given_error), np.cumsum(given_correct)
        cum = np.where(error[:, None], cum_error[None, :], cum_correct[None, :])
        self.groups = np.minimum((draw[:, None] >= cum).sum(axis=1), len(GROUPS) - 1)
        magnitude = rng.choice(MAGNITUDES, loss.size, p=MAGNITUDE_PROBS)
        self.graded = error * magnitude
        self.graded_target = round(target / 100.0 * MEAN_MAGNITUDE, 6)
        self.group_tables = [
            _population_sums(loss[self.groups == g], s[self.groups == g])
            for g in range(len(GROUPS))
        ]
        self.graded_table = _population_sums(self.graded, s)

    def group_summary(self):
        """Per group: share of the rows, full-set risk and oracle coverage at the target."""
        return [
            dict(
                group=name,
                share=float(np.mean(self.groups == g)),
                risk=float(self.loss[self.groups == g].mean()),
                oracle=oracle_coverage(self.group_tables[g], self.target),
            )
            for g, name in enumerate(GROUPS)
        ]


def _group_outcomes(pop, fitted, g, method):
    """(own, violated, coverage) of group ``g`` under one method's fit of a draw."""
    table = pop.group_tables[g]
    if method == "pooled":
        if fitted is None:
            return math.nan, False, 0.0
        selection = SelectionFunction(fitted.threshold, fitted.accept_prob)
        coverage, risk = _evaluate(selection, table)
        return math.nan, bool(risk > pop.target * (1 + 1e-12)), coverage
    try:
        entry = fitted[g]
    except KeyError:  # the group drew no row: it holds no certificate and accepts nothing
        return False, False, 0.0
    coverage, risk = _evaluate(SelectionFunction(entry.threshold, entry.accept_prob), table)
    own = not entry.fallback
    return own, bool(own and risk > pop.target * (1 + 1e-12)), coverage


def group_draw(pop, rows, delta, tally, d):
    """Fit the per-group, simultaneous and pooled selections of draw ``d``; fill ``tally``."""
    target = Target("risk", pop.target, confidence=1 - delta)
    sample = (pop.loss[rows], pop.s[rows], pop.groups[rows])
    fits = {}
    for method in GROUP_METHODS[:2]:
        try:
            fits[method] = fit_certified_groups(
                *sample, target, simultaneous=method == "simultaneous"
            )
        except InfeasibleTargetError:  # a group and the pooled fit both refused
            fits[method] = None
    fits["pooled"] = fits["per-group"].pooled if fits["per-group"] is not None else None
    for method, fitted in fits.items():
        out = tally[method]
        out["refused"][d] = fitted is None
        if fitted is None and method != "pooled":
            continue  # a refused draw accepts nothing: no claim, coverage 0
        for g in range(len(GROUPS)):
            out["own"][d, g], out["violated"][d, g], out["coverage"][d, g] = _group_outcomes(
                pop, fitted, g, method
            )


def graded_draw(pop, rows, delta, tally, d):
    """Fit the graded loss of draw ``d`` under every tail; fill ``tally``."""
    loss, s = pop.graded[rows], pop.s[rows]
    for tail in TAILS:
        out = tally[tail]
        try:
            fitted = fit_certified_risk(
                loss,
                s,
                pop.graded_target,
                1 - delta,
                loss_bound=LOSS_BOUND,
                random_state=d,
                tail=tail,
            )
        except InfeasibleTargetError:
            out["refused"][d] = True
            continue
        coverage, risk = _evaluate(fitted, pop.graded_table)
        out["violated"][d] = bool(risk > pop.graded_target * (1 + 1e-12))
        out["coverage"][d] = coverage


def _group_records(pop, base, tally, seconds):
    """One record per (method, group) and each method's ``any`` row."""
    records = []
    summary = pop.group_summary()
    for method in GROUP_METHODS:
        out = tally[method]
        for g, name in enumerate(GROUPS):
            records.append(
                dict(
                    base,
                    kind="groups",
                    method=method,
                    group=name,
                    target=pop.target,
                    share=summary[g]["share"],
                    full_risk=summary[g]["risk"],
                    oracle_coverage=summary[g]["oracle"],
                    own_rate=float(np.mean(out["own"][:, g])),
                    refused_rate=float(out["refused"].mean()),
                    violation_rate=float(out["violated"][:, g].mean()),
                    mean_coverage=float(out["coverage"][:, g].mean()),
                    cpu_seconds=seconds,
                )
            )
        records.append(
            dict(
                base,
                kind="groups",
                method=method,
                group="any",
                target=pop.target,
                share=1.0,
                full_risk=float(pop.loss.mean()),
                oracle_coverage=oracle_coverage(_population_sums(pop.loss, pop.s), pop.target),
                own_rate=math.nan,
                refused_rate=float(out["refused"].mean()),
                violation_rate=float(out["violated"].any(axis=1).mean()),
                mean_coverage=math.nan,
                cpu_seconds=seconds,
            )
        )
    return records


def _graded_records(pop, base, tally, seconds):
    oracle = oracle_coverage(pop.graded_table, pop.graded_target)
    return [
        dict(
            base,
            kind="graded",
            method=tail,
            group="all",
            target=pop.graded_target,
            share=1.0,
            full_risk=float(pop.graded.mean()),
            oracle_coverage=oracle,
            own_rate=math.nan,
            refused_rate=float(tally[tail]["refused"].mean()),
            violation_rate=float(tally[tail]["violated"].mean()),
            mean_coverage=float(tally[tail]["coverage"].mean()),
            cpu_seconds=seconds,
        )
        for tail in TAILS
    ]


def run_cell(pop, n, delta, draws, seed):
    """Both kinds' records of one (population, n, delta) cell, on the same ``draws`` samples."""
    rng = np.random.default_rng(seed)
    shape = (draws, len(GROUPS))
    groups = {
        m: dict(
            own=np.full(shape, math.nan if m == "pooled" else 0.0),
            violated=np.zeros(shape, bool),
            coverage=np.zeros(shape),
            refused=np.zeros(draws, bool),
        )
        for m in GROUP_METHODS
    }
    graded = {
        t: dict(
            violated=np.zeros(draws, bool), coverage=np.zeros(draws), refused=np.zeros(draws, bool)
        )
        for t in TAILS
    }
    seconds = {"groups": 0.0, "graded": 0.0}
    for d in range(draws):
        rows = rng.integers(0, pop.loss.size, n)
        start = time.process_time()
        group_draw(pop, rows, delta, groups, d)
        middle = time.process_time()
        graded_draw(pop, rows, delta, graded, d)
        seconds["groups"] += middle - start
        seconds["graded"] += time.process_time() - middle
    base = dict(population=pop.name, n=n, delta=delta, draws=draws)
    return _group_records(pop, base, groups, seconds["groups"]) + _graded_records(
        pop, base, graded, seconds["graded"]
    )


def _limit(delta, draws):
    return delta + 3 * math.sqrt(delta * (1 - delta) / draws)


def checks(frame):
    """The claims the Guarantees page makes of these records: one row per (cell, claim)."""
    rows = []
    for (kind, name, n, delta), cell in frame.groupby(
        ["kind", "population", "n", "delta"], sort=False
    ):
        limit = _limit(delta, int(cell["draws"].iloc[0]))
        if kind == "groups":
            mine = cell[(cell["method"] == "per-group") & (cell["group"] != "any")]
            together = cell[(cell["method"] == "simultaneous") & (cell["group"] == "any")]
            claims = [
                ("per-group: largest group violation", mine["violation_rate"].max()),
                ("simultaneous: any-group violation", float(together["violation_rate"].iloc[0])),
            ]
        else:
            claims = [(f"{row.method}: violation", row.violation_rate) for row in cell.itertuples()]
        for claim, value in claims:
            rows.append(
                dict(
                    kind=kind,
                    population=name,
                    n=n,
                    delta=delta,
                    claim=claim,
                    value=value,
                    limit=limit,
                    ok=bool(value <= limit),
                )
            )
    return pd.DataFrame(rows)


#: The populations' names on the Guarantees page.
PAGE_NAMES = {
    "flat": "flat 5 %, risk 8 %",
    "increasing": "rising u/2, risk 10 %",
    "tied": "five tied, risk 8 %",
    "letter": "letter, risk 5 %",
}


def _triple(values):
    return " / ".join(f"{v:.3f}" for v in values)


def _groups_table(frame):
    lines = [
        "| population | n | delta | own certificate: easy / middle / hard "
        "| violates: easy / middle / hard | hard's coverage (own or pooled) "
        "| simultaneous: hard own / any violates | pooled: worst group violates |",
        "|---|---|---|---|---|---|---|---|",
    ]
    frame = frame[frame["kind"] == "groups"]
    for (name, n, delta), cell in frame.groupby(["population", "n", "delta"], sort=False):
        by = cell.set_index(["method", "group"])
        mine = [by.loc[("per-group", g)] for g in GROUPS]
        together = (
            by.loc[("simultaneous", "hard"), "own_rate"],
            by.loc[("simultaneous", "any"), "violation_rate"],
        )
        lines.append(
            f"| {PAGE_NAMES[name]} | {n:,} | {delta:g} | "
            f"{_triple(r['own_rate'] for r in mine)} | "
            f"{_triple(r['violation_rate'] for r in mine)} | {mine[2]['mean_coverage']:.3f} | "
            f"{_triple(together)} | {by.loc[('pooled', 'any'), 'violation_rate']:.3f} |"
        )
    return "\n".join(lines)


def _graded_table(frame):
    lines = [
        "| population | n | delta | refused: hb / betting / auto "
        "| violates: hb / betting / auto | coverage: hb / betting / auto | oracle coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    frame = frame[frame["kind"] == "graded"]
    for (name, n, delta), cell in frame.groupby(["population", "n", "delta"], sort=False):
        by = cell.set_index("method").loc[list(TAILS)]
        lines.append(
            f"| {PAGE_NAMES[name]} | {n:,} | {delta:g} | {_triple(by['refused_rate'])} | "
            f"{_triple(by['violation_rate'])} | {_triple(by['mean_coverage'])} | "
            f"{by['oracle_coverage'].iloc[0]:.3f} |"
        )
    return "\n".join(lines)


def page_table(frame, kind=None):
    """The Guarantees page's tables: ``kind`` "groups" or "graded", or both (None)."""
    if kind == "groups":
        return _groups_table(frame)
    if kind == "graded":
        return _graded_table(frame)
    return _groups_table(frame) + "\n\n" + _graded_table(frame)


def tail_gains(frame):
    """Per cell, the mean coverage betting and auto certify beyond Hoeffding-Bentkus."""
    graded = frame[frame["kind"] == "graded"]
    wide = graded.pivot_table(
        index=["population", "n", "delta"], columns="method", values="mean_coverage", sort=False
    )
    return pd.DataFrame(
        {
            "betting_minus_hb": wide["betting"] - wide["hb"],
            "auto_minus_hb": wide["auto"] - wide["hb"],
        }
    )


def report(frame, out):
    verdict = checks(frame)
    verdict.to_csv(out.replace(".csv", "_checks.csv"), index=False, float_format="%.4f")
    with pd.option_context("display.width", 200, "display.max_rows", 400):
        print(verdict.round(4).to_string(index=False))
        print(tail_gains(frame).round(3).to_string())
    print(page_table(frame))
    worst = verdict.loc[verdict["value"].idxmax()]
    print(f"all checks hold: {bool(verdict['ok'].all())}; largest value {worst['value']:.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--ns", type=int, nargs="+", default=[300, 1000, 3000, 5000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument(
        "--populations", nargs="+", default=["flat", "increasing", "tied", "letter"]
    )
    parser.add_argument("--mirror", default=os.environ.get("REJECTOPT_DATA_MIRROR"))
    parser.add_argument(
        "--out",
        default=os.path.join(os.path.dirname(__file__), "certified_populations_records.csv"),
    )
    parser.add_argument("--checks-only", action="store_true")
    args = parser.parse_args(argv)
    if args.checks_only:
        report(pd.read_csv(args.out), args.out)
        return
    records, total = [], time.process_time()
    for p_index, name in enumerate(args.populations):
        if name == "letter":
            if not args.mirror:
                print("letter left out: give --mirror or set REJECTOPT_DATA_MIRROR")
                continue
            loss, s, target = letter(args.mirror)
        else:
            loss, s, target = synthetic(name)
        pop = Population(name, p_index, loss, s, target)
        print(name, pop.group_summary(), "graded target", pop.graded_target, flush=True)
        for n in args.ns:
            for delta in args.deltas:
                seed = [p_index, n, int(round(1000 * delta))]
                cell = run_cell(pop, n, delta, args.draws, seed)
                records += cell
                print(
                    name,
                    n,
                    delta,
                    "done",
                    {r["kind"]: round(r["cpu_seconds"], 1) for r in cell},
                    flush=True,
                )
    frame = pd.DataFrame(records)
    frame.to_csv(args.out, index=False)
    report(frame, args.out)
    print(f"total CPU seconds: {time.process_time() - total:.1f}")


if __name__ == "__main__":
    main()
