"""Percentile bootstrap confidence intervals of the metrics, vectorised over resamples."""

import functools
import math
import numbers
import reprlib
import warnings

import numpy as np

from ._bands import ConfidenceInterval
from ._losses import _as_loss_and_uncertainty
from ._parameters import check as _check_parameters
from ._registry import get_metric
from ._risk_coverage import (
    augrc,
    aurc,
    coverage_at_risk,
    eaugrc,
    eaurc,
    risk_at_coverage,
)
from ._weighted import (
    _augrc_rows,
    _aurc_rows,
    _coverage_at_risk_rows,
    _eaugrc_rows,
    _eaurc_rows,
    _risk_at_coverage_rows,
    _Sample,
)

_BOOTSTRAP_BLOCK_ELEMENTS = (
    1 << 21
)  # drawn rows per block of resamples (a few 16 MB arrays at once)


def _draws(rng, n, n_resamples):
    """Blocks ``(start, index)``: row ``r`` of ``index`` lists the ``n`` rows drawn for resample ``start + r``.

    Every block is drawn from the same stream in turn, so the resamples do not depend on the
    block size, and a block holds about ``_BOOTSTRAP_BLOCK_ELEMENTS`` drawn rows whatever ``n``
    and ``n_resamples`` (the memory of a bootstrap does not grow with the number of resamples).
    """
    block = max(1, _BOOTSTRAP_BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        yield start, rng.integers(0, n, size=(min(block, n_resamples - start), n), dtype=np.intp)


def _multiplicities(index, n):
    """How often each of the ``n`` rows is drawn in each row of ``index``, shape (B, n).

    One byte per count when they fit (they do but with a vanishing probability), so that
    gathering them in a score's order stays in cache.
    """
    counts = np.empty(index.shape, dtype=np.uint8)
    for r, drawn in enumerate(index):
        row = np.bincount(drawn, minlength=n)
        if counts.dtype == np.uint8 and row.max() > 255:  # a row drawn 256 times: never in practice
            counts = counts.astype(np.intp)
        counts[r] = row
    return counts


_ROW_BY_ROW = (
    1 << 12
)  # from this many rows on, a resample's running count is taken alone (it then stays in cache)


class _ResampledAurc:
    """Eq. (27) of one score under multiplicity rows in its sorted order, read at the nonzero losses only.

    The loss at sorted position ``p`` (1-based) enters every ``L(i)/i`` with ``i >= p``, so
    ``AuRC = (1/n) sum_p loss_p T(p - 1)`` with the harmonic tail ``T(m) = sum_{k=m+1..n} 1/k``.
    A resample lists its rows in index order and the sort is stable (``aurc``'s ``"index"`` tie
    rule), so the ``w`` copies of a row drawn after ``B`` others sit at ``B + 1 .. B + w`` and
    contribute ``loss * (S(B + w) - S(B))``, ``S(m) = sum_{k<m} T(k) = m (T(m) + 1)`` (from
    ``sum_{k<m} H(k) = m H(m) - m``). A resample then costs one running count of the weights and
    four look-ups per row with a nonzero loss. ``S`` is at most ``n / e``, so a row's term is
    exact to about ``n`` units in the last place and the AuRC, their sum, to about 1e-13.
    """

    def __init__(self, sorted_loss):
        n = sorted_loss.size
        self.n = n
        self.positions = np.flatnonzero(sorted_loss)
        self.next_positions = self.positions + 1
        self.losses = sorted_loss[self.positions]
        tail = np.zeros(n + 1)  # T(0..n), summed from the smallest term
        tail[:n] = np.cumsum(1.0 / np.arange(n, 0, -1, dtype=np.float64))[::-1]
        self.partial = np.arange(n + 1, dtype=np.float64) * (tail + 1.0)  # S(0..n)
        self.count_type = np.int64 if n >= 1 << 31 else np.int32

    def __call__(self, counts):
        """The AuRC of each resample: ``counts`` (shape (B, n)) the copies of each row in this score's order."""
        if self.n >= _ROW_BY_ROW:
            running = np.zeros(
                (1, self.n + 1), dtype=self.count_type
            )  # one buffer: no page faults per row
            return np.array([self._area(row[None, :], running)[0] for row in counts])
        return self._area(counts, np.zeros((counts.shape[0], self.n + 1), dtype=self.count_type))

    def _area(self, counts, running):
        np.cumsum(
            counts, axis=1, dtype=self.count_type, out=running[:, 1:]
        )  # rows drawn before each
        before = np.take(running, self.positions, axis=1).astype(
            np.intp
        )  # intp: the look-ups twice as fast
        after = np.take(running, self.next_positions, axis=1).astype(np.intp)
        terms = np.take(self.partial, after) - np.take(self.partial, before)
        return (
            np.sum(terms * self.losses, axis=1) / self.n
        )  # not a BLAS product: its threads spin when busy


def _in_order(counts, order, out=None):
    """``counts[:, order]`` row by row (a 1-D gather per row is faster than the 2-D one).

    ``out``: a buffer of the same shape and type to reuse, else a new array.
    """
    if out is None or out.shape != counts.shape or out.dtype != counts.dtype:
        out = np.empty(counts.shape, dtype=counts.dtype)
    for row, source in zip(out, counts):
        np.take(source, order, out=row)
    return out


def _fast_rows(rows_function, kwargs, loss, uncertainty):
    """``counts -> values`` through :class:`_ResampledAurc` for the AuRC and E-AuRC under ``ties="index"``.

    ``counts`` (shape (B, n)) in example order. None for the other metrics, which keep
    :mod:`._risk_coverage`'s own rows functions.
    """
    if not _is_fast(rows_function, kwargs):
        return None
    order = np.argsort(uncertainty, kind="stable")
    area = _ResampledAurc(loss[order])
    if rows_function is _aurc_rows:
        return lambda counts: area(_in_order(counts, order))
    by_loss = np.argsort(loss, kind="stable")  # eaurc's oracle: sorted by loss
    oracle = _ResampledAurc(loss[by_loss])
    return lambda counts: area(_in_order(counts, order)) - oracle(_in_order(counts, by_loss))


def _is_fast(rows_function, kwargs):
    """Whether :class:`_ResampledAurc` computes this metric: AuRC or E-AuRC with the ``"index"`` tie rule."""
    return rows_function in (_aurc_rows, _eaurc_rows) and kwargs.get("ties", "index") == "index"


def _metric_name(metric, function):
    return metric if isinstance(metric, str) else getattr(function, "__name__", repr(function))


def _drop_nan(values, name, what):
    """``values`` without NaN, warning how many were left out; ValueError when none is left.

    A metric may be undefined on a few resamples (e.g. a resample without any error); those say
    nothing about the spread and are left out, and the interval is read from the others.
    """
    missing = np.isnan(values)
    if not missing.any():
        return values
    kept = values[~missing]
    if kept.size == 0:
        raise ValueError(
            f"metric {name!r} returned NaN on every one of the {values.size} resamples of {what}; "
            "give a metric that returns a number on resampled rows"
        )
    warnings.warn(
        f"metric {name!r} returned NaN on {values.size - kept.size} of the {values.size} resamples of "
        f"{what}; they are left out and the interval uses the other {kept.size}",
        RuntimeWarning,
        stacklevel=3,
    )
    return kept


def _metric_value(value, name, what, *, resample=False):
    """A metric's value as a float, or an error naming the metric and what it returned.

    Not one real number (None, an array, a text, a boolean): TypeError, the value described.
    Infinite: ValueError saying so (a percentile of infinite values is no interval, and the
    difference of two is NaN, not a measurement). NaN: ValueError on the full sample (no
    interval can describe it); on a resample (``resample=True``) it is returned, for
    :func:`_drop_nan` to leave out and count.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"metric {name!r} returned {_described(value)} on {what}; a metric returns one number"
        )
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the float range
        number = math.copysign(math.inf, value)
    if math.isinf(number):
        raise ValueError(
            f"metric {name!r} returned an infinite value ({number}) on {what}; an "
            "infinite estimate has no interval or p-value: give a metric that returns a finite "
            "number on these rows"
        )
    if math.isnan(number) and not resample:
        raise ValueError(
            f"metric {name!r} returned NaN on {what}; a NaN estimate has no interval or p-value: "
            "give a metric that returns a number on these rows"
        )
    return number


def _described(value):
    """What a metric returned instead of one number, for its error message."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, (str, bytes)):
        return f"the text {reprlib.repr(value)}"
    return f"a {type(value).__name__} ({reprlib.repr(value)})"


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
_ROWS_KEYWORDS = {
    aurc: {"ties"},
    eaurc: {"ties"},
    risk_at_coverage: {"coverage"},
    coverage_at_risk: {"risk"},
}


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
        if (
            not set(kwargs) <= allowed
        ):  # e.g. coverage_range: no vectorised form, evaluated per resample
            return metric, None, {}
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
    metric's own tie rule. Resamples are drawn in blocks of about two million drawn rows, so
    memory does not grow with ``n_resamples``.

    NaN: a metric that returns NaN on the full sample is refused (ValueError naming it); the
    resamples on which it returns NaN are left out with a RuntimeWarning saying how many, and
    the quantiles are read from the others. A value that is infinite (on the sample or on a
    resample) or not one number (None, an array, a text) is refused, naming the metric and
    what it returned.

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

    Raises
    ------
    ValueError
        On a bad ``metric``, ``n_resamples`` or ``level``, on losses and uncertainties that are
        not one finite number per row, and when the metric returns NaN on the full sample or on
        every resample, or an infinite value.
    TypeError
        When the metric returns something else than one number (None, an array, a text).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.random(200)
    >>> loss = (rng.random(200) < u).astype(float)
    >>> low, high = bootstrap_ci("augrc", loss, u, n_resamples=500, random_state=0)
    >>> bool(low < augrc(loss, u) < high)
    True
    """
    _check_parameters(
        "bootstrap_ci", n_resamples=n_resamples, level=level, random_state=random_state
    )
    function, rows_function, kwargs = _resolve_metric(metric)
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    n_resamples, level = int(n_resamples), float(level)
    name = _metric_name(metric, function)
    _metric_value(
        function(loss, uncertainty), name, "the full sample"
    )  # also validates its own arguments
    rng = np.random.default_rng(random_state)
    n = loss.size
    fast = (
        _fast_rows(rows_function, kwargs, loss, uncertainty) if rows_function is not None else None
    )
    sample = _Sample(loss, uncertainty) if rows_function is not None and fast is None else None
    values, resampled = np.empty(n_resamples), f"a resample of the {n} rows"
    for start, index in _draws(rng, n, n_resamples):
        stop = start + index.shape[0]
        if fast is not None:
            values[start:stop] = fast(_multiplicities(index, n))
        elif rows_function is not None:
            values[start:stop] = rows_function(
                sample, _multiplicities(index, n).astype(np.float64), **kwargs
            )
        else:
            index.sort(
                axis=1
            )  # a resample in index order: ties are broken as in the original sample
            values[start:stop] = [
                _metric_value(function(loss[i], uncertainty[i]), name, resampled, resample=True)
                for i in index
            ]
    values = _drop_nan(values, name, f"the {n} rows")
    alpha = 1.0 - level
    low, high = np.quantile(values, [alpha / 2, 1.0 - alpha / 2])
    return ConfidenceInterval(float(low), float(high))
