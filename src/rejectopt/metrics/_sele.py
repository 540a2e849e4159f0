"""The SELE loss of [1] (eq. 29) and its smooth convex proxy (eq. 30).

[1] is listed in the references of :mod:`rejectopt.metrics`.
"""

import numpy as np

from ._losses import _as_loss_and_uncertainty

_PROXY_BLOCK_ELEMENTS = 1 << 22  # bounds the memory of sele_proxy to ~32 MB


def sele_loss(loss, uncertainty):
    """Empirical SELE loss.

    Implements eq. (29) of [1]: ``sele = 1/n^2 sum_i sum_j l_i [s_i <= s_j]``,
    i.e. each loss weighted by how many examples are at least as uncertain.
    Computed exactly (ties included) in O(n log n) by binary search.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        Non-negative losses and their uncertainty scores (larger = more uncertain).

    Returns
    -------
    float
        In loss units.

    Notes
    -----
    For distinct scores ``sele <= AuRC`` (with ties it can fail: tied examples all
    count as "at least as uncertain"). The upper bound ``AuRC < 2 sele`` of
    Theorem 8 of [1] holds when the (distinct) scores sort the losses
    non-decreasingly, the hypothesis of Lemma 15 used in its proof; it fails
    for adversarial scores, e.g. a single unit loss on the least uncertain of
    ``n`` examples gives ``AuRC / sele = H_n`` (the harmonic number, > 2 for n >= 4); the
    evidence is in ``docs/papers.md``.

    Examples
    --------
    >>> sele_loss([0, 0, 1], [0, 1, 2])  # the error is the most uncertain: 1 * 1 / 9
    0.1111111111111111
    >>> sele_loss([1, 0, 0], [0, 1, 2])  # the least uncertain: 1 * 3 / 9
    0.3333333333333333
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    n = loss.size
    sorted_scores = np.sort(uncertainty)
    n_at_least_as_uncertain = n - np.searchsorted(sorted_scores, uncertainty, side="left")
    return float(np.dot(loss, n_at_least_as_uncertain) / n**2)


def sele_proxy(loss, uncertainty):
    """Smooth convex proxy of the SELE loss.

    Implements eq. (30) of [1]:
    ``psi = 1/n^2 sum_i sum_j l_i log(1 + exp(s_j - s_i))``. O(n^2) time,
    computed in row blocks so memory stays bounded.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        As in :func:`sele_loss`.

    Returns
    -------
    float
        In loss units.

    Examples
    --------
    >>> round(sele_proxy([0, 0, 1], [0, 1, 2]), 4)  # the error is the most uncertain
    0.1259
    >>> round(sele_proxy([1, 0, 0], [0, 1, 2]), 4)  # the error is the least uncertain
    0.4593
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    n = loss.size
    block = max(1, _PROXY_BLOCK_ELEMENTS // n)
    total = 0.0
    for start in range(0, n, block):
        rows = slice(start, start + block)
        diff = uncertainty[None, :] - uncertainty[rows, None]
        total += float(np.dot(loss[rows], np.logaddexp(0.0, diff).sum(axis=1)))
    return total / n**2
