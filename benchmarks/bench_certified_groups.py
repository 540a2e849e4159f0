"""Per-group certificates against one pooled threshold, on three groups whose risks differ.

Run: ``python benchmarks/bench_certified_groups.py [--draws 400] [--deltas 0.05 0.1]
[--out benchmarks/certified_groups_records.csv]``.

The population: three groups, in each u ~ U(0, 1) and P(error | u) = c_g * u with c_g = 0.2
("easy"), 0.5 ("middle") and 1.0 ("hard"), so the selective risk of the cut {u < t} in group g
is exactly 100 * c_g * min(t, 1) / 2 (0/100 loss) and its coverage min(t, 1). Each draw takes
1,000, 1,000 and 400 calibration rows (the hard group is the small one) and fits
``Target("risk", 15, confidence=1 - delta)`` by:

* ``per-group``: :func:`rejectopt.targets.fit_certified_groups`, each group at ``1 - delta``;
* ``simultaneous``: the same with ``simultaneous=True`` (each group at ``(1 - delta)^(1/3)``);
* ``pooled``: one threshold fitted on all rows (the marginal certificate), applied to every group.

Per (delta, method, group): ``own_rate`` the share of draws in which the group holds its own
certificate (it falls back to the pooled threshold otherwise, or the draw is refused where the
pooled fit fails too: no claim for the group; NaN for ``pooled``, which claims nothing per
group), ``violation_rate`` the share in which the group's claim is false (its own certificate
and a population risk above the target; for ``pooled``, the pooled threshold's risk on the
group above the target), ``mean_coverage`` the group's mean population coverage of the
threshold applied to it (the pooled one where it fell back, 0 in a refused draw),
``own_coverage`` the same over the draws with its own certificate, ``refused_rate`` the
method's share of refused draws. The group ``any`` is the share of draws in which some group's
claim is false. Checks: every per-group violation rate and the simultaneous ``any`` rate <=
delta + 3 sigma (the binomial standard error at delta); the pooled threshold's worst group
above delta. Writes the records
and ``<out>_checks.csv``; prints both, and the Guarantees page's table (:func:`page_table`).
"""

import argparse
import math
import time

import numpy as np
import pandas as pd

from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import Target, fit_certified_groups

SLOPES = {"easy": 0.2, "middle": 0.5, "hard": 1.0}
SIZES = {"easy": 1000, "middle": 1000, "hard": 400}
TARGET_RISK = 15.0
METHODS = ("per-group", "simultaneous", "pooled")


def population_risk(slope, threshold):
    """Exact selective risk (percent) of {u < threshold} when P(error | u) = slope * u."""
    return 100.0 * slope * min(max(threshold, 0.0), 1.0) / 2.0


def draw(rng):
    """One calibration sample: loss, uncertainty and group label per row."""
    labels = np.repeat(list(SIZES), list(SIZES.values()))
    u = rng.random(labels.size)
    slope = np.array([SLOPES[label] for label in labels])
    loss = np.where(rng.random(labels.size) < slope * u, 100.0, 0.0)
    return loss, u, labels


def run_cell(delta, draws, seed):
    """Per method and group, the draws' (own, violated, coverage, refused) tuples for one delta.

    A draw that fit_certified_groups refuses (a group cannot certify and the pooled fit, its
    fallback, is refused too) accepts nothing: no group holds a claim, none is false.
    """
    rng = np.random.default_rng(seed)
    target = Target("risk", TARGET_RISK, confidence=1 - delta)
    out = {(m, g): [] for m in METHODS for g in SLOPES}
    for _ in range(draws):
        sample = draw(rng)
        for method in METHODS[:2]:
            try:
                fitted = fit_certified_groups(
                    *sample, target, simultaneous=method == "simultaneous"
                )
            except InfeasibleTargetError:
                for group in SLOPES:
                    out[method, group].append((False, False, 0.0, True))
                continue
            for group, slope in SLOPES.items():
                entry = fitted[group]
                own = not entry.fallback
                violated = own and population_risk(slope, entry.threshold) > TARGET_RISK
                out[method, group].append((own, violated, min(entry.threshold, 1), False))
        try:  # the marginal certificate: one threshold on all rows at 1 - delta
            threshold = target.fit(sample[0], sample[1]).threshold
        except InfeasibleTargetError:
            threshold = -math.inf
        for group, slope in SLOPES.items():
            violated = threshold > 0 and population_risk(slope, threshold) > TARGET_RISK
            refused = threshold == -math.inf
            out["pooled", group].append((math.nan, violated, min(max(threshold, 0), 1), refused))
    return out


def records(delta, draws, out):
    """One record per (method, group), plus each method's ``any`` row."""
    rows = []
    for method in METHODS:
        violated = np.array([[draw[1] for draw in out[method, g]] for g in SLOPES])
        for j, group in enumerate(SLOPES):
            own, _, coverage, refused = map(np.array, zip(*out[method, group]))
            mine = own == True  # noqa: E712  (NaN for the pooled method: no draw is its own)
            rows.append(
                {
                    "delta": delta,
                    "method": method,
                    "group": group,
                    "slope": SLOPES[group],
                    "n_rows": SIZES[group],
                    "draws": draws,
                    "own_rate": float(np.mean(own)),
                    "violation_rate": float(violated[j].mean()),
                    "mean_coverage": float(coverage.mean()),
                    "own_coverage": float(coverage[mine].mean()) if mine.any() else math.nan,
                    "refused_rate": float(refused.mean()),
                }
            )
        rows.append(
            {
                "delta": delta,
                "method": method,
                "group": "any",
                "slope": math.nan,
                "n_rows": sum(SIZES.values()),
                "draws": draws,
                "own_rate": math.nan,
                "violation_rate": float(violated.any(axis=0).mean()),
                "mean_coverage": math.nan,
                "own_coverage": math.nan,
                "refused_rate": float(refused.mean()),
            }
        )
    return rows


def checks(frame):
    """The claims the Guarantees page makes of these records, one row per (delta, claim)."""
    rows = []
    for delta, cell in frame.groupby("delta"):
        draws = int(cell["draws"].iloc[0])
        limit = delta + 3 * math.sqrt(delta * (1 - delta) / draws)
        groups = cell[cell["group"] != "any"]
        per_group = groups[groups["method"] == "per-group"]["violation_rate"].max()
        together = cell[(cell["method"] == "simultaneous") & (cell["group"] == "any")]
        pooled = groups[groups["method"] == "pooled"]["violation_rate"].max()
        for claim, value, ok in (
            (
                "per-group: largest group violation <= delta + 3 sigma",
                per_group,
                per_group <= limit,
            ),
            (
                "simultaneous: any-group violation <= delta + 3 sigma",
                float(together["violation_rate"].iloc[0]),
                float(together["violation_rate"].iloc[0]) <= limit,
            ),
            ("pooled: worst group violation > delta", pooled, pooled > delta),
        ):
            rows.append({"delta": delta, "claim": claim, "value": value, "limit": limit, "ok": ok})
    return pd.DataFrame(rows)


#: The page's names of the methods, in its table's order.
PAGE_METHODS = {
    "per-group": "per group",
    "simultaneous": "simultaneous",
    "pooled": "one pooled threshold",
}


def page_table(frame):
    """The Guarantees page's table of the records: own and violation rates per group and delta."""

    def cell(row):
        own = "-" if math.isnan(row["own_rate"]) else f"{row['own_rate']:.3f}"
        return f"{own} / {row['violation_rate']:.3f}"

    lines = [
        "| delta | method | easy (0.2): own / violates | middle (0.5): own / violates "
        "| hard (1.0, 400 rows): own / violates | any group violates |",
        "|---|---|---|---|---|---|",
    ]
    for delta in sorted(frame["delta"].unique()):
        for method, name in PAGE_METHODS.items():
            rows = frame[(frame["delta"] == delta) & (frame["method"] == method)]
            rows = rows.set_index("group")
            cells = [cell(rows.loc[group]) for group in SLOPES]
            lines.append(
                f"| {delta:g} | {name} | {' | '.join(cells)} | "
                f"{rows.loc['any', 'violation_rate']:.3f} |"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.1])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", default="benchmarks/certified_groups_records.csv")
    args = parser.parse_args()
    start = time.process_time()
    rows = []
    for i, delta in enumerate(args.deltas):
        rows += records(delta, args.draws, run_cell(delta, args.draws, args.seed + i))
    frame = pd.DataFrame(rows)
    frame.to_csv(args.out, index=False)
    verdict = checks(frame)
    verdict.to_csv(args.out.replace(".csv", "_checks.csv"), index=False, float_format="%.4f")
    with pd.option_context("display.width", 200, "display.max_rows", 100):
        print(frame.round(3).to_string(index=False))
        print(verdict.round(4).to_string(index=False))
    print(page_table(frame))
    print(f"{time.process_time() - start:.0f} CPU seconds")


if __name__ == "__main__":
    main()
