"""Evaluation metrics for selective classifiers: RC curve, AuRC and the SELE loss.

All functions take per-example losses ``loss`` (the loss of the classifier's
prediction, ``l(y_i, h(x_i))``) and uncertainties ``uncertainty`` (``s(x_i)``,
larger = more uncertain), and return Python floats or NumPy arrays.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
"""

import numpy as np

__all__ = [
    "rc_curve",
    "aurc",
    "risk_full",
    "sele_loss",
    "sele_proxy",
    "selective_risk_coverage",
]

_PROXY_BLOCK_ELEMENTS = 1 << 22  # bounds the memory of sele_proxy to ~32 MB


def _as_loss(loss):
    """Validate a 1-D array of finite non-negative losses; return it as float64."""
    loss = np.asarray(loss, dtype=np.float64)
    if loss.ndim != 1:
        raise ValueError(f"loss must be 1-D, got shape {loss.shape}")
    if loss.size == 0:
        raise ValueError("loss must contain at least one example, got shape (0,)")
    if not np.all(np.isfinite(loss)):
        raise ValueError(f"loss contains {np.count_nonzero(~np.isfinite(loss))} NaN or infinite value(s)")
    if np.any(loss < 0):
        raise ValueError(f"loss must be non-negative, got minimum {loss.min()!r}")
    return loss


def _as_loss_and_uncertainty(loss, uncertainty):
    """Validate a pair (loss, uncertainty) of equally long 1-D finite arrays."""
    loss = _as_loss(loss)
    uncertainty = np.asarray(uncertainty, dtype=np.float64)
    if uncertainty.ndim != 1:
        raise ValueError(f"uncertainty must be 1-D, got shape {uncertainty.shape}")
    if uncertainty.shape != loss.shape:
        raise ValueError(
            f"loss and uncertainty must have the same length, got shapes {loss.shape} and {uncertainty.shape}"
        )
    if not np.all(np.isfinite(uncertainty)):
        raise ValueError(
            f"uncertainty contains {np.count_nonzero(~np.isfinite(uncertainty))} NaN or infinite value(s)"
        )
    return loss, uncertainty


def rc_curve(loss, uncertainty):
    """Risk-coverage curve of a selective classifier on a finite sample.

    Examples are sorted by ``uncertainty`` ascending, ties broken by example
    index (stable sort). With ``L(i)`` the sum of the first ``i`` sorted
    losses, the curve has points ``(i/n, L(i)/i)``, ``i = 1..n`` (section 2.4 of [1]).

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.

    Returns
    -------
    coverage : ndarray of shape (n,)
        ``i / n``.
    risk : ndarray of shape (n,)
        Selective risk ``L(i) / i``.

    Examples
    --------
    >>> cov, risk = rc_curve([0, 1, 0], [0.1, 0.9, 0.2])
    >>> risk.tolist()
    [0.0, 0.0, 0.3333333333333333]
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    order = np.argsort(uncertainty, kind="stable")
    counts = np.arange(1, loss.size + 1, dtype=np.float64)
    risk = np.cumsum(loss[order]) / counts
    return counts / loss.size, risk


def aurc(loss, uncertainty):
    """Area under the risk-coverage curve.

    Implements eq. (27) of [1]: ``AuRC = (1/n) sum_i L(i)/i`` with examples
    sorted by uncertainty ascending, ties broken by example index.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.

    Returns
    -------
    float

    Examples
    --------
    >>> aurc([0, 0, 1], [0, 1, 2])  # (0 + 0 + 1/3) / 3
    0.1111111111111111
    """
    _, risk = rc_curve(loss, uncertainty)
    return float(np.mean(risk))


def risk_full(loss):
    """Risk of the non-selective classifier (coverage 1), ``L(n)/n``.

    Parameters
    ----------
    loss : array-like of shape (n,)

    Returns
    -------
    float
    """
    return float(np.mean(_as_loss(loss)))


def sele_loss(loss, uncertainty):
    """Empirical SELE loss.

    Implements eq. (29) of [1]: ``sele = 1/n^2 sum_i sum_j l_i [s_i <= s_j]``,
    i.e. each loss weighted by how many examples are at least as uncertain.
    Computed exactly (ties included) in O(n log n) by binary search.

    Parameters
    ----------
    loss : array-like of shape (n,)
    uncertainty : array-like of shape (n,)

    Returns
    -------
    float

    Notes
    -----
    For distinct scores ``sele <= AuRC`` (with ties it can fail: tied examples all
    count as "at least as uncertain"). The upper bound ``AuRC < 2 sele`` of
    Theorem 8 of [1] holds when the (distinct) scores sort the losses
    non-decreasingly, the hypothesis of Lemma 15 used in its proof; it fails
    for adversarial scores, e.g. a single unit loss on the least uncertain of
    ``n`` examples gives ``AuRC / sele = H_n`` (the harmonic number, > 2 for n >= 4).
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
    loss : array-like of shape (n,)
    uncertainty : array-like of shape (n,)

    Returns
    -------
    float
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


def selective_risk_coverage(loss, uncertainty, threshold):
    """Selective risk and coverage when accepting examples with ``s <= threshold``.

    Parameters
    ----------
    loss : array-like of shape (n,)
    uncertainty : array-like of shape (n,)
    threshold : float
        Examples with ``uncertainty <= threshold`` are accepted.

    Returns
    -------
    risk : float
        Mean loss over the accepted examples; 0.0 when nothing is accepted
        (an empty acceptance set incurs no loss).
    coverage : float
        Fraction of accepted examples.
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    accepted = uncertainty <= threshold
    n_accepted = int(np.count_nonzero(accepted))
    risk = float(loss[accepted].sum() / n_accepted) if n_accepted else 0.0
    return risk, n_accepted / loss.size
