"""Failure-detection metrics: the uncertainty score as a detector of the classifier's errors.

The risk-coverage areas (:mod:`._risk_coverage`) ask how much loss the accepted rows carry; these
ask how well the score separates the errors (``loss == 1``) from the successes (``loss == 0``),
as a binary detector would be judged: the failure AUROC, the FPR at 95 % TPR, the average
precision with either class as positive (fd-shifts' ``failauc``, ``fpr@95tpr``, ``failap_err``,
``failap_suc``; torch-uncertainty's ``FPR95``), fd-shifts' balanced-accuracy areas
(``aurc_ba``, ``augrc_ba``) and its "achievable" AURC. Same calling style as the areas:
``(loss, uncertainty)``, larger uncertainty = more likely an error, validated by
:func:`rejectopt._checks.as_loss_and_uncertainty`; the balanced-accuracy areas need the labels,
``(y_true, y_pred, uncertainty)``.

A failure detector needs a failure: a graded loss (a cost, a squared error) has no positive
class, so these metrics refuse a loss that is not 0/1 rather than guess a cut (``loss > 0`` would
call a tiny regression error a failure). A detector with no error or no success to rank has no
ROC or precision-recall curve: those metrics raise ValueError saying which class is missing.
Where each library's value comes from and how it treats ties: ``docs/guide/metric_conventions.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty, as_uncertainty, check_1d
from .._params import Interval, Options, validate_params
from ._risk_coverage import _by_group, _group_labels

__all__ = [
    "FAILURE_PARAMETERS",
    "aurc_achievable",
    "aurc_ba",
    "augrc_ba",
    "failure_aupr",
    "failure_auroc",
    "fpr_at_tpr",
]

#: The scalar parameters of the failure-detection metrics and what each allows.
FAILURE_PARAMETERS: dict[str, Any] = {
    "tpr": Interval(0, 1, closed="right"),
    "positive": Options("error", "success"),
    "convention": Options("paper", "fd-shifts", "torch-uncertainty"),
}

#: fd-shifts compares the TPR with 0.9495, not 0.95, to absorb the rounding of ``k / n``.
_FD_SHIFTS_TPR_SLACK = 0.0005


def _binary_failures(loss, uncertainty, owner):
    """``(failed, uncertainty)``: the loss as a boolean "is an error", refused unless it is 0/1."""
    loss, uncertainty = as_loss_and_uncertainty(loss, uncertainty)
    graded = (loss != 0) & (loss != 1)
    if graded.any():
        i = int(np.argmax(graded))
        raise ValueError(
            f"{owner}: loss must be 0/1 (1 = the prediction failed): a failure detector needs a "
            f"binary failure, got loss[{i}] = {loss[i]}; pass e.g. (loss > 0) to choose the cut"
        )
    return loss == 1, uncertainty


def _both_classes(failed, owner, need=("error", "success")):
    """ValueError naming the missing class where the metric's curve needs it."""
    n_errors = int(np.count_nonzero(failed))
    if "error" in need and n_errors == 0:
        raise ValueError(
            f"{owner}: undefined without an error (every loss is 0): no failure to detect"
        )
    if "success" in need and n_errors == failed.size:
        raise ValueError(
            f"{owner}: undefined without a success (every loss is 1): nothing to tell apart"
        )
    return n_errors


def failure_auroc(loss, uncertainty, *, groups=None):
    """Area under the ROC curve of the uncertainty as a detector of the errors.

    .. versionadded:: 0.7.0

    The probability that an error's uncertainty exceeds a success's, a tie counting 1/2 (the
    Mann-Whitney statistic with midranks): what fd-shifts' ``failauc`` (sklearn's trapezoid over
    the ROC curve, tied scores one point) and torchmetrics' ``BinaryAUROC`` compute.

    Parameters
    ----------
    loss : array-like of shape (n,)
        0/1 losses, 1 = the prediction failed; a graded loss raises ValueError.
    uncertainty : array-like of shape (n,)
        Larger = more likely an error.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows.

    Returns
    -------
    float
        In [0, 1], higher is better (0.5: chance); with ``groups`` a dict by label.

    Raises
    ------
    ValueError
        A graded loss, or no error or no success to rank.

    Examples
    --------
    >>> failure_auroc([0, 1, 0, 1], [0.1, 0.9, 0.5, 0.5])  # (1 + 1 + 1 + 0.5) / 4
    0.875
    """
    if groups is not None:
        return _by_group(failure_auroc, loss, uncertainty, groups)
    failed, uncertainty = _binary_failures(loss, uncertainty, "failure_auroc")
    n_errors = _both_classes(failed, "failure_auroc")
    errors = np.sort(uncertainty[failed])
    successes = np.sort(uncertainty[~failed])
    below = np.searchsorted(successes, errors, side="left")
    at_or_below = np.searchsorted(successes, errors, side="right")
    wins = below.sum(dtype=np.int64) + 0.5 * (at_or_below - below).sum(dtype=np.int64)
    return float(wins / (n_errors * successes.size))


def failure_aupr(loss, uncertainty, *, positive="error", groups=None):
    """Average precision of the failure detector: sklearn's ``average_precision_score``.

    .. versionadded:: 0.7.0

    ``positive="error"``: the errors are the positives, ranked by decreasing uncertainty
    (fd-shifts' ``failap_err``); ``"success"``: the successes, ranked by increasing uncertainty
    (``failap_suc``). Both are sklearn's step-wise sum ``sum_k (R_k - R_{k-1}) P_k`` over the
    distinct scores (tied rows enter together), not a trapezoid, which fd-shifts calls as is.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        As :func:`failure_auroc`.
    positive : {"error", "success"}, default="error"
        Which class is the positive one.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows.

    Returns
    -------
    float
        In (0, 1], higher is better (chance: the positives' share); with ``groups`` a dict.

    Raises
    ------
    ValueError
        A graded loss, or no positive row (all errors need a success, and conversely).

    Examples
    --------
    >>> failure_aupr([0, 1, 0, 1], [0.1, 0.9, 0.3, 0.2])  # precisions 1 and 2/3
    0.8333333333333333
    """
    validate_params("failure_aupr", {"positive": positive}, FAILURE_PARAMETERS)
    if groups is not None:
        return _by_group(failure_aupr, loss, uncertainty, groups, positive=positive)
    failed, uncertainty = _binary_failures(loss, uncertainty, "failure_aupr")
    _both_classes(failed, "failure_aupr", need=(positive,))
    # Rank by decreasing score: negate so that "score >= t" is "key <= -t" on an ascending sort.
    key = -uncertainty if positive == "error" else uncertainty
    is_positive = failed if positive == "error" else ~failed
    everyone = np.sort(key)
    values, counts = np.unique(key[is_positive], return_counts=True)
    true_positives = np.cumsum(counts)
    flagged = np.searchsorted(everyone, values, side="right")
    return float(np.sum(counts / true_positives[-1] * (true_positives / flagged)))


def fpr_at_tpr(loss, uncertainty, *, tpr=0.95, convention="paper", groups=None):
    """Share of the errors accepted at the threshold accepting a share ``tpr`` of the successes.

    .. versionadded:: 0.7.0

    The detector of the literature's "FPR at 95 % TPR": the successes are the positives and a
    row is accepted when its uncertainty is at most a threshold; the value is the lowest FPR (errors
    accepted / errors) among the thresholds with TPR (successes accepted / successes) >= ``tpr``.

    Parameters
    ----------
    loss, uncertainty : array-like of shape (n,)
        As :func:`failure_auroc`.
    tpr : float in (0, 1], default=0.95
        The target share of successes accepted.
    convention : {"paper", "fd-shifts", "torch-uncertainty"}, default="paper"
        * ``"paper"``: every distinct uncertainty is a threshold; the first with TPR >= ``tpr``.
        * ``"fd-shifts"``: ``fpr@95tpr``: sklearn's ``roc_curve`` with its default
          ``drop_intermediate=True`` (a collinear, evenly spaced point is dropped, so the first
          kept point with TPR >= ``tpr - 0.0005`` may accept more errors).
        * ``"torch-uncertainty"``: ``FPR95``: the first threshold of its ROC curve whose TPR
          reaches ``tpr`` (its recall is read at the same distinct thresholds as ``"paper"``).
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows.

    Returns
    -------
    float
        In [0, 1], lower is better; with ``groups`` a dict by label.

    Raises
    ------
    ValueError
        A graded loss, or no error or no success.

    Examples
    --------
    >>> fpr_at_tpr([0, 0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.5])  # all 3 successes: 1 error of 2
    0.5
    """
    params = {"tpr": tpr, "convention": convention}
    validate_params("fpr_at_tpr", params, FAILURE_PARAMETERS)
    if groups is not None:
        return _by_group(fpr_at_tpr, loss, uncertainty, groups, tpr=tpr, convention=convention)
    failed, uncertainty = _binary_failures(loss, uncertainty, "fpr_at_tpr")
    n_errors = _both_classes(failed, "fpr_at_tpr")
    if convention == "fd-shifts":
        return _fd_shifts_fpr(failed, uncertainty, tpr - _FD_SHIFTS_TPR_SLACK)
    successes = uncertainty[~failed]
    # The k-th smallest success uncertainty is the lowest threshold accepting k successes.
    k = max(1, math.ceil(float(tpr) * successes.size))
    while k > 1 and (k - 1) / successes.size >= tpr:
        k -= 1
    while k / successes.size < tpr:
        k += 1
    threshold = np.partition(successes, k - 1)[k - 1]
    return float(np.count_nonzero(uncertainty[failed] <= threshold) / n_errors)


def _roc_counts(failed, uncertainty):
    """Errors and successes accepted at each distinct uncertainty (ascending), cumulated."""
    order = np.argsort(uncertainty, kind="stable")
    ranked = uncertainty[order]
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    errors = np.cumsum(failed[order], dtype=np.int64)[ends]
    return errors, ends + 1 - errors


def _fd_shifts_fpr(failed, uncertainty, target):
    """fd-shifts' ``fpr@95tpr``: sklearn's ``roc_curve`` (intermediate points dropped), min FPR."""
    fps, tps = _roc_counts(failed, uncertainty)
    if fps.size > 2:
        kept = np.r_[True, (np.diff(fps, 2) != 0) | (np.diff(tps, 2) != 0), True]
        fps, tps = fps[kept], tps[kept]
    reached = tps / tps[-1] >= target
    return float(np.min(fps[reached] / fps[-1]))


def _as_labels(y_true, y_pred, uncertainty, owner):
    """``(y_true, loss, uncertainty)``: the labels checked, the 0/1 loss ``y_pred != y_true``."""
    y_true = check_1d(np.asarray(y_true), "y_true")
    y_pred = check_1d(np.asarray(y_pred), "y_pred")
    uncertainty = as_uncertainty(uncertainty, "uncertainty")
    if not y_true.shape == y_pred.shape == uncertainty.shape:
        raise ValueError(
            f"{owner}: y_true, y_pred and uncertainty must have the same length, got shapes "
            f"{y_true.shape}, {y_pred.shape} and {uncertainty.shape}"
        )
    return y_true, (y_true != y_pred).astype(np.float64), uncertainty


def _class_codes(y_true):
    """``(n_classes, code per row, rows per class)``: integer labels counted, others sorted.

    The codes are 16-bit where they fit, so that a stable sort by class is numpy's radix sort.
    """
    if y_true.dtype.kind in "iu" and int(y_true.max()) - int(y_true.min()) <= 4 * y_true.size:
        shifted = (y_true - y_true.min()).astype(np.intp)
        counts = np.bincount(shifted)
        present = counts > 0
        codes = (np.cumsum(present) - 1)[shifted]
        counts = counts[present]
    else:
        _, codes, counts = np.unique(y_true, return_inverse=True, return_counts=True)
    dtype = np.uint16 if counts.size <= 2**16 else np.intp
    return counts.size, codes.astype(dtype, copy=False), counts


def _ba_by_group(function, y_true, y_pred, uncertainty, groups):
    """``{label: function(rows of the group)}``: each group's classes and coverage its own."""
    y_true, loss, uncertainty = _as_labels(y_true, y_pred, uncertainty, function.__name__)
    labels, inverse = _group_labels(groups, uncertainty.size)
    y_pred = np.asarray(y_pred)
    return {
        label: function(y_true[inverse == g], y_pred[inverse == g], uncertainty[inverse == g])
        for g, label in enumerate(labels)
    }


def aurc_ba(y_true, y_pred, uncertainty, *, groups=None):
    """fd-shifts' ``aurc_ba``: the AURC with risk = 1 - balanced accuracy of the accepted rows.

    .. versionadded:: 0.7.0

    At each distinct uncertainty (tied rows rejected together) the risk is the mean, over the
    classes of ``y_true``, of each class's error rate among its accepted rows; a class with no
    accepted row counts 0 but stays in the mean (fd-shifts' rule: the divisor is the number of
    classes in the sample). The points are joined by trapezoids, the last risk held to coverage 0.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        True and predicted labels (any comparable labels).
    uncertainty : array-like of shape (n,)
        Larger = rejected first.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows and classes.

    Returns
    -------
    float
        In [0, 1], lower is better; 0 when every prediction is right. When all are wrong it
        is below 1: the classes run out of accepted rows as the coverage falls, and count 0.

    Examples
    --------
    >>> round(aurc_ba([0, 0, 0, 1], [0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]), 12)  # risks 2/3, 1/6, 0
    0.125
    """
    if groups is not None:
        return _ba_by_group(aurc_ba, y_true, y_pred, uncertainty, groups)
    y_true, loss, uncertainty = _as_labels(y_true, y_pred, uncertainty, "aurc_ba")
    n_classes, cls, _ = _class_codes(y_true)
    order = np.argsort(uncertainty, kind="stable")
    cls, loss, ranked = cls[order], loss[order], uncertainty[order]
    # Each accepted row changes only its class's error rate: the risk is a cumulated sum of those
    # changes, one sort by class giving every row its class's running counts.
    by_class = np.argsort(cls, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(cls[by_class])) + 1]
    seen = np.arange(1, cls.size + 1) - np.repeat(starts, np.diff(np.r_[starts, cls.size]))
    running = np.cumsum(loss[by_class])
    running -= np.repeat(np.r_[0.0, running[starts[1:] - 1]], np.diff(np.r_[starts, cls.size]))
    rate = running / seen
    before = np.where(seen > 1, (running - loss[by_class]) / np.maximum(seen - 1, 1), 0.0)
    change = np.empty(cls.size)
    change[by_class] = rate - before
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    risk = np.cumsum(change)[ends] / n_classes
    coverage = (ends + 1) / cls.size
    return _trapezoid(np.r_[0.0, coverage], np.r_[risk[0], risk])


def augrc_ba(y_true, y_pred, uncertainty, *, groups=None):
    """fd-shifts' ``augrc_ba``: the AUGRC of the errors weighted by ``n / (K n_c)``.

    .. versionadded:: 0.7.0

    Each error of true class ``c`` (``n_c`` rows, ``K`` classes) weighs ``n / (K n_c)``, so
    that at full coverage the generalized risk is 1 - balanced accuracy; the area is fd-shifts'
    AUGRC of those weights (as :func:`augrc` with ``convention="fd-shifts"``): the accepted
    weight over ``n`` at each distinct uncertainty, trapezoids down to ``(0, 0)``.

    Parameters
    ----------
    y_true, y_pred, uncertainty, groups
        As :func:`aurc_ba`.

    Returns
    -------
    float
        Lower is better; 0 when every prediction is right.

    Examples
    --------
    >>> round(augrc_ba([0, 0, 0, 1], [0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]), 12)  # weights 2/3, 2
    0.125
    """
    if groups is not None:
        return _ba_by_group(augrc_ba, y_true, y_pred, uncertainty, groups)
    y_true, loss, uncertainty = _as_labels(y_true, y_pred, uncertainty, "augrc_ba")
    n_classes, cls, per_class = _class_codes(y_true)
    weighted = loss * (cls.size / (n_classes * per_class[cls]))
    order = np.argsort(uncertainty, kind="stable")
    ranked = uncertainty[order]
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    risk = np.r_[0.0, np.cumsum(weighted[order])[ends] / cls.size]
    return _trapezoid(np.r_[0.0, (ends + 1) / cls.size], risk)


def _trapezoid(coverage, risk):
    """The trapezoid area under the points ``(coverage, risk)``, coverage ascending."""
    return float(np.sum(np.diff(coverage) * (risk[1:] + risk[:-1]) / 2))


def aurc_achievable(loss, uncertainty, *, groups=None):
    """fd-shifts' ``aurc_achievable``: the AURC over the ROC convex hull's thresholds only.

    .. versionadded:: 0.7.0

    Only the thresholds on the convex hull of the ROC curve (successes as positives) are kept,
    as a randomised choice between two kept thresholds reaches any point between them; between
    kept points the accepted loss is linear in the coverage (fd-shifts' "non-linear"
    interpolation of the risk), the lowest kept risk held to coverage 0. Never above the
    fd-shifts AURC of the same ranking.

    Parameters
    ----------
    loss, uncertainty, groups
        As :func:`failure_auroc` (0/1 loss).

    Returns
    -------
    float
        Lower is better; the error rate when there is no error or no success.

    Examples
    --------
    >>> round(aurc_achievable([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4]), 6)
    0.218832
    """
    if groups is not None:
        return _by_group(aurc_achievable, loss, uncertainty, groups)
    failed, uncertainty = _binary_failures(loss, uncertainty, "aurc_achievable")
    n = failed.size
    errors, successes = _roc_counts(failed, uncertainty)
    if errors[-1] in (0, n):
        return float(errors[-1] / n)
    hull = _upper_hull(np.r_[0, errors], np.r_[0, successes])[1:] - 1
    cov = (errors[hull] + successes[hull]).astype(np.float64)[::-1]
    err = errors[hull].astype(np.float64)[::-1]
    area = err[-1]
    if cov.size > 1:
        prev, nxt, e_prev, e_next = cov[:-1], cov[1:], err[:-1], err[1:]
        area += np.sum(
            e_prev - e_next + (e_next * prev - e_prev * nxt) * np.log(prev / nxt) / (prev - nxt)
        )
    return float(area / n)


def _upper_hull(x, y):
    """Indices of the strict vertices of the upper convex hull of a curve increasing in x and y.

    A point on or below the chord of its two neighbours is never a hull vertex, so every such
    point is dropped at once and the pass repeated until none is left: each pass is vectorised.
    """
    keep = np.arange(x.size)
    while keep.size > 2:
        a, b, c = keep[:-2], keep[1:-1], keep[2:]
        cross = (x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a])
        convex = cross < 0
        if convex.all():
            break
        keep = np.r_[keep[0], b[convex], keep[-1]]
    return keep
