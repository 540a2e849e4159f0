"""The areas of a sample sorted once and evaluated under multiplicity weights, one row per resample.

:class:`_Sample` and the ``*_rows`` kernels are the single code path of the risk-coverage
metrics (:mod:`._risk_coverage`), of :func:`rejectopt.metrics.bootstrap_ci`'s blocks of resamples
and of :func:`rejectopt.metrics.compare_scores`: the original sample is the weight row ``w = 1``.
"""

import numpy as np

from ._losses import _as_loss_and_uncertainty


class _Sample:
    """A validated sample sorted once, evaluated under multiplicity weights (one row per resample).

    Weight row ``w`` (non-negative integers summing to ``n``): example ``j`` occurs ``w[j]``
    times (original: ``w = 1``). The stable sort by uncertainty makes a resample in index order
    sort alike. Metrics read *groups* of consecutive sorted examples (single examples, tie
    groups, or examples sorted by loss for the oracle) via weighted counts ``M`` and loss
    sums ``S``, shape (B, G).
    """

    def __init__(self, loss, uncertainty):
        self.n = loss.size
        self.order_u = np.argsort(uncertainty, kind="stable")
        self.loss_u = loss[self.order_u]
        u_sorted = uncertainty[self.order_u]
        self.tie_starts = np.flatnonzero(np.concatenate([[True], u_sorted[1:] != u_sorted[:-1]]))
        self.order_loss = np.argsort(loss, kind="stable")
        self.loss_sorted = loss[self.order_loss]

    def groups(self, weights, by):
        """Weighted counts, loss sums and mean losses of the groups ``by`` = "example", "tie" or "oracle".

        The mean of an empty group is its example's loss (any finite value would do).
        """
        if by == "oracle":
            counts = weights[:, self.order_loss]
            return counts, counts * self.loss_sorted, self.loss_sorted
        counts = weights[:, self.order_u]
        sums = counts * self.loss_u
        if by == "tie" and self.tie_starts.size < self.n:
            counts = np.add.reduceat(counts, self.tie_starts, axis=1)
            sums = np.add.reduceat(sums, self.tie_starts, axis=1)
            return counts, sums, np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        return counts, sums, self.loss_u


def _aurc_of_groups(counts, sums, means, n):
    """Eq. (27) with ``L(k)`` replaced by its linear interpolation inside each group.

    A group of ``M`` examples, mean loss ``mu``, after ``N`` examples with loss sum ``C`` has
    ``Lbar(k) = C + (k - N) mu`` (expected ``L(k)`` under a random order inside; exact for
    equal losses), so it contributes, with ``dH = H(N + M) - H(N)`` (harmonic numbers)::

        sum_{j=1..M} (C + j mu) / (N + j) = (C - mu N) dH + M mu.

    A single example's ``dH = 1 / (N + 1)`` is computed directly (no cancellation).
    """
    after = np.cumsum(counts, axis=1)
    before = after - counts
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
    increment = np.where(
        counts == 1,
        1.0 / np.maximum(after, 1.0),
        harmonic[after.astype(np.intp)] - harmonic[before.astype(np.intp)],
    )
    cum_before = np.cumsum(sums, axis=1) - sums
    return np.sum((cum_before - means * before) * increment + sums, axis=1) / n


def _augrc_of_groups(counts, sums, means, n):
    """Trapezoidal area under ``(k/n, Lbar(k)/n)``: ``1/n^2 sum_g S_g (n - N_g - M_g/2)``."""
    return np.sum(sums * (n - np.cumsum(counts, axis=1) + 0.5 * counts), axis=1) / (n * n)


def _aurc_rows(sample, weights, ties="index"):
    return _aurc_of_groups(
        *sample.groups(weights, "tie" if ties == "average" else "example"), sample.n
    )


def _augrc_rows(sample, weights):
    return _augrc_of_groups(*sample.groups(weights, "tie"), sample.n)


def _eaurc_rows(sample, weights, ties="index"):
    oracle = _aurc_of_groups(*sample.groups(weights, "oracle"), sample.n)
    return (
        _aurc_of_groups(
            *sample.groups(weights, "tie" if ties == "average" else "example"), sample.n
        )
        - oracle
    )


def _eaugrc_rows(sample, weights):
    oracle = _augrc_of_groups(*sample.groups(weights, "oracle"), sample.n)
    return _augrc_of_groups(*sample.groups(weights, "tie"), sample.n) - oracle


def _risk_at_coverage_rows(sample, weights, coverage):
    counts, sums, means = sample.groups(weights, "tie")
    n = sample.n
    t = coverage * n
    after = np.cumsum(counts, axis=1)
    g = np.minimum(np.sum(after < t, axis=1), counts.shape[1] - 1)[
        :, None
    ]  # group holding position t
    before = np.take_along_axis(after - counts, g, axis=1)[:, 0]
    cum_before = np.take_along_axis(np.cumsum(sums, axis=1) - sums, g, axis=1)[:, 0]
    mean = np.take_along_axis(np.broadcast_to(means, counts.shape), g, axis=1)[:, 0]
    return (cum_before + (t - before) * mean) / t


def _coverage_at_risk_rows(sample, weights, risk):
    counts, sums, _ = sample.groups(weights, "tie")
    n = sample.n
    n_rows, n_groups = counts.shape
    ends = np.zeros(
        (n_rows, n_groups + 1)
    )  # examples accepted at the end of group g (0 before any)
    np.cumsum(counts, axis=1, out=ends[:, 1:])
    cum = np.zeros((n_rows, n_groups + 1))
    np.cumsum(sums, axis=1, out=cum[:, 1:])
    excess = cum - risk * ends  # D: <= 0 iff the selective risk is <= risk
    tolerance = 1e-10 * (cum[:, -1:] + risk * n)  # as selective.fit_bounded_improvement
    last = n_groups - np.argmax((excess <= tolerance)[:, ::-1], axis=1)  # last feasible group end
    rows = np.arange(n_rows)
    inside = last < n_groups
    nxt = np.minimum(last + 1, n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.clip(-excess[rows, last] / (excess[rows, nxt] - excess[rows, last]), 0.0, 1.0)
    boundary = counts[
        rows, np.minimum(last, n_groups - 1)
    ]  # size of the next group (group index = last)
    return (ends[rows, last] + np.where(inside, fraction * boundary, 0.0)) / n


def _one_row(rows_function, loss, uncertainty, **kwargs):
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    sample = _Sample(loss, uncertainty)
    return float(rows_function(sample, np.ones((1, loss.size)), **kwargs)[0])
