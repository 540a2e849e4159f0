"""Percentile bootstrap confidence intervals of the metrics, vectorised over resamples."""

import functools

import numpy as np

from .._checks import check_confidence
from ._bands import ConfidenceInterval
from ._losses import _as_loss_and_uncertainty
from ._registry import get_metric
from ._risk_coverage import (
    _aurc_rows,
    _augrc_rows,
    _coverage_at_risk_rows,
    _eaugrc_rows,
    _eaurc_rows,
    _risk_at_coverage_rows,
    _Sample,
    augrc,
    aurc,
    coverage_at_risk,
    eaugrc,
    eaurc,
    risk_at_coverage,
)

_BOOTSTRAP_BLOCK_ELEMENTS = 1 << 21  # resampled values per block of bootstrap_ci (a few 16 MB arrays)


#: Vectorised (rows = resamples) implementations of the metrics, keyed by the public function.
_ROWS = {
    aurc: _aurc_rows,
    augrc: _augrc_rows,
    eaurc: _eaurc_rows,
    eaugrc: _eaugrc_rows,
    risk_at_coverage: _risk_at_coverage_rows,
    coverage_at_risk: _coverage_at_risk_rows,
}


#: Keyword arguments the vectorised implementations take; ``ties`` only matters to these two.
_ROWS_KEYWORDS = {aurc: {"ties"}, eaurc: {"ties"}, risk_at_coverage: {"coverage"}, coverage_at_risk: {"risk"}}


def _resolve_metric(metric):
    """``(scalar function, rows function or None, keyword arguments)`` of a metric name or callable.

    A library's convention has no vectorised implementation: it is evaluated per resample.
    """
    if isinstance(metric, str):
        function = get_metric(metric)
        return function, _ROWS.get(function), {}
    if not callable(metric):
        raise ValueError(f"metric must be a metric name or a callable, got {metric!r}")
    if isinstance(metric, functools.partial) and not metric.args and metric.func in _ROWS:
        kwargs = dict(metric.keywords)
        if kwargs.pop("convention", "paper") != "paper":
            return metric, None, {}
        allowed = _ROWS_KEYWORDS.get(metric.func, set())
        kwargs = {k: v for k, v in kwargs.items() if k in allowed or k != "ties"}
        return metric, _ROWS[metric.func], kwargs
    return metric, _ROWS.get(metric), {}


def bootstrap_ci(metric, loss, uncertainty, n_resamples=2000, level=0.95, random_state=None):
    """Percentile bootstrap confidence interval of a metric of ``(loss, uncertainty)``.

    Draws ``n_resamples`` samples of the ``n`` examples with replacement (pairs
    ``(loss_i, uncertainty_i)`` stay together), evaluates the metric on each and
    returns the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles (linear
    interpolation, ``numpy.quantile``) of the resampled values.

    The metrics of this module (:func:`aurc` with either ``ties``, :func:`augrc`,
    :func:`eaurc`, :func:`eaugrc`, :func:`risk_at_coverage`, :func:`coverage_at_risk`,
    by name or as a function, also as ``functools.partial(f, keyword=...)``, in the
    paper's convention) are evaluated for a whole block of resamples at once with array operations (a
    resample is a vector of multiplicities over the sample, sorted once, O(n) per
    resample); any other callable is called once per resample, on the resampled
    arrays listed in index order. Both give the same values up to round-off for the
    same seed. A resample lists the drawn examples in index order, so ties between
    distinct examples are broken as in the original sample (``aurc``'s ``"index"``
    rule); repeated copies of an example tie with each other and are handled by each
    metric's own tie rule.

    Parameters
    ----------
    metric : str or callable
        A name of :data:`METRICS` or ``f(loss, uncertainty) -> float``; bind further
        arguments with ``functools.partial``, e.g.
        ``partial(risk_at_coverage, coverage=0.8)``.
    loss, uncertainty : array-like of shape (n,)
        The sample: losses and uncertainties, resampled in pairs.
    n_resamples : int, default=2000
        Number of bootstrap resamples, >= 1.
    level : float, default=0.95
        Confidence level in (0, 1).
    random_state : None, int or numpy.random.Generator
        Seed of ``numpy.random.default_rng``; the same seed gives the same interval.

    Returns
    -------
    ConfidenceInterval
        Named tuple ``(low, high)`` of Python floats.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.random(200)
    >>> loss = (rng.random(200) < u).astype(float)
    >>> low, high = bootstrap_ci("augrc", loss, u, n_resamples=500, random_state=0)
    >>> bool(low < augrc(loss, u) < high)
    True
    """
    function, rows_function, kwargs = _resolve_metric(metric)
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    level = check_confidence(level, "level")
    function(loss, uncertainty)  # validates the metric's own arguments on the full sample
    rng = np.random.default_rng(random_state)
    n = loss.size
    sample = _Sample(loss, uncertainty) if rows_function is not None else None
    block = max(1, _BOOTSTRAP_BLOCK_ELEMENTS // n)
    values = np.empty(int(n_resamples))
    for start in range(0, int(n_resamples), block):
        stop = min(start + block, int(n_resamples))
        index = rng.integers(0, n, size=(stop - start, n), dtype=np.intp)
        if rows_function is not None:
            offsets = (np.arange(stop - start, dtype=np.intp) * n)[:, None]
            weights = np.bincount((index + offsets).ravel(), minlength=(stop - start) * n).reshape(-1, n)
            values[start:stop] = rows_function(sample, weights.astype(np.float64), **kwargs)
        else:
            index.sort(axis=1)  # a resample in index order: ties are broken as in the original sample
            values[start:stop] = [function(loss[i], uncertainty[i]) for i in index]
    alpha = 1.0 - level
    low, high = np.quantile(values, [alpha / 2, 1.0 - alpha / 2])
    return ConfidenceInterval(float(low), float(high))
