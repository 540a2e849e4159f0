"""Internal: a paired test of two uncertainty scores on the same test rows (paired bootstrap)."""

from __future__ import annotations

import numpy as np

from ._bands import ConfidenceInterval, _Result
from ._bootstrap import (
    _BOOTSTRAP_BLOCK_ELEMENTS,
    _drop_nan,
    _in_order,
    _is_fast,
    _metric_name,
    _metric_value,
    _multiplicities,
    _ResampledAurc,
    _resolve_metric,
)
from ._losses import _as_loss_and_uncertainty
from ._parameters import check as _check_parameters
from ._weighted import _Sample


class PairedComparison(_Result):
    """The result of :func:`compare_scores`; fields readable as attributes and as keys."""

    _fields = ("difference", "ci", "p_value", "metric", "n_resamples", "method")

    def __init__(self, difference, ci, p_value, metric, n_resamples, method):
        self.difference, self.ci, self.p_value = difference, ci, p_value
        self.metric, self.n_resamples, self.method = metric, n_resamples, method


_CHUNK = 1 << 15  # ranks counted at once: a chunk's counts stay in the processor's cache


def _rank_counts(rng, n, n_resamples):
    """Blocks ``(start, counts)`` of resamples as multiplicities over score a's rank order, shape (B, n).

    Drawing ``n`` rows with replacement is a multinomial over the ``n`` ranks; it is drawn as
    the multinomial of the chunks of ``_CHUNK`` ranks, then within each chunk its draws
    uniformly (the same distribution), so counting them stays in cache. Each resample is drawn
    in turn from one stream, so the values do not depend on the block size, and a block holds
    about ``_BOOTSTRAP_BLOCK_ELEMENTS`` counts. A block is overwritten by the next: use it before.
    """
    starts = np.arange(0, n, _CHUNK)
    sizes = np.minimum(_CHUNK, n - starts)
    chunks = list(zip(starts.tolist(), sizes.tolist()))
    block = max(1, _BOOTSTRAP_BLOCK_ELEMENTS // n)
    buffer = None
    for start in range(0, n_resamples, block):
        if (
            n <= _CHUNK
        ):  # one chunk, whose multinomial draws nothing: the same stream, drawn for the block at once
            yield (
                start,
                _multiplicities(rng.integers(0, n, size=(min(block, n_resamples - start), n)), n),
            )
            continue
        rows = min(block, n_resamples - start)
        if (
            buffer is None or buffer.shape[0] != rows or buffer.dtype != np.uint8
        ):  # reused: no page faults
            buffer = np.empty((rows, n), dtype=np.uint8)
        counts = buffer
        for row in range(counts.shape[0]):
            for (first, size), drawn in zip(chunks, rng.multinomial(n, sizes / n).tolist()):
                chunk = np.bincount(rng.integers(0, size, drawn), minlength=size)
                if (
                    counts.dtype == np.uint8 and chunk.max() > 255
                ):  # a row drawn 256 times: never in practice
                    counts = counts.astype(np.intp)
                counts[row, first : first + size] = chunk
        yield start, counts


def _paired_evaluator(loss, uncertainty_a, uncertainty_b, metric, rows_function, kwargs):
    """``evaluate(counts)``: the metric's difference a - b on a block of resamples, paired.

    ``counts`` are the resamples' multiplicities in score a's sorted order (:func:`_rank_counts`).
    The fastest path that computes the metric exactly: the AuRC's running sums, the weighted
    kernels of :mod:`._weighted`, else the metric's own function (``metric`` is its
    ``(function, name)``) on each resample's rows, each value checked to be one finite number
    or NaN before the two are subtracted (the difference of two infinities would be NaN).
    """
    function, name = metric
    n = loss.size
    order_a = np.argsort(uncertainty_a, kind="stable")
    rank_a = np.empty(n, dtype=np.intp)
    rank_a[order_a] = np.arange(n)
    if rows_function is not None and _is_fast(rows_function, kwargs):
        # E-AuRC's oracle term is the same for both scores on a resample: the difference is the AuRC's
        order_b = np.argsort(uncertainty_b, kind="stable")
        area_a, area_b, b_in_a = (
            _ResampledAurc(loss[order_a]),
            _ResampledAurc(loss[order_b]),
            rank_a[order_b],
        )

        in_b = None

        def evaluate(counts):
            nonlocal in_b
            in_b = _in_order(counts, b_in_a, in_b)
            return area_a(counts) - area_b(in_b)  # paired: the same rows
    elif rows_function is not None:
        sample_a, sample_b = _Sample(loss, uncertainty_a), _Sample(loss, uncertainty_b)

        def evaluate(counts):
            weights = _in_order(counts, rank_a).astype(np.float64)  # example order
            return rows_function(sample_a, weights, **kwargs) - rows_function(
                sample_b, weights, **kwargs
            )
    else:

        def value(rows, uncertainty, score):
            return _metric_value(
                function(loss[rows], uncertainty[rows]),
                name,
                f"a resample of the {n} rows with score {score}",
                resample=True,
            )

        def evaluate(counts):
            rows = (
                np.sort(np.repeat(order_a, row)) for row in counts
            )  # index order: ties as in the sample
            return [value(i, uncertainty_a, "a") - value(i, uncertainty_b, "b") for i in rows]

    return evaluate


def compare_scores(
    loss,
    uncertainty_a,
    uncertainty_b,
    metric="aurc",
    n_resamples=2000,
    random_state=0,
    confidence=0.95,
):
    """Paired test of two uncertainty scores of the same predictions on the same test rows.

    Paired percentile bootstrap: each resample draws the ``n`` rows with replacement and
    evaluates the metric of both scores on the *same* rows, so the difference's sampling
    variation excludes the rows' shared difficulty (a paired test; two separate intervals
    that overlap say little). ``ci`` is the percentile interval of the resampled differences;
    ``p_value`` the two-sided p-value of "no difference" by inverting it,
    ``min(1, 2 min(P*(d <= 0), P*(d >= 0)))`` with ``(1 + count) / (1 + B)`` proportions, so
    ``p_value < 1 - confidence`` whenever ``ci`` excludes 0 (up to the quantiles' interpolation).

    The AuRC and E-AuRC (``ties="index"``) of a resample come from its counts in each score's
    order, one running count per resample and no sort (its time and memory against the former
    path, on 2,000 resamples of 10^6 rows: ``benchmarks/compare_scores_records.json``, written by
    ``benchmarks/bench_compare_scores.py``); the other metrics of this module run vectorised
    over a block of resamples, and any other callable is called on each resample's rows in
    index order; all three see the same resamples for a seed. Resamples are drawn in blocks of
    about two million rows, so memory does not grow with ``n_resamples``.

    NaN: a metric that is NaN on the full sample is refused (ValueError naming it). Resamples on
    which the difference is NaN are left out with a RuntimeWarning saying how many; ``ci`` and
    ``p_value`` are read from the others (their count in the proportions' denominator) and
    ``method`` says how many were left out. A value that is infinite, or not one number (None,
    an array, a text), is refused, naming the metric and what it returned.

    .. versionchanged:: 0.4.0
       The resamples are drawn over score a's ranks: the same ``random_state`` gives other (equally
       valid) numbers than 0.3.0. A metric that is NaN on the data is refused, naming it; NaN
       resamples are dropped with a warning that counts them.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Losses of the predictions (the same for both scores).
    uncertainty_a, uncertainty_b : array-like of shape (n,)
        The two scores of the same rows, larger = more uncertain.
    metric : str or callable, default="aurc"
        A name of :data:`METRICS` or a function, as in :func:`bootstrap_ci` (the metrics of this
        module in the paper's convention run vectorised over resamples).
    n_resamples : int, default=2000
        Bootstrap resamples, >= 1.
    random_state : None, int or numpy.random.Generator, default=0
        Seed of the resampling; the same seed gives the same result.
    confidence : float, default=0.95
        Level of ``ci``.

    Returns
    -------
    PairedComparison
        ``difference`` (metric of a minus metric of b on the sample), ``ci``
        (:class:`ConfidenceInterval`), ``p_value``, ``metric``, ``n_resamples`` and ``method``;
        readable as attributes and as keys.

    Raises
    ------
    ValueError
        On a bad ``metric``, ``n_resamples`` or ``confidence``, on scores of another length than
        ``loss`` or not finite, and when the metric is NaN on the full sample or on every resample,
        or infinite.
    TypeError
        When the metric returns something else than one number (None, an array, a text).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> risk = rng.random(300)
    >>> loss = 100.0 * (rng.random(300) < risk)
    >>> good, noisy = risk, risk + rng.normal(0, 0.5, 300)
    >>> result = compare_scores(loss, good, noisy, n_resamples=500)
    >>> bool(result.difference < 0), bool(result.p_value < 0.05), bool(result["ci"].high < 0)
    (True, True, True)
    """
    _check_parameters(
        "compare_scores",
        n_resamples=n_resamples,
        confidence=confidence,
        random_state=random_state,
    )
    function, rows_function, kwargs = _resolve_metric(metric)
    loss, uncertainty_a = _as_loss_and_uncertainty(loss, uncertainty_a)
    _, uncertainty_b = _as_loss_and_uncertainty(loss, uncertainty_b)
    n_resamples, confidence = int(n_resamples), float(confidence)
    name = _metric_name(metric, function)
    value_a = _metric_value(function(loss, uncertainty_a), name, "the full sample with score a")
    value_b = _metric_value(function(loss, uncertainty_b), name, "the full sample with score b")
    difference = value_a - value_b
    rng = np.random.default_rng(random_state)
    n = loss.size
    values = np.empty(n_resamples)
    evaluate = _paired_evaluator(
        loss, uncertainty_a, uncertainty_b, (function, name), rows_function, kwargs
    )
    for start, counts in _rank_counts(rng, n, n_resamples):  # one block of resamples at a time
        values[start : start + counts.shape[0]] = evaluate(counts)
    kept = _drop_nan(values, name, f"the {n} rows")
    alpha = 1.0 - confidence
    low, high = np.quantile(kept, [alpha / 2, 1.0 - alpha / 2])
    below = (1.0 + np.count_nonzero(kept <= 0.0)) / (1.0 + kept.size)
    above = (1.0 + np.count_nonzero(kept >= 0.0)) / (1.0 + kept.size)
    left_out = (
        "" if kept.size == n_resamples else f" ({n_resamples - kept.size} NaN resamples left out)"
    )
    method = (
        f"paired percentile bootstrap of {name}(a) - {name}(b) over {n_resamples} resamples of the "
        f"{n} rows{left_out}; two-sided p-value by inverting the interval"
    )
    return PairedComparison(
        difference,
        ConfidenceInterval(float(low), float(high)),
        float(min(1.0, 2.0 * min(below, above))),
        name,
        n_resamples,
        method,
    )
