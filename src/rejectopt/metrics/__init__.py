"""Evaluation metrics for selective classifiers: RC curve, AuRC, AUGRC, excess areas, SELE loss, bootstrap.

All functions take per-example losses ``loss`` (the loss of the classifier's
prediction, ``l(y_i, h(x_i))``) and uncertainties ``uncertainty`` (``s(x_i)``,
larger = more uncertain), and return Python floats or NumPy arrays. Results are
in loss units (no x1000 or percent rescaling).

Bad input (NaN or infinite values, negative losses, length mismatch, empty
arrays) raises ValueError naming the argument.

Conventions. The risk-coverage metrics (:func:`aurc`, :func:`augrc`, :func:`eaurc`,
:func:`eaugrc`, :func:`risk_at_coverage`, :func:`coverage_at_risk`) take
``convention`` (:data:`CONVENTIONS`): ``"paper"`` (the default, eq. (27) of [1] and this
module's definitions) or the definition of another library -- ``"fd-shifts"``,
``"fd-shifts-legacy"``, ``"geifman"``, ``"torch-uncertainty"``, ``"mapie"`` -- computed as that
library computes it, tie rule and scale included (in loss units: fd-shifts' display factor
1000 is left out). A metric a convention does not define raises ValueError naming both.
Where a convention depends on the order of tied scores, ``ties="index"`` takes the input
order and ``ties="average"`` the expectation over random orders of the tied examples. The
definitions side by side: ``docs/guide/metric_conventions.md``; the libraries' own values, which
the tests compare with to 1e-12: ``tests/data/metric_conventions_golden.json``.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
   Classifiers. JMLR 24(11):1-49, 2023.
.. [2] J. Traub, T. J. Bungert, C. T. Lueth, M. Baumgartner, K. H. Maier-Hein,
   L. Maier-Hein, P. F. Jaeger. Overcoming Common Flaws in the Evaluation of
   Selective Classification Systems. NeurIPS 2024.
"""

import functools
import math
from typing import Callable, NamedTuple

import numpy as np

from ..selective import SelectionFunction, empirical_risk_coverage
from . import _conventions
from ._conventions import CONVENTIONS

__all__ = [
    "CONVENTIONS",
    "LOSSES",
    "TASK_LOSS",
    "per_example_loss",
    "task_loss",
    "rc_curve",
    "aurc",
    "augrc",
    "eaurc",
    "eaugrc",
    "risk_at_coverage",
    "coverage_at_risk",
    "risk_full",
    "sele_loss",
    "sele_proxy",
    "selective_risk_coverage",
    "bootstrap_ci",
    "ConfidenceInterval",
    "reject_confusion_matrix",
    "selective_outcome",
    "Metric",
    "METRICS",
    "get_metric",
]

_PROXY_BLOCK_ELEMENTS = 1 << 22  # bounds the memory of sele_proxy to ~32 MB


# --------------------------------------------------------------------------------------------
# Per-example losses: the one home of l(y, h(x)) for the pipeline, the CLI and the estimator
# --------------------------------------------------------------------------------------------
#: The per-example losses by name: ``zero_one`` = ``100 [y != y']`` (the paper's 0/100 loss, so
#: risks read in percent, Section 5.2) and ``mae`` = ``|y - y'|`` (ordinal labels, Table 4).
LOSSES = ("zero_one", "mae")

#: The loss of each task of the benchmark (Section 5.2): classification 0/100, ordinal MAE.
TASK_LOSS = {"classification": "zero_one", "ordinal": "mae"}


def per_example_loss(name, y_true, y_pred):
    """The loss ``name`` (:data:`LOSSES`) of each prediction, as float64.

    ``zero_one`` compares labels of any type; ``mae`` needs numeric labels.

    Parameters
    ----------
    name : {"zero_one", "mae"}
        The loss: ``100 [y != y']`` (risks read in percent) or ``|y - y'|``.
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,)
        Predicted labels, of the same shape as ``y_true``.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction.

    Raises
    ------
    ValueError
        An unknown loss name, or labels of different lengths.

    Examples
    --------
    >>> per_example_loss("zero_one", [0, 1, 2], [0, 2, 2]).tolist()
    [0.0, 100.0, 0.0]
    >>> per_example_loss("mae", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}: expected one of {', '.join(map(repr, LOSSES))}")
    if y_true.shape != y_pred.shape:
        raise ValueError(f"labels of shape {y_true.shape} and predictions of shape {y_pred.shape} differ")
    if name == "zero_one":
        return 100.0 * (y_true != y_pred)
    return np.abs(y_true - y_pred).astype(float)


def task_loss(task, y_true, y_pred):
    """Loss of each prediction for a benchmark ``task`` (:data:`TASK_LOSS`): 0/100 or absolute error.

    Parameters
    ----------
    task : {"classification", "ordinal"}
        The benchmark task; its loss is ``TASK_LOSS[task]`` (Section 5.2 of [1]).
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,)
        Predicted labels, of the same shape as ``y_true``.

    Returns
    -------
    ndarray of float64, shape (n,)
        The loss of each prediction, as :func:`per_example_loss` computes it.

    Raises
    ------
    ValueError
        An unknown task, or labels of different lengths.

    Examples
    --------
    >>> task_loss("classification", ["a", "b"], ["a", "a"]).tolist()
    [0.0, 100.0]
    >>> task_loss("ordinal", [0, 1, 3], [0, 2, 1]).tolist()
    [0.0, 1.0, 2.0]
    """
    if task not in TASK_LOSS:
        raise ValueError(f"unknown task {task!r}: expected 'classification' or 'ordinal'")
    return per_example_loss(TASK_LOSS[task], y_true, y_pred)


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


def aurc(loss, uncertainty, ties="index", convention="paper"):
    """Area under the risk-coverage curve.

    Implements eq. (27) of [1]: ``AuRC = (1/n) sum_i L(i)/i`` with examples
    sorted by uncertainty ascending and ``L(i)`` the sum of the first ``i``
    sorted losses.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    ties : {"index", "average"}, default="index"
        How examples with equal uncertainty are ordered.

        * ``"index"``: by example index (stable sort), the paper's convention and
          the historical behaviour of this function.
        * ``"average"``: the exact expectation of the AuRC over a uniformly random
          order inside every tie group. A tie group of ``m`` examples with loss sum
          ``S`` preceded by ``a`` examples contributes
          ``sum_{j=1..m} (L(a) + j S/m) / (a + j)``: the expected loss of each of
          its positions is the group mean ``S/m``, and the AuRC is linear in the
          ``L(i)``. Invariant to the order of the examples.

        Both apply to the conventions that depend on the order of tied scores
        (``"torch-uncertainty"``, ``"geifman"``, ``"fd-shifts-legacy"``, ``"mapie"``),
        ``"index"`` as the library's sort made stable (its own unstable sort can order
        tied examples otherwise, by platform and array length); fd-shifts' AURC is
        invariant to the order.
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.

    Returns
    -------
    float
        The AuRC, in loss units.

    Examples
    --------
    >>> aurc([0, 0, 1], [0, 1, 2])  # (0 + 0 + 1/3) / 3
    0.1111111111111111
    >>> aurc([1, 0], [0, 0]), aurc([1, 0], [0, 0], ties="average")
    (0.75, 0.5)
    >>> aurc([0, 1, 0, 1], [-0.9, -0.8, -0.7, -0.1], convention="torch-uncertainty")
    0.3611111111111111
    """
    _check_choice(ties, "ties", ("index", "average"))
    if convention != "paper":
        return _by_convention("aurc", loss, uncertainty, convention, ties)
    if ties == "average":
        return _one_row(_aurc_rows, loss, uncertainty, ties="average")
    _, risk = rc_curve(loss, uncertainty)
    return float(np.mean(risk))


def risk_full(loss):
    """Risk of the non-selective classifier (coverage 1), ``L(n)/n``.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.

    Returns
    -------
    float
        The mean loss, in loss units.

    Examples
    --------
    >>> risk_full([0, 100, 0, 0])  # one error in four under the 0/100 loss: 25 %
    25.0
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
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.

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
    >>> loss, score = [1, 0, 0, 0], [0, 1, 2, 3]  # the error is the least uncertain
    >>> round(aurc(loss, score) / sele_loss(loss, score), 4)  # H_4 = 25/12 > 2
    2.0833
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
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.

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


def selective_risk_coverage(loss, uncertainty, threshold):
    """Selective risk and coverage when accepting examples with ``s <= threshold``.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    threshold : float
        Examples with ``uncertainty <= threshold`` are accepted.

    Returns
    -------
    risk : float
        Mean loss over the accepted examples; NaN when nothing is accepted
        (undefined, as everywhere in rejectopt).
    coverage : float
        Fraction of accepted examples.

    Notes
    -----
    The deterministic case of :func:`rejectopt.selective.empirical_risk_coverage`
    (the one home of selective risk and coverage), with the selection function
    ``SelectionFunction(threshold, 1.0)``.

    Examples
    --------
    >>> risk, coverage = selective_risk_coverage([0, 100, 0, 100], [0.1, 0.2, 0.3, 0.9], 0.3)
    >>> round(risk, 4), coverage  # one error among the three accepted
    (33.3333, 0.75)
    >>> selective_risk_coverage([0, 100], [0.5, 0.9], 0.1)  # nothing accepted
    (nan, 0.0)
    """
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold must not be NaN")
    return empirical_risk_coverage(loss, uncertainty, SelectionFunction(threshold, 1.0))


# --------------------------------------------------------------------------------------------
# Generalized risk, excess areas, operating points
# --------------------------------------------------------------------------------------------
_BOOTSTRAP_BLOCK_ELEMENTS = 1 << 21  # resampled values per block of bootstrap_ci (a few 16 MB arrays)


def _check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


def _check_coverage(coverage):
    try:
        coverage = float(coverage)
    except (TypeError, ValueError):
        raise ValueError(f"coverage must be a number in (0, 1], got {coverage!r}") from None
    if not (0.0 < coverage <= 1.0):
        raise ValueError(f"coverage must lie in (0, 1], got {coverage!r}")
    return coverage


def _check_risk(risk):
    try:
        risk = float(risk)
    except (TypeError, ValueError):
        raise ValueError(f"risk must be a finite number >= 0 (loss units), got {risk!r}") from None
    if not (math.isfinite(risk) and risk >= 0.0):
        raise ValueError(f"risk must be a finite number >= 0 (loss units), got {risk!r}")
    return risk


class _Sample:
    """A validated sample sorted once, evaluated under multiplicity weights (one row per resample).

    A weight row ``w`` (non-negative integers summing to ``n``) stands for the sample in which
    example ``j`` occurs ``w[j]`` times; the original sample is ``w = 1``. Examples are sorted
    by uncertainty ascending, ties by index (stable), so a resample listed in index order
    sorts the same way. Every metric is a function of *groups* of consecutive sorted
    examples -- single examples (index tie-breaking), tie groups of equal uncertainty, or
    single examples sorted by loss (oracle) -- through their weighted counts ``M`` and loss
    sums ``S`` (arrays of shape (B, G)).
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

    Position ``k`` of a group with ``N`` examples before it, loss sum ``C`` before it, ``M``
    examples and mean loss ``mu`` has ``Lbar(k) = C + (k - N) mu`` (the expected ``L(k)``
    under a random order inside the group; the exact ``L(k)`` when its examples have equal
    losses), so the group contributes, with ``dH = H(N + M) - H(N)`` (harmonic numbers)::

        sum_{j=1..M} (C + j mu) / (N + j) = (C - mu N) dH + M mu.

    ``dH`` of a single example is ``1 / (N + 1)``, computed as such (no cancellation).
    """
    after = np.cumsum(counts, axis=1)
    before = after - counts
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
    increment = np.where(counts == 1, 1.0 / np.maximum(after, 1.0),
                         harmonic[after.astype(np.intp)] - harmonic[before.astype(np.intp)])
    cum_before = np.cumsum(sums, axis=1) - sums
    return np.sum((cum_before - means * before) * increment + sums, axis=1) / n


def _augrc_of_groups(counts, sums, means, n):
    """Trapezoidal area under ``(k/n, Lbar(k)/n)``: ``1/n^2 sum_g S_g (n - N_g - M_g/2)``."""
    return np.sum(sums * (n - np.cumsum(counts, axis=1) + 0.5 * counts), axis=1) / (n * n)


def _aurc_rows(sample, weights, ties="index"):
    return _aurc_of_groups(*sample.groups(weights, "tie" if ties == "average" else "example"), sample.n)


def _augrc_rows(sample, weights):
    return _augrc_of_groups(*sample.groups(weights, "tie"), sample.n)


def _eaurc_rows(sample, weights, ties="index"):
    oracle = _aurc_of_groups(*sample.groups(weights, "oracle"), sample.n)
    return _aurc_of_groups(*sample.groups(weights, "tie" if ties == "average" else "example"), sample.n) - oracle


def _eaugrc_rows(sample, weights):
    oracle = _augrc_of_groups(*sample.groups(weights, "oracle"), sample.n)
    return _augrc_of_groups(*sample.groups(weights, "tie"), sample.n) - oracle


def _risk_at_coverage_rows(sample, weights, coverage):
    counts, sums, means = sample.groups(weights, "tie")
    n = sample.n
    t = coverage * n
    after = np.cumsum(counts, axis=1)
    g = np.minimum(np.sum(after < t, axis=1), counts.shape[1] - 1)[:, None]  # group holding position t
    before = np.take_along_axis(after - counts, g, axis=1)[:, 0]
    cum_before = np.take_along_axis(np.cumsum(sums, axis=1) - sums, g, axis=1)[:, 0]
    mean = np.take_along_axis(np.broadcast_to(means, counts.shape), g, axis=1)[:, 0]
    return (cum_before + (t - before) * mean) / t


def _coverage_at_risk_rows(sample, weights, risk):
    counts, sums, _ = sample.groups(weights, "tie")
    n = sample.n
    n_rows, n_groups = counts.shape
    ends = np.zeros((n_rows, n_groups + 1))  # examples accepted at the end of group g (0 before any)
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
    boundary = counts[rows, np.minimum(last, n_groups - 1)]  # size of the next group (group index = last)
    return (ends[rows, last] + np.where(inside, fraction * boundary, 0.0)) / n


def _one_row(rows_function, loss, uncertainty, **kwargs):
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    sample = _Sample(loss, uncertainty)
    return float(rows_function(sample, np.ones((1, loss.size)), **kwargs)[0])


def _by_convention(metric, loss, uncertainty, convention, ties, **targets):
    """``metric`` under a library's ``convention`` (:mod:`rejectopt.metrics._conventions`)."""
    _check_choice(ties, "ties", ("index", "average"))
    _conventions.check(convention, metric)
    loss, uncertainty = _as_loss_and_uncertainty(loss, uncertainty)
    return float(_conventions.evaluate(metric, loss, uncertainty, convention, ties, **targets))


def augrc(loss, uncertainty, *, ties="index", convention="paper"):
    """Area under the generalized risk-coverage curve (AUGRC) of [2].

    The generalized risk at coverage ``k/n`` is ``L(k)/n``: the summed loss of the
    ``k`` accepted (least uncertain) examples divided by *all* ``n`` examples,
    i.e. the expected loss per input of accepting and being wrong. Conventions of
    the reference implementation of [2] (fd-shifts ``RiskCoverageStats.augrc``,
    with ``confids = -uncertainty`` and ``residuals = loss``):

    * examples are sorted by uncertainty ascending; a curve point is placed only at
      the end of each group of tied uncertainties, ``(k/n, L(k)/n)`` with ``k`` the
      number of examples whose uncertainty is <= the group's value, plus the origin
      ``(0, 0)``;
    * the area is the trapezoidal rule over these points (so a tie group is the
      straight line between its end points, the expectation over random
      tie-breaking);
    * the result is in loss units: fd-shifts' value divided by its display scale 1000.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    ties : {"index", "average"}, default="index"
        For conventions that depend on the order of tied scores (``"torch-uncertainty"``,
        ``"geifman"``, ``"fd-shifts-legacy"``, ``"mapie"``): ``"index"`` keeps the input order
        among equal uncertainties (the library's sort made stable; its own unstable sort
        can order them otherwise, by platform and array length), ``"average"`` gives the
        expectation over random orders inside each tie group (on the expected curve for a
        coverage at a risk). The paper's definition here and fd-shifts' are invariant to
        the order: ``ties`` changes nothing.
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring, fd-shifts' AUGRC) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.

    Returns
    -------
    float
        The AUGRC, in loss units.

    Notes
    -----
    Relation to the empirical SELE loss of eq. (29) of [1]
    (:func:`sele_loss`, ``sele = 1/n^2 sum_i sum_j l_i [s_i <= s_j]``). For distinct
    scores ``sele = (1/n) sum_{k=1..n} L(k)/n`` is the right Riemann sum of the
    generalized RC curve, and the trapezoidal rule removes half of the last step::

        AUGRC = sele - L(n) / (2 n^2),       L(n) = sum_i l_i.

    With ties, ``AUGRC = 1/n^2 sum_i l_i (#{j: s_j > s_i} + #{j: s_j = s_i} / 2)``, i.e.
    ``AUGRC = sele - 1/(2 n^2) sum_i l_i m_i`` with ``m_i`` the size of the tie group of
    example ``i`` (itself included). For 0/1 losses with error rate ``e`` the oracle
    ordering gives ``e^2 / 2`` and a constant score ``e / 2``.

    Examples
    --------
    >>> augrc([0, 1], [0.1, 0.9])  # points (0, 0), (1/2, 0), (1, 1/2)
    0.125
    >>> augrc([0, 1], [0.5, 0.5])  # one tie group: (0, 0), (1, 1/2)
    0.25
    """
    if convention != "paper":
        return _by_convention("augrc", loss, uncertainty, convention, ties)
    _check_choice(ties, "ties", ("index", "average"))
    return _one_row(_augrc_rows, loss, uncertainty)


def eaurc(loss, uncertainty, *, ties="index", convention="paper"):
    """Excess AuRC: ``aurc(loss, uncertainty)`` minus the AuRC of the oracle ordering.

    The oracle sorts the examples by loss ascending (eq. 27 of [1] with
    ``s = loss``; ties among equal losses do not matter). Ties in ``uncertainty``
    are resolved as ``ties`` says, as in :func:`aurc`. Always >= 0 (up to round-off): no
    ordering has a smaller ``L(i)`` at any ``i`` than the oracle. Other conventions subtract
    their own reference: Geifman's and fd-shifts' legacy code ``e + (1 - e) ln(1 - e)``
    (``e`` the mean loss, the continuous limit for 0/1 losses), fd-shifts the same for 0/1
    losses and its trapezoidal AURC of the sorted losses otherwise (so it can be < 0).

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    ties : {"index", "average"}, default="index"
        As in :func:`aurc` (``"average"``: the expected AuRC over random orders of the tied
        examples, minus the oracle's).
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.

    Returns
    -------
    float
        The excess AuRC, in loss units.

    Examples
    --------
    >>> eaurc([0, 1], [0.9, 0.1])  # aurc (1 + 1/2)/2 minus oracle (0 + 1/2)/2
    0.5
    """
    _check_choice(ties, "ties", ("index", "average"))
    if convention != "paper":
        return _by_convention("eaurc", loss, uncertainty, convention, ties)
    if ties == "average":
        return _one_row(_eaurc_rows, loss, uncertainty, ties="average")
    return _one_row(_eaurc_rows, loss, uncertainty)


def eaugrc(loss, uncertainty, *, ties="index", convention="paper"):
    """Excess AUGRC: ``augrc(loss, uncertainty)`` minus the AUGRC of the oracle ordering.

    The oracle sorts the examples by loss ascending (fd-shifts' ``augrc_optimal``;
    for 0/1 losses with error rate ``e`` it equals ``e^2 / 2``). Always >= 0 up to
    round-off. fd-shifts' convention takes the closed form ``e^2 / 2`` for 0/1 losses.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    ties : {"index", "average"}, default="index"
        For conventions that depend on the order of tied scores (``"torch-uncertainty"``,
        ``"geifman"``, ``"fd-shifts-legacy"``, ``"mapie"``): ``"index"`` keeps the input order
        among equal uncertainties (the library's sort made stable; its own unstable sort
        can order them otherwise, by platform and array length), ``"average"`` gives the
        expectation over random orders inside each tie group (on the expected curve for a
        coverage at a risk). The paper's definition here and fd-shifts' are invariant to
        the order: ``ties`` changes nothing.
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.

    Returns
    -------
    float
        The excess AUGRC, in loss units.

    Examples
    --------
    >>> eaugrc([0, 1], [0.9, 0.1])  # 3/8 - 1/8
    0.25
    """
    if convention != "paper":
        return _by_convention("eaugrc", loss, uncertainty, convention, ties)
    _check_choice(ties, "ties", ("index", "average"))
    return _one_row(_eaugrc_rows, loss, uncertainty)


def risk_at_coverage(loss, uncertainty, coverage, *, ties="index", convention="paper"):
    """Selective risk at an exact coverage, ties resolved as the paper's selection function.

    Definition: the expected selective risk (ratio of expectations, eqs. 5-6 of [1])
    of the bounded-abstention selection function with target coverage ``omega``
    (eqs. 22-24): accept every example with ``s < beta``, the boundary tie group
    ``s == beta`` with the probability ``kappa`` that makes the expected coverage
    exactly ``omega``, reject the rest. With ``Lbar`` the piecewise-linear
    interpolation of ``k -> L(k)`` between the ends of the tie groups (and ``(0, 0)``)::

        risk_at_coverage = Lbar(omega n) / (omega n).

    It is the value of :func:`rejectopt.selective.empirical_risk_coverage` for
    :func:`rejectopt.selective.fit_bounded_abstention` fitted on the same sample.
    For distinct scores and an integer ``k = omega n`` it is ``L(k)/k``, the point
    of :func:`rc_curve` at coverage ``k/n``. Invariant to the order of the examples.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    coverage : float
        Target coverage ``omega`` in (0, 1].
    ties : {"index", "average"}, default="index"
        For conventions that depend on the order of tied scores (``"torch-uncertainty"``,
        ``"geifman"``, ``"fd-shifts-legacy"``, ``"mapie"``): ``"index"`` keeps the input order
        among equal uncertainties (the library's sort made stable; its own unstable sort
        can order them otherwise, by platform and array length), ``"average"`` gives the
        expectation over random orders inside each tie group (on the expected curve for a
        coverage at a risk). The paper's definition here and fd-shifts' are invariant to
        the order: ``ties`` changes nothing.
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.
        fd-shifts: the lowest selective risk among its working points (points whose risk
        is below every risk at a higher coverage) of coverage >= ``coverage``;
        torch-uncertainty: the selective risk of the ``ceil(n coverage)`` most confident.

    Returns
    -------
    float
        In loss units.

    Examples
    --------
    >>> risk_at_coverage([0, 1, 1, 0], [0, 1, 1, 2], 0.5)  # 0 + half of the tie group (1, 1)
    0.5
    """
    coverage = _check_coverage(coverage)
    if convention != "paper":
        return _by_convention("risk_at_coverage", loss, uncertainty, convention, ties, coverage=coverage)
    _check_choice(ties, "ties", ("index", "average"))
    return _one_row(_risk_at_coverage_rows, loss, uncertainty, coverage=coverage)


def coverage_at_risk(loss, uncertainty, risk, *, ties="index", convention="paper"):
    """Largest coverage whose selective risk stays <= ``risk``, ties resolved as the paper's rule.

    Definition: the expected coverage of the bounded-improvement selection function
    with target risk ``lambda`` (Theorem 3 of [1], eqs. 14-16, empirical version
    :func:`rejectopt.selective.fit_bounded_improvement`): the largest
    ``omega in [0, 1]`` with ``Lbar(omega n) <= lambda omega n``, where ``Lbar`` is
    the piecewise-linear interpolation of ``k -> L(k)`` between the ends of the tie
    groups. Inside the boundary tie group the coverage is fractional (the
    acceptance probability of eq. 16). A relative tolerance of 1e-10, as in
    ``fit_bounded_improvement``, absorbs round-off at exact equality.

    Unlike ``fit_bounded_improvement``, an unreachable target is not an error: the
    result is 0.0 when even the least uncertain tie group has a mean loss above
    ``risk``. Invariant to the order of the examples.

    Parameters
    ----------
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
    risk : float
        Target selective risk ``lambda >= 0``, in loss units.
    ties : {"index", "average"}, default="index"
        For conventions that depend on the order of tied scores (``"torch-uncertainty"``,
        ``"geifman"``, ``"fd-shifts-legacy"``, ``"mapie"``): ``"index"`` keeps the input order
        among equal uncertainties (the library's sort made stable; its own unstable sort
        can order them otherwise, by platform and array length), ``"average"`` gives the
        expectation over random orders inside each tie group (on the expected curve for a
        coverage at a risk). The paper's definition here and fd-shifts' are invariant to
        the order: ``ties`` changes nothing.
    convention : str, default="paper"
        Whose definition (:data:`CONVENTIONS`; ``docs/guide/metric_conventions.md``): ``"paper"``
        (this docstring) or a library's, computed as the library does, in loss units.
        ValueError when the convention does not define this metric.
        fd-shifts: the largest coverage among its working points with risk <= ``risk``
        (ValueError when there is none, where fd-shifts fails too); torch-uncertainty: the
        largest ``k/n`` whose selective risk of the ``k`` most confident is <= ``risk``
        (NaN when there is none, as the library).

    Returns
    -------
    float
        Coverage in [0, 1].

    Examples
    --------
    >>> coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.5)  # 4 accepted: mean loss 0.5
    1.0
    >>> coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.25)  # 2 + 2/3 accepted
    0.6666666666666666
    """
    risk = _check_risk(risk)
    if convention != "paper":
        return _by_convention("coverage_at_risk", loss, uncertainty, convention, ties, risk=risk)
    _check_choice(ties, "ties", ("index", "average"))
    return _one_row(_coverage_at_risk_rows, loss, uncertainty, risk=risk)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
class Metric(NamedTuple):
    """A registered metric: ``function(loss, uncertainty) -> float``, its display label and meaning.

    Parameters
    ----------
    function : callable
        ``function(loss, uncertainty) -> float``, in loss units, lower is better.
    label : str
        The name tables and figures show, e.g. ``"AuRC"``.
    description : str
        One line saying what the metric measures and where it is defined.

    Examples
    --------
    >>> metric = METRICS["aurc"]
    >>> metric.label, metric.function([0, 0, 1], [0, 1, 2])
    ('AuRC', 0.1111111111111111)
    """

    function: Callable
    label: str
    description: str


#: Metrics of ``(loss, uncertainty)`` by name; all are areas in loss units, lower is better.
METRICS = {
    "aurc": Metric(aurc, "AuRC", "area under the risk-coverage curve (eq. 27 of Franc et al. 2023)"),
    "augrc": Metric(augrc, "AUGRC", "area under the generalized risk-coverage curve (Traub et al. 2024)"),
    "eaurc": Metric(eaurc, "E-AuRC", "AuRC minus the AuRC of the oracle ordering"),
    "eaugrc": Metric(eaugrc, "E-AUGRC", "AUGRC minus the AUGRC of the oracle ordering"),
}


def get_metric(name):
    """The metric function registered under ``name`` in :data:`METRICS`.

    Parameters
    ----------
    name : str or callable
        A key of :data:`METRICS`; a callable is returned unchanged.

    Returns
    -------
    callable
        ``function(loss, uncertainty) -> float``.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid names.

    Examples
    --------
    >>> get_metric("augrc") is augrc
    True
    """
    if callable(name) and not isinstance(name, str):
        return name
    if isinstance(name, str) and name in METRICS:
        return METRICS[name].function
    raise ValueError(f"{name!r} is not a valid metric name; valid names are {', '.join(map(repr, METRICS))}")


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------
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
    >>> loss, score = [0, 0, 1, 0, 1, 0, 0, 1], [0.1, 0.2, 0.9, 0.3, 0.5, 0.4, 0.2, 0.8]
    >>> ci = bootstrap_ci("aurc", loss, score, n_resamples=200, random_state=0)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0156, 0.4455)
    >>> low, high = ci
    """

    low: float
    high: float


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
    loss : array-like of shape (n,)
        Non-negative losses of the classifier's predictions.
    uncertainty : array-like of shape (n,)
        Uncertainty scores, larger = more uncertain.
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
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise ValueError(f"level must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
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


# --------------------------------------------------------------------------------------------
# Confusion matrix of a selective classifier
# --------------------------------------------------------------------------------------------
def _as_label_array(values, name):
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must contain at least one example, got shape (0,)")
    if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains {np.count_nonzero(~np.isfinite(array))} NaN or infinite value(s)")
    if array.dtype.kind == "O":
        bad = [i for i, v in enumerate(array.tolist()) if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            raise ValueError(f"{name} contains {len(bad)} NaN or infinite value(s)")
    return array


def reject_confusion_matrix(y_true, y_pred, rejected):
    """Counts of accepted/rejected x correct/wrong predictions of a selective classifier.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels.
    y_pred : array-like of shape (n,)
        Predictions of the underlying classifier ``h(x)`` for *every* example,
        including the rejected ones (not the reject label).
    rejected : array-like of bool of shape (n,)
        True where the selective classifier abstained (0/1 integers are accepted).

    Returns
    -------
    ndarray of int64, shape (2, 2)
        Rows: accepted, rejected; columns: correct, wrong::

            [[accepted-correct, accepted-wrong],
             [rejected-correct, rejected-wrong]]

        So ``m[0].sum() / m.sum()`` is the coverage, ``m[0, 1] / m[0].sum()`` the
        selective 0/1 risk and ``m[1, 0]`` the correct predictions thrown away.

    Examples
    --------
    >>> reject_confusion_matrix([0, 1, 1, 0], [0, 1, 0, 1], [False, False, True, False]).tolist()
    [[2, 1], [0, 1]]
    """
    y_true = _as_label_array(y_true, "y_true")
    y_pred = _as_label_array(y_pred, "y_pred")
    rejected = np.asarray(rejected)
    if rejected.ndim != 1:
        raise ValueError(f"rejected must be 1-D, got shape {rejected.shape}")
    if not (y_true.shape == y_pred.shape == rejected.shape):
        raise ValueError(
            f"y_true, y_pred and rejected must have the same length, got shapes {y_true.shape}, "
            f"{y_pred.shape} and {rejected.shape}"
        )
    if rejected.dtype != bool:
        if rejected.dtype.kind not in "biuf" or not np.all(np.isin(rejected, (0, 1))):
            raise ValueError("rejected must be boolean (or 0/1), got values other than True/False")
        rejected = rejected.astype(bool)
    wrong = np.asarray(y_true != y_pred, dtype=bool)
    counts = np.zeros((2, 2), dtype=np.int64)
    np.add.at(counts, (rejected.astype(np.intp), wrong.astype(np.intp)), 1)
    return counts


# --------------------------------------------------------------------------------------------
# Cost risk of an accept mask: the empirical risk of the cost-based model (Problem 1)
# --------------------------------------------------------------------------------------------
def selective_outcome(loss, accepted, reject_cost, *, loss_scale=100.0):
    """Cost risk, coverage and selective risk of accepting ``accepted`` (bool) with losses ``loss``.

    The empirical risk of Chow's cost-based model (Problem 1 of Franc, Prusa & Voracek, 2023):
    an error costs 1, a rejection ``d = reject_cost`` (in ``[0, 1)``). ``loss`` counts
    ``loss_scale`` per error (``100 [y != h(x)]`` by default, the pipeline's 0/100 loss, so
    risks read in percent), hence ``cost_risk = (sum of accepted losses + loss_scale d #rejected) / n``;
    ``selective_risk`` is the mean loss on the accepted examples (NaN when none is accepted).

    Parameters
    ----------
    loss : array-like of shape (n,)
        Per-example losses, ``loss_scale`` for an error and 0 for a correct prediction.
    accepted : array-like of bool, shape (n,)
        True where the selective classifier predicts, False where it rejects.
    reject_cost : float
        The cost ``d`` of a rejection, in ``[0, 1)`` (an error costs 1).
    loss_scale : float, default=100.0
        The loss of one error, so that ``d`` is rescaled to loss units.

    Returns
    -------
    dict
        ``cost_risk``, ``coverage``, ``selective_risk``, ``n_test`` (n), ``n_rejected`` and
        ``n_errors_accepted`` (accepted examples with a non-zero loss).

    Raises
    ------
    ValueError
        ``loss`` and ``accepted`` not 1-D of the same non-zero length, a loss that is negative or
        not finite, or ``reject_cost`` negative or not finite.

    Examples
    --------
    >>> out = selective_outcome([0, 100, 0, 100], [True, True, True, False], reject_cost=0.2)
    >>> out["cost_risk"], out["coverage"], out["n_rejected"]  # (100 + 100 * 0.2 * 1) / 4
    (30.0, 0.75, 1)
    """
    loss = np.asarray(loss, dtype=float)
    accepted = np.asarray(accepted, dtype=bool)
    if loss.shape != accepted.shape or loss.ndim != 1 or loss.size == 0:
        raise ValueError(f"loss and accepted must be 1-D of the same non-zero length, got {loss.shape}, {accepted.shape}")
    loss = _as_loss(loss)
    if not (math.isfinite(float(reject_cost)) and float(reject_cost) >= 0):
        raise ValueError(f"reject_cost must be a finite number >= 0, got {reject_cost!r}")
    n, n_acc = loss.size, int(accepted.sum())
    n_rej = n - n_acc
    return {
        "cost_risk": (float(loss[accepted].sum()) + float(loss_scale) * float(reject_cost) * n_rej) / n,
        "coverage": n_acc / n,
        "selective_risk": float(loss[accepted].mean()) if n_acc else float("nan"),
        "n_test": n,
        "n_rejected": n_rej,
        "n_errors_accepted": int(np.count_nonzero(loss[accepted])),
    }
