"""Internal: a paired test of two uncertainty scores on the same test rows (paired bootstrap)."""

from __future__ import annotations

import numpy as np

from .._checks import check_confidence
from ._bands import ConfidenceInterval, _Result
from ._bootstrap import _BOOTSTRAP_BLOCK_ELEMENTS, _resolve_metric
from ._losses import _as_loss_and_uncertainty
from ._risk_coverage import _Sample


class PairedComparison(_Result):
    """The result of :func:`compare_scores`; fields readable as attributes and as keys."""

    _fields = ("difference", "ci", "p_value", "metric", "n_resamples", "method")

    def __init__(self, difference, ci, p_value, metric, n_resamples, method):
        self.difference, self.ci, self.p_value = difference, ci, p_value
        self.metric, self.n_resamples, self.method = metric, n_resamples, method


def _resample_weights(rng, n, n_resamples):
    """Blocks of multiplicity rows (one per resample of the ``n`` rows with replacement)."""
    block = max(1, _BOOTSTRAP_BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        index = rng.integers(0, n, size=(rows, n), dtype=np.intp)
        offsets = (np.arange(rows, dtype=np.intp) * n)[:, None]
        yield start, np.bincount((index + offsets).ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def compare_scores(loss, uncertainty_a, uncertainty_b, metric="aurc", n_resamples=2000, random_state=0,
                   confidence=0.95):
    """Paired test of two uncertainty scores of the same predictions on the same test rows.

    Paired percentile bootstrap: each resample draws the ``n`` rows with replacement and
    evaluates the metric of both scores on the *same* rows, so the difference's sampling
    variation excludes the rows' shared difficulty (a paired test; two separate intervals
    that overlap say little). ``ci`` is the percentile interval of the resampled differences;
    ``p_value`` the two-sided p-value of "no difference" by inverting it,
    ``min(1, 2 min(P*(d <= 0), P*(d >= 0)))`` with ``(1 + count) / (1 + B)`` proportions, so
    ``p_value < 1 - confidence`` whenever ``ci`` excludes 0 (up to the quantiles' interpolation).

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
    function, rows_function, kwargs = _resolve_metric(metric)
    loss, uncertainty_a = _as_loss_and_uncertainty(loss, uncertainty_a)
    _, uncertainty_b = _as_loss_and_uncertainty(loss, uncertainty_b)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    n_resamples = int(n_resamples)
    confidence = check_confidence(confidence)
    difference = float(function(loss, uncertainty_a) - function(loss, uncertainty_b))
    rng = np.random.default_rng(random_state)
    n = loss.size
    values = np.empty(n_resamples)
    if rows_function is not None:
        sample_a, sample_b = _Sample(loss, uncertainty_a), _Sample(loss, uncertainty_b)
        for start, weights in _resample_weights(rng, n, n_resamples):
            values[start:start + weights.shape[0]] = (rows_function(sample_a, weights, **kwargs)
                                                      - rows_function(sample_b, weights, **kwargs))
    else:
        index = np.sort(rng.integers(0, n, size=(n_resamples, n), dtype=np.intp), axis=1)
        values[:] = [function(loss[i], uncertainty_a[i]) - function(loss[i], uncertainty_b[i]) for i in index]
    alpha = 1.0 - confidence
    low, high = np.quantile(values, [alpha / 2, 1.0 - alpha / 2])
    below = (1.0 + np.count_nonzero(values <= 0.0)) / (1.0 + n_resamples)
    above = (1.0 + np.count_nonzero(values >= 0.0)) / (1.0 + n_resamples)
    name = metric if isinstance(metric, str) else getattr(function, "__name__", repr(function))
    method = (f"paired percentile bootstrap of {name}(a) - {name}(b) over {n_resamples} resamples of the "
              f"{n} rows; two-sided p-value by inverting the interval")
    return PairedComparison(difference, ConfidenceInterval(float(low), float(high)),
                            float(min(1.0, 2.0 * min(below, above))), name, n_resamples, method)

