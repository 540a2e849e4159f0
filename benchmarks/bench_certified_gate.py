"""How often a release gate "risk <= a AND coverage >= w" is granted: the library's gate beside the
simple valid alternatives, and the share of delta its coverage floor spends.

Run: ``python benchmarks/bench_certified_gate.py [--draws 300] [--ns 300 1000 3000 5000]
[--deltas 0.05 0.1] [--mirror DIR] [--out benchmarks/certified_gate_records.csv]``. The
populations are those of ``bench_certified_power.py`` (flat, increasing, five tied levels, letter
with ``--mirror`` or ``REJECTOPT_DATA_MIRROR``), each with its risk target ``a`` and the floor
``w = 0.75 x`` the oracle's coverage at ``a`` (the increasing population: ``a`` = 10 %, oracle
coverage 0.4, ``w`` = 0.3; the gate holds for the cuts covering 0.3 to 0.4).

Per (population, n, delta), ``draws`` i.i.d. samples are fitted by:

* ``gate``: :func:`rejectopt._certify.fit_certified_gate` as shipped (its coverage share
  :data:`~rejectopt._certify.JOINT_COVERAGE_SHARE`): the coverage order statistic at
  ``delta r``, then the risk tested by fixed sequence on every row from the cut just below the
  coverage cut upwards at ``delta (1 - r)``;
* ``share_<r>``: the same gate with the coverage share r, for r in :data:`SHARES` (the module
  constant set for the call): the measurement that chose the shipped share;
* ``dkw_halves``: the workaround a user has without the gate, ``Target("risk", a)`` at
  ``delta / 2``, granted when its DKW coverage bound at ``delta / 2`` is >= ``w``;
* ``os_then_risk``: the coverage order statistic at ``delta / 2``, then the risk tested by fixed
  sequence from the coverage cut itself upwards at ``delta / 2`` (the largest cut of the unbroken
  run). Its first test holds the order statistic's own row, whose loss has the boundary
  score's mean, not the cut's: the gate's proof needs the run to start one cut lower, so this
  alternative's level is measured here only.

A draw is *granted* when the method returns a selection, *violated* when the granted selection's
population risk exceeds ``a`` or its population coverage is below ``w`` (exact: the population
is a finite table drawn with replacement). Checks of ``gate``: violation rate <= delta +
3 sigma; grant rate >= that of each alternative minus 0.02 (``grant_ok_dkw``,
``grant_ok_os``). Writes one record per (population, n, delta, method) and ``<out>_checks.csv``;
prints both. ``--checks-only`` recomputes the checks from ``--out``.
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

from rejectopt._certify import (  # noqa: E402
    JOINT_COVERAGE_SHARE,
    _binomial_pvalue,
    _evaluate,
    _joint,
    _population_sums,
    fit_certified_coverage,
    fit_certified_gate,
    fit_certified_risk,
)
from rejectopt.selective import InfeasibleTargetError, SelectionFunction  # noqa: E402

#: The coverage shares measured (the shipped one among them).
SHARES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
#: The floor as a share of the oracle's coverage at the risk target.
FLOOR_SHARE = 0.75


def _gate_at_share(loss, s, target, floor, delta, share):
    """The shipped gate with its coverage share set to ``share`` for this call."""
    shipped = _joint.JOINT_COVERAGE_SHARE
    _joint.JOINT_COVERAGE_SHARE = share
    try:
        return fit_certified_gate(loss, s, target, floor, 1 - delta)
    except InfeasibleTargetError:
        return None
    finally:
        _joint.JOINT_COVERAGE_SHARE = shipped


def _dkw_halves(loss, s, target, floor, delta, draw):
    try:
        risk = fit_certified_risk(loss, s, target, 1 - delta / 2, random_state=draw)
    except InfeasibleTargetError:
        return None
    return risk if risk.coverage_bound >= floor else None


def _os_then_risk(loss, s, target, floor, delta):
    """Coverage order statistic at delta / 2, then fixed-sequence risk tests upwards at delta / 2."""
    coverage = fit_certified_coverage(loss, s, floor, 1 - delta / 2)
    if math.isinf(coverage.threshold):
        start = loss.size - 1
    else:
        start = int(np.searchsorted(np.sort(s), coverage.threshold, side="right")) - 1
    order = np.argsort(s, kind="stable")
    s_sorted, errors = s[order], np.cumsum(loss[order] / 100.0)
    last = np.r_[s_sorted[1:] != s_sorted[:-1], True]  # a cut ends after its ties
    trials = np.arange(1, s.size + 1)
    p = _binomial_pvalue(errors, trials, target / 100.0)
    cuts = np.flatnonzero(last & (trials - 1 >= start))
    failed = np.flatnonzero(p[cuts] > delta / 2)
    if failed.size and failed[0] == 0:
        return None
    end = cuts[-1] if not failed.size else cuts[failed[0] - 1]
    return SelectionFunction(float(s_sorted[end]), 1.0)


def fits(loss, s, target, floor, delta, draw):
    out = {}
    try:
        out["gate"] = fit_certified_gate(loss, s, target, floor, 1 - delta)
    except InfeasibleTargetError:
        out["gate"] = None
    for share in SHARES:
        out[f"share_{share:g}"] = _gate_at_share(loss, s, target, floor, delta, share)
    out["dkw_halves"] = _dkw_halves(loss, s, target, floor, delta, draw)
    out["os_then_risk"] = _os_then_risk(loss, s, target, floor, delta)
    return out


def run_cell(name, population, table, target, floor, n, delta, draws, seed):
    loss_all, s_all = population
    rng = np.random.default_rng(seed)
    tally: dict = {}
    start = time.process_time()
    for draw in range(draws):
        rows = rng.integers(0, loss_all.size, n)
        for method, selection in fits(
            loss_all[rows], s_all[rows], target, floor, delta, draw
        ).items():
            counts = tally.setdefault(method, [0, 0, 0.0])
            if selection is None:
                continue
            coverage, risk = _evaluate(selection, table)
            counts[0] += 1
            counts[1] += bool(risk > target * (1 + 1e-12) or coverage < floor * (1 - 1e-12))
            counts[2] += coverage
    seconds = time.process_time() - start
    return [
        dict(
            population=name,
            target=target,
            floor=floor,
            n=n,
            delta=delta,
            method=method,
            draws=draws,
            grant_rate=v[0] / draws,
            violation_rate=v[1] / draws,
            mean_coverage=v[2] / draws,
            cpu_seconds=seconds,
        )
        for method, v in tally.items()
    ]


def checks(frame):
    rows = []
    for (name, n, delta), cell in frame.groupby(["population", "n", "delta"], sort=False):
        by = cell.set_index("method")
        sigma = math.sqrt(delta * (1 - delta) / by.loc["gate", "draws"])
        gate = by.loc["gate", "grant_rate"]
        dkw, os_first = by.loc["dkw_halves", "grant_rate"], by.loc["os_then_risk", "grant_rate"]
        rows.append(
            dict(
                population=name,
                n=n,
                delta=delta,
                valid=by.loc["gate", "violation_rate"] <= delta + 3 * sigma,
                grant_ok_dkw=gate >= dkw - 0.02,
                grant_ok_os=gate >= os_first - 0.02,
                gap_dkw=gate - dkw,
                gap_os=gate - os_first,
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


def page_table(frame):
    """The Guarantees page's table of the gate: one row per cell, from the records."""
    lines = [
        "| population | floor | n | delta | gate grants | gate violates | gate coverage "
        "| delta/2 + DKW grants | order statistic, then risk, grants |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    wide = frame.pivot_table(
        index=["population", "floor", "n", "delta"],
        columns="method",
        values=["grant_rate", "violation_rate", "mean_coverage"],
        sort=False,
    )
    for (name, floor, n, delta), row in wide.iterrows():
        cells = [
            row[("grant_rate", "gate")],
            row[("violation_rate", "gate")],
            row[("mean_coverage", "gate")],
            row[("grant_rate", "dkw_halves")],
            row[("grant_rate", "os_then_risk")],
        ]
        lines.append(
            f"| {PAGE_NAMES[name]} | {floor:g} | {n:,} | {delta:g} | "
            + " | ".join(f"{v:.3f}" for v in cells)
            + " |"
        )
    return "\n".join(lines)


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
        "--out", default=os.path.join(os.path.dirname(__file__), "certified_gate_records.csv")
    )
    parser.add_argument("--checks-only", action="store_true")
    args = parser.parse_args(argv)
    if args.checks_only:
        verdict = checks(pd.read_csv(args.out))
        verdict.to_csv(args.out.replace(".csv", "_checks.csv"), index=False)
        print(verdict.to_markdown(index=False))
        print(page_table(pd.read_csv(args.out)))
        return
    records = []
    for p_index, name in enumerate(args.populations):
        if name == "letter":
            if not args.mirror:
                print("letter left out: give --mirror or set REJECTOPT_DATA_MIRROR")
                continue
            loss, s, target = letter(args.mirror)
        else:
            loss, s, target = synthetic(name)
        table = _population_sums(loss, s)
        floor = round(FLOOR_SHARE * oracle_coverage(table, target), 3)
        for n in args.ns:
            for delta in args.deltas:
                seed = [p_index, n, int(round(1000 * delta))]
                records += run_cell(
                    name, (loss, s), table, target, floor, n, delta, args.draws, seed
                )
                print(name, n, delta, "done", flush=True)
    frame = pd.DataFrame(records)
    frame.to_csv(args.out, index=False)
    verdict = checks(frame)
    verdict.to_csv(args.out.replace(".csv", "_checks.csv"), index=False)
    wide = frame.pivot_table(
        index=["population", "floor", "n", "delta"],
        columns="method",
        sort=False,
        values=["grant_rate", "violation_rate"],
    )
    print(f"shipped coverage share: {JOINT_COVERAGE_SHARE}")
    print(wide.round(3).to_markdown())
    print(verdict.to_markdown(index=False))


if __name__ == "__main__":
    main()
