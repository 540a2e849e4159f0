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
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import stats as _stats
from .._checks import check_confidence, clopper_pearson
from ._losses import _as_loss_and_uncertainty


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


def loss_kind(loss, loss_bound):
    """``(B, binary)``: the losses' bound from their definition, and whether they lie in {0, B}."""
    values = np.unique(loss)
    if loss_bound is None:
        for bound in (1.0, 100.0):
            if values[-1] == bound and np.all((values == 0.0) | (values == bound)):
                return bound, True
        raise ValueError(
            "loss_bound is needed: the largest loss the loss's definition allows (1 for 0/1 errors, 100 "
            "for the 0/100 loss, K - 1 for the absolute error on K ordered classes); it is not read from "
            f"these losses (values {values[:5].tolist()}{'...' if values.size > 5 else ''}), because a sample "
            "without errors would give a bound of 0")
    try:
        bound = float(loss_bound)
    except (TypeError, ValueError):
        raise ValueError(f"loss_bound must be a positive number, got {loss_bound!r}") from None
    if not (math.isfinite(bound) and bound > 0):
        raise ValueError(f"loss_bound must be a positive finite number, got {loss_bound!r}")
    if values[-1] > bound:
        raise ValueError(f"loss_bound={bound!r} is below the largest loss {float(values[-1])!r}; pass the bound of "
                         "the loss's definition")
    return bound, bool(np.all((values == 0.0) | (values == bound)))


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


def _method(binary, bound, confidence, simultaneous, m):
    kind = (f"Clopper-Pearson on the errors (losses in {{0, {bound:g}}})" if binary
            else f"empirical Bernstein (Maurer & Pontil 2009) for losses in [0, {bound:g}]")
    where = f", Bonferroni over {m} coverages (simultaneous)" if simultaneous else " (pointwise)"
    return f"{kind}, {confidence:.0%}{where}"


def _curve_points(loss, uncertainty):
    """Counts ``k`` at the ends of the tie groups, and the loss sums and sums of squares there."""
    order = np.argsort(uncertainty, kind="stable")
    u = uncertainty[order]
    ends = np.flatnonzero(np.concatenate([u[1:] != u[:-1], [True]]))
    sorted_loss = loss[order]
    return ends + 1.0, np.cumsum(sorted_loss)[ends], np.cumsum(sorted_loss**2)[ends]


def risk_coverage_band(loss, uncertainty, confidence=0.95, simultaneous=False, *, loss_bound=None):
    """The risk-coverage curve with a pointwise or simultaneous confidence band.

    At each distinct coverage ``k/n`` (the end of a tie group of the uncertainty) the curve's
    risk ``L(k)/k`` and an interval of ``R(t_k)``, the selective risk on new data of the rule
    accepting ``s <= t_k`` (``t_k`` the ``k``-th smallest uncertainty). Losses in {0, ``B``}:
    Clopper-Pearson; other losses in [0, ``B``]: empirical Bernstein (Maurer & Pontil 2009,
    Theorem 4), conservative. ``simultaneous=True``: Bonferroni over the ``m`` distinct
    coverages, so with probability at least ``confidence`` every interval holds at once.

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
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    confidence = check_confidence(confidence)
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise ValueError(f"simultaneous must be True or False, got {simultaneous!r}")
    bound, binary = loss_kind(loss, loss_bound)
    counts, sums, squares = _curve_points(loss, uncertainty)
    m = counts.size
    alpha = (1.0 - confidence) / (m if simultaneous else 1)
    lower, upper = mean_interval(sums, squares, counts, bound, binary, alpha)
    risk = sums / counts
    return RiskCoverageBand(counts / loss.size, risk, np.minimum(lower, risk), np.maximum(upper, risk),
                            confidence, bool(simultaneous), _method(binary, bound, confidence, bool(simultaneous), m))


def risk_interval_at(loss, uncertainty, coverage, confidence, loss_bound):
    """Pointwise interval of the risk at ``coverage`` (fractional count ``coverage n``, ties averaged)."""
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    confidence = check_confidence(confidence)
    bound, binary = loss_kind(loss, loss_bound)
    order = np.argsort(uncertainty, kind="stable")
    _, group = np.unique(uncertainty, return_inverse=True)
    size = np.bincount(group)
    positions = np.arange(loss.size + 1, dtype=float)
    t = coverage * loss.size
    cum = [np.interp(t, positions, np.concatenate(([0.0], np.cumsum(
        (np.bincount(group, weights=values) / size)[group][order])))) for values in (loss, loss**2)]
    low, high = mean_interval(np.array(cum[0]), np.array(cum[1]), np.array(t), bound, binary, 1.0 - confidence)
    risk = cum[0] / t
    return ConfidenceInterval(float(min(low, risk)), float(max(high, risk)))


def coverage_interval_at(loss, uncertainty, risk, value, confidence, loss_bound):
    """Interval of the population's coverage at ``risk`` from the simultaneous band.

    If every interval holds, the true risk is <= ``risk`` wherever the band's upper edge is, and
    > ``risk`` wherever its lower edge is: the coverage at ``risk`` lies between the largest
    coverage of the first kind and the first coverage of the second kind after the last
    coverage whose lower edge is <= ``risk``. Widened, if needed, to contain ``value``.
    """
    band = risk_coverage_band(loss, uncertainty, confidence, True, loss_bound=loss_bound)
    below = np.flatnonzero(band.upper <= risk)
    low = float(band.coverage[below[-1]]) if below.size else 0.0
    possible = np.flatnonzero(band.lower <= risk)
    if not possible.size:
        high = float(band.coverage[0])
    else:
        last = possible[-1]
        high = float(band.coverage[min(last + 1, band.coverage.size - 1)])
    return ConfidenceInterval(min(low, value), max(high, value))
