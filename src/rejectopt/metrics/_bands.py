"""Internal: confidence bands of the risk-coverage curve and intervals of its read-outs.

What they cover. The point of the curve at ``k`` accepted examples is the selective risk of
the rule "accept ``s <= t_k``", ``t_k`` the ``k``-th smallest uncertainty. Given ``t_k``, the
other accepted examples are i.i.d. draws of the population restricted to ``s <= t_k``, so the
interval is one for the mean loss of that population, ``R(t_k) = E[l | s <= t_k]``: the
selective risk the fitted threshold rule has on new data. Losses in {0, ``B``}: Clopper-Pearson
on the errors (exact binomial); losses in [0, ``B``]: the empirical Bernstein bound of Maurer &
Pontil (2009, Theorem 4), valid for any distribution there, hence conservative. ``B`` comes from
the loss's definition (``loss_bound``), never from the sample's largest loss (a sample without
errors would otherwise give a bound of 0).

Simultaneous band: Bonferroni over the ``m`` distinct coverages (each interval at level
``1 - alpha / m``). It needs no assumption on how the ``m`` intervals depend on each other (they
share examples), costs only a ``sqrt(log m)`` factor in the width, and keeps each interval of
the same kind as the pointwise band.

Clopper-Pearson along the whole curve (:func:`_clopper_pearson_curve`). A beta quantile costs
about a microsecond, and a curve of ``n`` distinct scores has ``n`` points, each with its own
error count ``x`` and count of correct rows ``f``. The band reads the quantiles on a grid
instead and keeps the guarantee: ``Beta(a, b)`` is stochastically increasing in ``a`` and
decreasing in ``b``, so the lower end ``L(x, f) = B^-1(alpha/2; x, f + 1)`` increases with
``x`` and decreases with ``f``, and the upper end ``U(x, f) = B^-1(1 - alpha/2; x + 1, f)``
likewise. With ``x0 <= x <= x1`` and ``f0 <= f <= f1``, ``[L(x0, f1), U(x1, f0)]`` contains
the exact interval ``[L(x, f), U(x, f)]``: each interval still holds with probability at
least its level, pointwise or after Bonferroni. The grid edges are the integers nearest
``(j w)^2``, cells as wide as ``2 w sqrt(count)``, with ``w`` = :data:`_CELL` times the normal
quantile ``z`` of the level: exact counts below ``1 / (2 w)^2`` (about 160 at 95 %), and above
a move of each end by a few percent of the interval's width, since the width grows like
``z sqrt(count)`` too (tests/test_metrics_groups.py checks the containment and bounds the
widening at 3.5 %). ``x`` and ``f`` never decrease along the curve, so it crosses
``O(sqrt(n) / w)`` cells: about 35,000 quantiles a side at ``n = 10^6`` and 95 %, instead of
a million.
"""

from __future__ import annotations

from typing import NamedTuple

import lazy_loader as _lazy
import numpy as np

from .. import stats as _stats
from .._checks import clopper_pearson
from ._losses import _as_loss_and_uncertainty
from ._parameters import check as _check_parameters

_sps = _lazy.load("scipy.stats", suppress_warning=True)  # imported at its first use, as in _checks

#: Width of the Clopper-Pearson grid's cells in sqrt(count) units, per unit of the normal
#: quantile ``z`` of the level (module docstring): 0.039 at 95 %, 0.11 for 95 % Bonferroni-split
#: over a million coverages, so the widening stays the same share of the interval's width.
_CELL = 0.02


class ConfidenceInterval(NamedTuple):
    """Lower and upper end of a confidence interval; unpacks as ``low, high``.

    Parameters
    ----------
    low : float
        Lower end, the ``(1 - level)/2`` quantile of the resampled values.
    high : float
        Upper end, the ``(1 + level)/2`` quantile.

    Examples
    --------
    >>> from rejectopt.metrics import bootstrap_ci
    >>> loss, score = [0, 0, 1, 0, 1, 0, 0, 1], [0.1, 0.2, 0.9, 0.3, 0.5, 0.4, 0.2, 0.8]
    >>> ci = bootstrap_ci("aurc", loss, score, n_resamples=200, random_state=0)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0156, 0.4455)
    >>> low, high = ci
    """

    low: float
    high: float


class _Result:
    """Fields readable as attributes and as keys (``result.risk`` or ``result["risk"]``)."""

    _fields: tuple = ()

    def __getitem__(self, key):
        if key not in self._fields:
            raise KeyError(f"{key!r}; the fields are {', '.join(map(repr, self._fields))}")
        return getattr(self, key)

    def keys(self):
        return list(self._fields)

    def __repr__(self):
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({shown})"


class RiskCoverageBand(_Result):
    """The RC curve at each distinct coverage with a confidence band (:func:`risk_coverage_band`)."""

    _fields = ("coverage", "risk", "lower", "upper", "confidence", "simultaneous", "method")

    def __init__(self, coverage, risk, lower, upper, confidence, simultaneous, method):
        self.coverage, self.risk, self.lower, self.upper = coverage, risk, lower, upper
        self.confidence, self.simultaneous, self.method = confidence, simultaneous, method


def loss_kind(loss, loss_bound, owner="risk_coverage_band"):
    """``(B, binary)``: the losses' bound from their definition, and whether they lie in {0, B}.

    ``loss_bound`` is read (and refused naming ``owner``, :mod:`._parameters`) only here: a
    function reads it only when it builds an interval. O(n) passes (no sort): the band at a
    million rows reads them once each.
    """
    largest = float(loss.max())

    def only(bound):
        return bool(np.all((loss == 0.0) | (loss == bound)))

    if loss_bound is None:
        for bound in (1.0, 100.0):
            if largest == bound and only(bound):
                return bound, True
        values = np.unique(loss)
        raise ValueError(
            "loss_bound is needed: the largest loss the loss's definition allows (1 for 0/1 errors, 100 "
            "for the 0/100 loss, K - 1 for the absolute error on K ordered classes); it is not read from "
            f"these losses (values {values[:5].tolist()}{'...' if values.size > 5 else ''}), because a sample "
            "without errors would give a bound of 0"
        )
    bound = float(_check_parameters(owner, loss_bound=loss_bound)["loss_bound"])
    if largest > bound:
        raise ValueError(
            f"loss_bound={bound!r} is below the largest loss {largest!r}; pass the bound of "
            "the loss's definition"
        )
    return bound, only(bound)


def mean_interval(sums, squares, counts, bound, binary, alpha):
    """Interval of the population mean loss from loss sums, sums of squares and counts (arrays)."""
    if binary:
        low, high = clopper_pearson(sums / bound, counts, alpha)
    else:
        mean = sums / bound / counts
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (squares / bound**2 / counts - mean**2) * counts / (counts - 1.0)
        low, high = _stats._empirical_bernstein(mean, variance, counts, alpha)
    return low * bound, high * bound


def _cell_edges(count, width):
    """The grid edges around each integer ``count``: the largest <= it and the smallest >= it.

    Cell ``i`` holds the integers in ``[(i w)^2, ((i + 1) w)^2)``; below ``1 / (2 w)^2`` each
    holds at most one, so the edges are ``count`` itself. Clipped to ``count``, so a float
    round-off can never move an edge past it. Also returns the cell's index.
    """
    cell = np.floor(np.sqrt(count) / width)
    below = np.minimum(np.ceil((cell * width) ** 2), count)
    above = np.maximum(np.ceil(((cell + 1.0) * width) ** 2) - 1.0, count)
    return below, above, cell


def _clopper_pearson_curve(errors, trials, alpha):
    """Clopper-Pearson intervals at the points of a curve, each containing the exact one.

    ``errors`` and ``trials`` are integer-valued arrays, both non-decreasing along the curve
    (as are the correct counts ``trials - errors``); ``alpha`` a scalar. The quantiles are
    read at grid points (module docstring), once per run of points in the same pair of cells.
    """
    width = _CELL * float(_sps.norm.isf(alpha / 2))
    x_below, x_above, x_cell = _cell_edges(errors, width)
    f_below, f_above, f_cell = _cell_edges(trials - errors, width)
    new = np.ones(errors.size, dtype=bool)
    new[1:] = (x_cell[1:] != x_cell[:-1]) | (f_cell[1:] != f_cell[:-1])
    new[1:] |= (x_below[1:] != x_below[:-1]) | (
        f_above[1:] != f_above[:-1]
    )  # a clipped edge: its own run
    new[1:] |= (x_above[1:] != x_above[:-1]) | (f_below[1:] != f_below[:-1])
    starts, run = np.flatnonzero(new), np.cumsum(new) - 1
    x0, f1, x1, f0 = x_below[starts], f_above[starts], x_above[starts], f_below[starts]
    with np.errstate(
        invalid="ignore", divide="ignore"
    ):  # the formulas of clopper_pearson, on the grid
        low = np.where(x0 > 0, _sps.beta.ppf(alpha / 2, np.maximum(x0, 1e-300), f1 + 1), 0.0)
        high = np.where(f0 > 0, _sps.beta.isf(alpha / 2, x1 + 1, np.maximum(f0, 1e-300)), 1.0)
    return np.nan_to_num(low, nan=0.0)[run], np.nan_to_num(high, nan=1.0)[run]


def _method(binary, bound, confidence, simultaneous, m):
    kind = (
        f"Clopper-Pearson on the errors (losses in {{0, {bound:g}}})"
        if binary
        else f"empirical Bernstein (Maurer & Pontil 2009) for losses in [0, {bound:g}]"
    )
    where = f", Bonferroni over {m} coverages (simultaneous)" if simultaneous else " (pointwise)"
    return f"{kind}, {confidence:.0%}{where}"


def _curve_points(loss, uncertainty, squares=True):
    """Counts ``k`` at the ends of the tie groups, and the loss sums and sums of squares there.

    The sums of squares only with ``squares`` (Clopper-Pearson does not read them: None).
    """
    order = np.argsort(uncertainty, kind="stable")
    u = uncertainty[order]
    ends = np.flatnonzero(np.concatenate([u[1:] != u[:-1], [True]]))
    sorted_loss = loss[order]
    return (
        ends + 1.0,
        np.cumsum(sorted_loss)[ends],
        np.cumsum(sorted_loss**2)[ends] if squares else None,
    )


def risk_coverage_band(loss, uncertainty, confidence=0.95, simultaneous=False, *, loss_bound=None):
    """The risk-coverage curve with a pointwise or simultaneous confidence band.

    At each distinct coverage ``k/n`` (the end of a tie group of the uncertainty) the curve's
    risk ``L(k)/k`` and an interval of ``R(t_k)``, the selective risk on new data of the rule
    accepting ``s <= t_k`` (``t_k`` the ``k``-th smallest uncertainty). Losses in {0, ``B``}:
    Clopper-Pearson; other losses in [0, ``B``]: empirical Bernstein (Maurer & Pontil 2009,
    Theorem 4), conservative. ``simultaneous=True``: Bonferroni over the ``m`` distinct
    coverages, so with probability at least ``confidence`` every interval holds at once.
    Clopper-Pearson reads its beta quantiles on a grid of error and correct counts, each
    interval containing the exact one (so the guarantee holds) and at most a few percent of
    its width wider; exact for counts below about 160 (95 %): a band over a million rows
    costs a few AuRCs, not 25 to 38 (benchmarks/bench_groups_bands_records.csv).

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Losses and uncertainty scores, as in :func:`aurc`.
    confidence : float, default=0.95
        Confidence level in (0, 1).
    simultaneous : bool, default=False
        Whether the band holds over the whole curve at once.
    loss_bound : float, optional
        The largest loss the loss's definition allows (1 for 0/1 errors, 100 for the 0/100 loss,
        ``K - 1`` for the absolute error on ``K`` ordered classes). Needed unless the losses take
        both values 0 and 1, or 0 and 100.

    Returns
    -------
    RiskCoverageBand
        ``coverage``, ``risk``, ``lower``, ``upper`` (arrays of shape (m,), coverage ascending),
        ``confidence``, ``simultaneous`` and ``method`` (a sentence naming the construction);
        readable as attributes and as keys.

    Raises
    ------
    ValueError
        Invalid losses or uncertainties (as :func:`aurc`), ``confidence`` outside (0, 1),
        ``simultaneous`` not a bool, or ``loss_bound`` missing when it cannot be read from the
        losses, or below the largest loss.

    Examples
    --------
    >>> band = risk_coverage_band([0, 0, 100, 0, 100], [1, 2, 3, 3, 4])
    >>> band.coverage.tolist(), band["risk"].tolist()
    ([0.2, 0.4, 0.8, 1.0], [0.0, 0.0, 25.0, 40.0])
    >>> bool(np.all(band.lower <= band.risk) and np.all(band.risk <= band.upper))
    True
    >>> band.method
    'Clopper-Pearson on the errors (losses in {0, 100}), 95% (pointwise)'
    """
    _check_parameters("risk_coverage_band", confidence=confidence, simultaneous=simultaneous)
    return _band(loss, uncertainty, confidence, simultaneous, loss_bound, "risk_coverage_band")


def _band(loss, uncertainty, confidence, simultaneous, loss_bound, owner):
    """:func:`risk_coverage_band` once its scalars are checked; ``owner`` names the caller."""
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    confidence = float(confidence)
    bound, binary = loss_kind(loss, loss_bound, owner)
    counts, sums, squares = _curve_points(loss, uncertainty, squares=not binary)
    m = counts.size
    alpha = (1.0 - confidence) / (m if simultaneous else 1)
    if binary:
        lower, upper = _clopper_pearson_curve(np.round(sums / bound), counts, alpha)
        lower, upper = lower * bound, upper * bound
    else:
        lower, upper = mean_interval(sums, squares, counts, bound, binary, alpha)
    risk = sums / counts
    return RiskCoverageBand(
        counts / loss.size,
        risk,
        np.minimum(lower, risk),
        np.maximum(upper, risk),
        confidence,
        bool(simultaneous),
        _method(binary, bound, confidence, bool(simultaneous), m),
    )


def risk_interval_at(loss, uncertainty, coverage, confidence, loss_bound, *, owner):
    """Pointwise interval of the risk at ``coverage`` (fractional count ``coverage n``, ties averaged)."""
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    confidence = float(confidence)
    bound, binary = loss_kind(loss, loss_bound, owner)
    order = np.argsort(uncertainty, kind="stable")
    _, group = np.unique(uncertainty, return_inverse=True)
    size = np.bincount(group)
    positions = np.arange(loss.size + 1, dtype=float)
    t = coverage * loss.size
    cum = [
        np.interp(
            t,
            positions,
            np.concatenate(
                ([0.0], np.cumsum((np.bincount(group, weights=values) / size)[group][order]))
            ),
        )
        for values in (loss, loss**2)
    ]
    low, high = mean_interval(
        np.array(cum[0]), np.array(cum[1]), np.array(t), bound, binary, 1.0 - confidence
    )
    risk = cum[0] / t
    return ConfidenceInterval(float(min(low, risk)), float(max(high, risk)))


def coverage_interval_at(loss, uncertainty, risk, value, confidence, loss_bound, *, owner):
    """Interval of the population's coverage at ``risk`` from the simultaneous band.

    If every interval holds, the true risk is <= ``risk`` wherever the band's upper edge is, and
    > ``risk`` wherever its lower edge is: the coverage at ``risk`` lies between the largest
    coverage of the first kind and the first coverage of the second kind after the last
    coverage whose lower edge is <= ``risk``. Widened, if needed, to contain ``value``.
    """
    band = _band(loss, uncertainty, confidence, True, loss_bound, owner)
    below = np.flatnonzero(band.upper <= risk)
    low = float(band.coverage[below[-1]]) if below.size else 0.0
    possible = np.flatnonzero(band.lower <= risk)
    if not possible.size:
        high = float(band.coverage[0])
    else:
        last = possible[-1]
        high = float(band.coverage[min(last + 1, band.coverage.size - 1)])
    return ConfidenceInterval(min(low, value), max(high, value))
