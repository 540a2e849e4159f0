"""``validate --group-column``: how often each group's certificate fails on its own population.

The population rows are drawn as ``validate`` draws them for the pooled target (a calibration
sample without replacement, ``--repeats`` times); on each draw the per-group certificates are
fitted (:func:`rejectopt.targets.fit_certified_groups`) and each group's own certificate is
checked on that group's population rows, a fallback group's pooled certificate on all of them,
as the Guarantees page's per-group theorem states them. A refused draw states nothing and counts
as no failure, as ``select`` exits without a model then.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._model_fields import group_key
from ..selective import InfeasibleTargetError, SelectionFunction, empirical_risk_coverage
from ..targets import fit_certified_groups

__all__ = ["GROUPS_CSV", "group_validity", "group_validity_lines"]

#: ``validate --group-column``'s per-group table.
GROUPS_CSV = "groups.csv"
#: The row of ``groups.csv`` for all groups' own certificates at once (``--simultaneous``).
ALL_GROUPS = "(all groups together)"


def _misses(target, loss, uncertainty, threshold, accept_prob):
    """Whether the population of these rows misses the target's claim under this selection."""
    risk, coverage = empirical_risk_coverage(
        loss, uncertainty, SelectionFunction(threshold, accept_prob)
    )
    if target.kind == "coverage":
        return bool(coverage < target.value)
    floor = target.min_coverage is not None and coverage < target.min_coverage
    return bool(floor or (coverage > 0 and risk > target.value))


def _interval(k, n):
    """Clopper-Pearson 95 % interval of a violation rate of ``k`` in ``n`` draws."""
    ci = stats.binomtest(int(k), int(n)).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def _count(target, loss, s, index, selection, counts):
    """Add one draw's failures: own certificates on their group, fallbacks on the pooled rows."""
    any_own_failed = False
    for group in selection.groups:
        entry = counts[group_key(group.label)]
        if group.fallback:
            entry["fallback_draws"] += 1
            rows = slice(None)
        else:
            entry["own_draws"] += 1
            rows = index == entry["index"]
        failed = _misses(target, loss[rows], s[rows], group.threshold, group.accept_prob)
        entry["fallback_violations" if group.fallback else "own_violations"] += failed
        any_own_failed |= failed and not group.fallback
    return any_own_failed


def group_validity(
    loss, uncertainty, groups, target, *, simultaneous, n_calibration, repeats, seed, loss_bound
):
    """``groups.csv``: per group, how often its certificate failed over ``repeats`` draws.

    Each line: ``group``, ``population_rows``, ``own_draws`` (draws where it held its own
    certificate), ``own_violations``, ``violation_rate`` (over all ``repeats`` draws: a draw
    without a certificate states nothing) with its 95 % interval, ``delta``, and
    ``fallback_draws`` / ``fallback_violations`` (the pooled certificate, checked on the pooled
    population). With ``simultaneous``, a last line for all own certificates at once.
    """
    rng = np.random.default_rng(seed)
    keys = [group_key(label) for label in groups]
    order = list(dict.fromkeys(keys))
    index = np.array([order.index(key) for key in keys])
    labels = {key: label for key, label in zip(keys, groups)}
    counts = {
        key: {
            "index": i,
            "own_draws": 0,
            "own_violations": 0,
            "fallback_draws": 0,
            "fallback_violations": 0,
        }
        for i, key in enumerate(order)
    }
    joint = 0
    for _ in range(repeats):
        cal = rng.choice(loss.size, size=n_calibration, replace=False)
        try:
            selection = fit_certified_groups(
                loss[cal],
                uncertainty[cal],
                [groups[i] for i in cal],
                target,
                simultaneous=simultaneous,
                loss_bound=loss_bound,
            )
        except (InfeasibleTargetError, ValueError):
            continue
        joint += _count(target, loss, uncertainty, index, selection, counts)
    delta = 1.0 - float(target.confidence)
    lines = []
    for key in order:
        entry = counts[key]
        low, high = _interval(entry["own_violations"], repeats)
        lines.append(
            {
                "group": labels[key],
                "population_rows": int((index == entry["index"]).sum()),
                "own_draws": entry["own_draws"],
                "own_violations": entry["own_violations"],
                "violation_rate": entry["own_violations"] / repeats,
                "violation_low": low,
                "violation_high": high,
                "delta": delta,
                "fallback_draws": entry["fallback_draws"],
                "fallback_violations": entry["fallback_violations"],
            }
        )
    if simultaneous:
        low, high = _interval(joint, repeats)
        lines.append(
            {"group": ALL_GROUPS, "population_rows": int(loss.size), "own_violations": joint}
            | {"violation_rate": joint / repeats, "violation_low": low, "violation_high": high}
            | {"delta": delta}
        )
    return pd.DataFrame(lines)


def group_validity_lines(table, column, repeats):
    """The printed lines of ``groups.csv``: each group's violation rate beside delta."""
    lines = []
    for row in table.itertuples(index=False):
        lines.append(
            f"--group-column {column}: group {row.group!r}: own certificate violated in "
            f"{100 * row.violation_rate:.3g} % [{100 * row.violation_low:.3g}, "
            f"{100 * row.violation_high:.3g}] of {repeats} draws (delta {row.delta:.3g})"
            + (
                f"; it held its own certificate in {row.own_draws} draws"
                if row.group != ALL_GROUPS
                else ""
            )
        )
    return lines
