"""Internal: checking a certified target, the per-threshold table and the validity on the user's rows."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import lazy_loader as _lazy
import numpy as np
import pandas as pd

from .._checks import as_loss_and_uncertainty, clopper_pearson
from .._params import format_level
from ..selective import InfeasibleTargetError, SelectionFunction
from . import _parameters
from ._fits import _prefix_sums, _resolve_loss_bound, _resolve_tail
from ._tails import _prefix_moments, _risk_pvalue, _risk_upper_bound, _tail_keywords

#: scipy.stats, imported at its first use (heavy to import:
#: ``benchmarks/import_costs_records.csv``).
_sps = _lazy.load("scipy.stats", suppress_warning=True)


# They take a rejectopt.targets.Target, which sits above this module: they read its kind, value
# and confidence, fit it with its own ``fit``, and make its plug-in twin with ``replace``.
def _certified_target(target: Any, caller: str) -> Any:
    """``target`` if it is a certified risk or coverage target, else ValueError naming ``caller``."""
    if getattr(target, "kind", None) not in ("risk", "coverage"):
        raise ValueError(f"{caller} takes a risk=L or coverage=W Target, got {target!r}")
    if target.confidence is None:
        raise ValueError(
            f"{caller} needs a certified target: give it a confidence, e.g. "
            f"Target({target.kind!r}, {target.value:g}, confidence=0.95)"
        )
    return target


def certification_table(
    loss: Any,
    uncertainty: Any,
    target: Any,
    *,
    loss_bound: Any = None,
    max_cuts: Any = None,
    include: Any = None,
    tail: str = "auto",
) -> pd.DataFrame:
    """Per threshold: rows accepted, empirical risk, upper confidence bound and p-value.

    One row per distinct calibration score ``t``, for the cut accepting ``s <= t``. The bounds
    and p-values are *pointwise* (each as if its threshold had been fixed in advance); the
    certified threshold is :meth:`Target.fit`'s, which handles the choice among thresholds.

    The cost is linear in the number of distinct scores: each cut's 0/B risk bound is a beta
    quantile, evaluated one by one (``benchmarks/measured_records.csv``, ``certification_table``
    rows). ``max_cuts`` bounds it: the bounds are then computed at those cuts alone, each row
    equal to the full table's row at that cut.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses and uncertainty scores.
    target : Target
        A risk or coverage target with a confidence (``1 - delta``).
    loss_bound : float or None, default None
        The largest loss by the loss's definition; None for the 0/100 loss.
    max_cuts : int or None, default None
        None lists every cut. An integer ``m`` lists at most ``m`` cuts evenly spaced in
        coverage when there are more distinct scores (the first cut reaching each coverage
        ``i / m``, the full set among them), plus the cuts of ``include``.
    include : array_like of float or None, default None
        Scores whose cut is listed whatever ``max_cuts`` keeps (e.g. a fitted threshold): the
        cut accepting ``s <= t`` for the smallest distinct score ``t`` at or above each.
    tail : {"auto", "hb", "betting"}, default "auto"
        The risk's tail for a loss that is not 0/B (:func:`fit_certified_risk`); no rows are
        held out here, so "auto" is the smaller of the two p-values doubled (a union bound).

    Returns
    -------
    pandas.DataFrame
        Columns ``threshold``, ``n_accepted``, ``coverage``, ``empirical_risk``,
        ``upper_bound`` (the risk's ``(1 - delta)`` bound: Clopper-Pearson for 0/B losses,
        otherwise the inversion of ``tail``'s p-value) and ``p_value`` (risk: of "the cut's risk >= target";
        coverage: of "the cut's population coverage < target", from the order statistics).

    Examples
    --------
    >>> from rejectopt.targets import Target
    >>> table = certification_table([0, 0, 0, 100], [0.1, 0.2, 0.3, 0.4], Target("risk", 50, confidence=0.9))
    >>> table[["threshold", "n_accepted", "empirical_risk", "upper_bound", "p_value"]].round(3)
       threshold  n_accepted  empirical_risk  upper_bound  p_value
    0        0.1           1             0.0       90.000    0.500
    1        0.2           2             0.0       68.377    0.250
    2        0.3           3             0.0       53.584    0.125
    3        0.4           4            25.0       67.954    0.312
    """
    target = _certified_target(target, "certification_table")
    _parameters.check("certification_table", max_cuts=max_cuts)
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    delta = 1.0 - target.confidence
    n = loss.size
    needs = (
        "a certified risk target"
        if target.kind == "risk"
        else "certification_table's upper_bound column (the selective risk's bound)"
    )
    bound, binary = _resolve_loss_bound(loss, loss_bound, "certification_table", needs)
    tail = _resolve_tail(tail, binary, "certification_table")
    values, trials, sums = _prefix_sums(loss, s)
    moments = _prefix_moments(loss, s) if tail != "hb" else {}
    rows = _listed_cuts(values, trials, max_cuts, include)
    if rows is not None:  # every column is elementwise per cut: the kept rows are the full table's
        values, trials, sums = values[rows], trials[rows], sums[rows]
        moments = {name: value[rows] for name, value in moments.items()}
    keywords = _tail_keywords(tail, moments)
    upper = _risk_upper_bound(sums, trials, delta, bound, binary, **keywords)
    if target.kind == "risk":
        pvalues = (
            _risk_pvalue(sums, trials, target.value, bound, binary, **keywords)
            if target.value < bound
            else np.ones_like(trials)
        )
    else:  # H0: population coverage of the cut < value; P(Binomial(n, value) >= accepted)
        pvalues = _sps.binom.sf(trials - 1, n, target.value)
    return pd.DataFrame(
        {
            "threshold": values,
            "n_accepted": trials.astype(int),
            "coverage": trials / n,
            "empirical_risk": sums / trials,
            "upper_bound": upper,
            "p_value": pvalues,
        }
    )


def _listed_cuts(
    values: np.ndarray, trials: np.ndarray, max_cuts: Any, include: Any
) -> np.ndarray | None:
    """Indices of the cuts :func:`certification_table` lists, or None for every cut.

    ``max_cuts`` cuts evenly spaced in coverage: for ``i = 1 .. m``, the first cut accepting at
    least ``ceil(i n / m)`` rows (``i = m``: the full set); then the cut of each ``include`` score.
    """
    if max_cuts is None or values.size <= max_cuts:
        return None
    m, n = int(max_cuts), int(trials[-1])
    wanted = -(-np.arange(1, m + 1, dtype=np.int64) * n // m)  # ceil(i n / m), in integers
    rows = np.searchsorted(trials, wanted, side="left")
    if include is not None:
        extra = np.asarray(include, dtype=float).ravel()
        extra = np.searchsorted(values, extra[np.isfinite(extra)], side="left")
        rows = np.concatenate([rows, extra[extra < values.size]])
    return np.unique(rows)


def _population_sums(
    loss: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, their counts and loss sums, and the cumulative counts / sums below each (leading 0)."""
    values, inverse = np.unique(s, return_inverse=True)
    counts = np.bincount(inverse, minlength=values.size).astype(float)
    sums = np.bincount(inverse, weights=loss, minlength=values.size)
    return (
        values,
        np.stack([counts, sums]),
        np.concatenate([[0.0], np.cumsum(counts)]),
        np.concatenate([[0.0], np.cumsum(sums)]),
    )


def _evaluate(selection: SelectionFunction, table: tuple) -> tuple[float, float]:
    """Exact expected (coverage, selective risk) of ``selection`` on rows summarised by :func:`_population_sums`."""
    values, group, cum_counts, cum_sums = table
    below = int(np.searchsorted(values, selection.threshold, side="left"))
    mass, total = cum_counts[below], cum_sums[below]
    if below < values.size and values[below] == selection.threshold:
        mass += selection.accept_prob * group[0, below]
        total += selection.accept_prob * group[1, below]
    return mass / cum_counts[-1], (total / mass if mass > 0 else float("nan"))


@dataclass(frozen=True)
class TargetValidity:
    """What :func:`validate_target` measured: per-draw outcomes, their summary, and a figure.

    Parameters
    ----------
    target : Target
        The certified target checked.
    n_rows, n_calibration : int
        Rows taken as the population, and drawn for each calibration sample.
    draws, summary : pandas.DataFrame
        As :func:`validate_target` returns them.
    """

    target: Any
    n_rows: int
    n_calibration: int
    draws: pd.DataFrame
    summary: pd.DataFrame

    @property
    def infeasible_rate(self) -> float:
        """Share of the draws on which the certified target could not be certified (they accept nothing).

        Read it first: a high share means the summary's coverage and risk describe the few draws
        that did certify (the risk) and the zeros of the others (the coverage).

        .. versionadded:: 0.4.0
        """
        return float(self.summary.loc["certified", "infeasible_rate"])

    def plot(self, ax: Any = None) -> Any:
        """Histograms of the population risk (risk target) or coverage (coverage target) per method.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw; None makes a new figure.

        Returns
        -------
        matplotlib.figure.Figure
            The figure, with the target as a vertical line and, in the legend, each method's
            violations among the draws it granted and its refused draws (they accept nothing:
            no risk to draw, coverage 0).
        """
        # matplotlib: heavy to import (benchmarks/import_costs_records.csv); only the figure uses it
        from matplotlib.figure import Figure

        if ax is None:
            ax = Figure(figsize=(6.4, 3.6), layout="constrained").add_subplot()
        column = "population_risk" if self.target.kind == "risk" else "population_coverage"
        for method, rows in self.draws.groupby("method", sort=False):
            values = rows[column].dropna()
            ax.hist(values, bins=30, alpha=0.55, label=_legend_label(method, rows))
        ax.axvline(
            self.target.value,
            color="black",
            linestyle="--",
            label=f"target {self.target.kind}="
            f"{self.target.value:g} (delta {format_level(1 - self.target.confidence)})",
        )
        ax.set_xlabel(
            ("selective risk" if self.target.kind == "risk" else "coverage") + " on all rows"
        )
        ax.set_ylabel("calibration draws")
        ax.set_title(
            f"{len(self.draws) // max(self.draws['method'].nunique(), 1)} draws of {self.n_calibration} "
            f"of {self.n_rows} rows",
            fontsize="medium",
        )
        ax.legend(fontsize="small")
        return ax.figure


def _legend_label(method: str, rows: pd.DataFrame) -> str:
    """A method's legend entry: its violations among the draws it granted, and its refusals.

    A refused draw accepts nothing, so it cannot violate: counted among all draws, the rate of
    a target refused on most draws reads as a guarantee that held. Among the granted draws,
    with the refusals beside it, the entry says both what was granted and how often.
    """
    granted = rows[~rows["infeasible"].astype(bool)]
    violations, refused = int(granted["violated"].sum()), len(rows) - len(granted)
    if len(granted):
        low, high = (float(v) for v in clopper_pearson(violations, len(granted), 0.05))
        rate = f" = {violations / len(granted):.1%} [{low:.1%}, {high:.1%}]"
    else:
        rate = ""
    return (
        f"{method}: violated {violations} of {len(granted)} granted draws{rate}; "
        f"refused {refused} of {len(rows)} ({refused / max(len(rows), 1):.1%})"
    )


def _draw_outcome(
    selection: Any, population: tuple, test: tuple
) -> tuple[float, float, float, float]:
    """Population and test (coverage, risk) of a draw's selection; an infeasible draw (None) accepts nothing."""
    if selection is None:
        return 0.0, float("nan"), 0.0, float("nan")
    return (*_evaluate(selection, population), *_evaluate(selection, test))


def _validation_rows(
    loss: Any,
    uncertainty: Any,
    target: Any,
    repeats: Any,
    calibration_fraction: Any,
    loss_bound: Any,
    progress: Any,
) -> tuple[Any, np.ndarray, np.ndarray, int]:
    """:func:`validate_target`'s checks, on all rows: a message names the user's row, not a draw's.

    Returns the target, the losses, the scores and the calibration rows of each draw.
    """
    target = _certified_target(target, "validate_target")
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    if target.kind == "risk":
        _resolve_loss_bound(loss, loss_bound, "validate_target")
    _, fraction, _ = _parameters.check(
        "validate_target",
        progress=progress,
        calibration_fraction=calibration_fraction,
        repeats=repeats,
    )
    fraction = float(fraction)
    n_rows = loss.size
    n_cal = int(round(fraction * n_rows))
    if not 2 <= n_cal <= n_rows - 1:
        raise ValueError(
            f"calibration_fraction {calibration_fraction:g} of {n_rows} rows leaves {n_cal} "
            "calibration rows; need at least 2 and one row left out"
        )
    return target, loss, s, n_cal


def _draw_records(
    repeat: int,
    target: Any,
    loss: np.ndarray,
    s: np.ndarray,
    chosen: np.ndarray,
    population: tuple,
    fit_options: dict[str, Any],
) -> list[tuple]:
    """One draw's rows of ``draws``: the certified target and its plug-in twin fitted on ``chosen``."""
    test = _population_sums(loss[~chosen], s[~chosen])
    plug_in = replace(target, confidence=None)
    records = []
    for name, fit in (
        ("certified", lambda: target.fit(loss[chosen], s[chosen], **fit_options)),
        ("plug-in", lambda: plug_in.fit(loss[chosen], s[chosen])),
    ):
        try:
            selection = fit()
        except InfeasibleTargetError:
            selection = None
        coverage, risk, test_coverage, test_risk = _draw_outcome(selection, population, test)
        if target.kind == "risk":
            violated = bool(risk > target.value * (1 + 1e-12))
        else:
            violated = bool(coverage < target.value * (1 - 1e-12))
        records.append(
            (repeat, name, coverage, risk, test_coverage, test_risk, violated, selection is None)
        )
    return records


def _summarise_draws(draws: pd.DataFrame, repeats: int, confidence: float) -> pd.DataFrame:
    """Per method: the violations, their rate and its 95 % Clopper-Pearson interval, and the means."""
    summary = draws.groupby("method", sort=False).agg(
        violations=("violated", "sum"),
        violation_rate=("violated", "mean"),
        infeasible_rate=("infeasible", "mean"),
        mean_coverage=("population_coverage", "mean"),
        mean_risk=("population_risk", "mean"),
    )
    violations = summary["violations"].to_numpy(dtype=float)
    summary["violation_low"], summary["violation_high"] = clopper_pearson(violations, repeats, 0.05)
    summary["delta"] = round(1.0 - confidence, 12)
    return summary[
        [
            "violations",
            "violation_rate",
            "violation_low",
            "violation_high",
            "delta",
            "infeasible_rate",
            "mean_coverage",
            "mean_risk",
        ]
    ]


#: The columns of :attr:`TargetValidity.draws`, in order.
DRAW_COLUMNS = (
    "repeat",
    "method",
    "population_coverage",
    "population_risk",
    "test_coverage",
    "test_risk",
    "violated",
    "infeasible",
)


def validate_target(
    loss: Any,
    uncertainty: Any,
    target: Any,
    *,
    repeats: int = 500,
    calibration_fraction: float = 0.5,
    loss_bound: Any = None,
    method: str | None = None,
    random_state: Any = 0,
    progress: Any = None,
    tail: str | None = None,
) -> TargetValidity:
    """How often a certified target fails on a user's own rows, beside the plug-in target.

    All ``N`` rows are taken as the population: ``repeats`` times, a calibration sample of
    ``calibration_fraction * N`` rows is drawn without replacement, the certified target and
    its plug-in twin (same kind and value, no confidence) are fitted on it, and the population
    coverage and selective risk of each selection are computed exactly on all ``N`` rows (and on
    the rows left out, the test part). A draw *violates* when the population risk exceeds the
    target (risk) or the population coverage falls below it (coverage); an infeasible draw
    rejects everything and does not violate. The certified violation rate should stay at or
    below delta up to its Clopper-Pearson interval; sampling without replacement only helps.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (N,)
        Losses and uncertainty scores of the user's rows.
    target : Target
        A risk or coverage target with a confidence.
    repeats : int, default 500
        Calibration draws.
    calibration_fraction : float, default 0.5
        Share of the rows in each calibration sample, in (0, 1).
    loss_bound : float or None, default None
        The largest loss by the loss's definition; None for the 0/100 loss.
    method : {"ltt", "sgr"} or None, default None
        The certified risk target's method (:meth:`Target.fit`).
    random_state : int or None, default 0
        Seed of the draws.
    progress : callable or None, default None
        Called as ``progress(done, total)`` after each draw (e.g. to print how far a long check is).

        .. versionadded:: 0.4.0
    tail : {"auto", "hb", "betting"} or None, default None
        The certified target's tail for a loss that is not 0/B (:meth:`Target.fit`); None is
        "auto".

    Returns
    -------
    TargetValidity
        ``draws`` (pandas.DataFrame: ``repeat``, ``method`` ("certified" or "plug-in"),
        ``population_coverage``, ``population_risk``, ``test_coverage``, ``test_risk``,
        ``violated``, ``infeasible``), ``summary`` (per method: ``violations``, ``violation_rate``
        and its 95 % Clopper-Pearson ``violation_low`` / ``violation_high``, ``delta``,
        ``infeasible_rate``, ``mean_coverage``, ``mean_risk``), ``target``, ``n_rows``,
        ``n_calibration``, ``infeasible_rate`` (the certified draws that could not certify), and
        ``plot(ax=None)`` drawing the distributions (a matplotlib Figure).

    Raises
    ------
    ValueError
        Bad input, naming the argument, or the user's row (not a draw's) that is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.targets import Target
    >>> rng = np.random.default_rng(0)
    >>> u = rng.random(4000)
    >>> loss = 100.0 * (rng.random(4000) < u / 2)  # P(error | u) = u / 2
    >>> check = validate_target(loss, u, Target("risk", 10, confidence=0.9), repeats=50)
    >>> check.summary["violation_rate"].to_dict(), float(check.summary["delta"].iloc[0])
    ({'certified': 0.02, 'plug-in': 0.6}, 0.1)
    """
    target, loss, s, n_cal = _validation_rows(
        loss, uncertainty, target, repeats, calibration_fraction, loss_bound, progress
    )
    n_rows = loss.size
    population = _population_sums(loss, s)
    _parameters.check("validate_target", random_state=random_state)
    rng = np.random.default_rng(random_state)
    if tail is not None:
        _parameters.check("validate_target", tail=tail)
    fit_options = {"loss_bound": loss_bound, "method": method, "tail": tail}
    records = []
    for repeat in range(int(repeats)):
        chosen = np.zeros(n_rows, dtype=bool)
        chosen[rng.choice(n_rows, n_cal, replace=False)] = True
        records += _draw_records(repeat, target, loss, s, chosen, population, fit_options)
        if progress is not None:
            progress(repeat + 1, int(repeats))
    draws = pd.DataFrame(records, columns=list(DRAW_COLUMNS))
    summary = _summarise_draws(draws, repeats, target.confidence)
    return TargetValidity(
        target=target, n_rows=n_rows, n_calibration=n_cal, draws=draws, summary=summary
    )
