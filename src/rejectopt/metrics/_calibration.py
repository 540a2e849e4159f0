"""Calibration metrics of class probabilities: ECE, MCE, adaptive ECE, Brier score, NLL.

Every function takes ``probabilities`` (n, K), one row of class probabilities per example, and
``y_true`` (n,), the integer class of each example. The top-label metrics (ECE, MCE, adaptive
ECE) read the confidence ``max_k p_k`` and the correctness ``argmax_k p_k == y`` of each row
(``argmax`` takes the first of tied classes, as NumPy and torch do), and bin the confidences as
the library named by ``convention`` bins them:

* ``"torch-uncertainty"`` (the default; torchmetrics' ``_binning_bucketize``, which
  torch-uncertainty's ``CalibrationError`` wraps): edges ``linspace(0, 1, n_bins + 1)``, bins
  closed on the left ``[e_k, e_{k+1})``; a confidence of exactly 1 falls in an extra bin of its
  own (``bucketize(right=True)`` over ``n_bins + 1`` slots). Empty bins weigh 0.
* ``"fd-shifts"`` (fd-shifts' ``StatsCache.calibration_stats``, adapted from scikit-learn's
  ``calibration_curve``): edges ``linspace(0, 1 + 1e-8, n_bins + 1)``, bins closed on the left
  (``np.digitize``), so 1 lies in the last bin. Its quirk is kept: the correctness is passed
  through ``label_binarize(correct, classes=unique(correct))``, which maps a single class to 0,
  so when every prediction is correct (or every one wrong) the accuracy of every bin is 0.

The adaptive (equal-mass) ECE is torch-uncertainty's ``AdaptiveCalibrationError``: the
confidences sorted ascending (stably here: among tied confidences the input order decides
which bin a row falls in), cut by ``tensor_split`` into ``n_bins`` runs whose sizes differ by
at most one, the first ``n % n_bins`` one longer. The Brier score is torch-uncertainty's
``BrierScore`` (the squared distance to the one-hot label summed over the K classes, not
divided by K) and the NLL its ``CategoricalNLL`` (``-log p_y``, infinite where ``p_y = 0``): both
are means of one term per row, so ``groups=`` gives each group's mean and
:func:`brier_score_terms` / :func:`nll_terms` the terms for a bootstrap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import check_1d
from .._params import Interval, Options, validate_params
from ._risk_coverage import _group_labels

__all__ = [
    "CALIBRATION_CONVENTIONS",
    "PARAMETERS",
    "ROW_SUM_TOLERANCE",
    "adaptive_calibration_error",
    "brier_score",
    "brier_score_terms",
    "expected_calibration_error",
    "maximum_calibration_error",
    "negative_log_likelihood",
    "nll_terms",
]

#: The libraries whose binning the top-label metrics follow, the default first.
CALIBRATION_CONVENTIONS = ("torch-uncertainty", "fd-shifts")

#: How far a row's sum may lie from 1 (float32 softmax outputs sum to 1 within ~1e-6 per row).
ROW_SUM_TOLERANCE = 1e-5

#: The scalar parameters of the calibration metrics and what each allows.
PARAMETERS: dict[str, Any] = {
    "n_bins": Interval(1, None, integer=True, closed="left"),
    "convention": Options(*CALIBRATION_CONVENTIONS),
}


def _as_probabilities(probabilities, y_true):
    """Validated float64 ``(n, K)`` probabilities and integer labels in ``[0, K)``."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] == 0:
        raise ValueError(
            f"probabilities must be a 2-D array (n, K) with n >= 1 and K >= 1, got shape {p.shape}"
        )
    bad = ~np.isfinite(p).all(axis=1)
    if bad.any():
        raise ValueError(f"probabilities has a NaN or infinite value in row {int(np.argmax(bad))}")
    bad = ((p < 0) | (p > 1)).any(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"probabilities must lie in [0, 1]; row {row} is {p[row].tolist()}")
    sums = p.sum(axis=1)
    bad = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(
            f"each row of probabilities must sum to 1 (within {ROW_SUM_TOLERANCE}); row {row} "
            f"sums to {float(sums[row])!r}"
        )
    y = check_1d(y_true, "y_true")
    if y.size != p.shape[0]:
        raise ValueError(f"y_true must hold one label per row: {p.shape[0]} rows, got {y.size}")
    if y.dtype.kind not in "iu" and not (y.dtype.kind == "f" and np.all(y == np.round(y))):
        raise ValueError(f"y_true must hold integer class indices, got dtype {y.dtype}")
    y = y.astype(np.intp)
    bad = (y < 0) | (y >= p.shape[1])
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(
            f"y_true must lie in [0, {p.shape[1]}) (one column per class); row {row} is {int(y[row])}"
        )
    return p, y


def _top_label(probabilities, y_true):
    """Confidence (max probability) and correctness (argmax == label, as 0/1 floats) per row."""
    p, y = _as_probabilities(probabilities, y_true)
    predicted = p.argmax(axis=1)
    return p[np.arange(p.shape[0]), predicted], (predicted == y).astype(np.float64)


def _bins(confidence, correct, n_bins, convention):
    """Per non-empty bin: share of the rows, accuracy, mean confidence (the library's binning)."""
    if convention == "torch-uncertainty":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        index = np.searchsorted(edges, confidence, side="right") - 1  # bucketize(right=True) - 1
        slots = n_bins + 1
    else:
        edges = np.linspace(0.0, 1.0 + 1e-8, n_bins + 1)
        index = np.digitize(confidence, edges) - 1
        slots = n_bins + 1
        labels = np.unique(correct)
        # label_binarize with a single class yields zeros: fd-shifts' all-correct quirk
        correct = correct if labels.size == 2 else np.zeros_like(correct)
    count = np.bincount(index, minlength=slots).astype(np.float64)
    confidence_sum = np.bincount(index, weights=confidence, minlength=slots)
    correct_sum = np.bincount(index, weights=correct, minlength=slots)
    full = count > 0
    return (
        count[full] / count.sum(),
        correct_sum[full] / count[full],
        confidence_sum[full] / count[full],
    )


def _check(owner, **values):
    validate_params(owner, values, PARAMETERS)


def expected_calibration_error(probabilities, y_true, *, n_bins=15, convention="torch-uncertainty"):
    """Expected calibration error: the mean over bins of ``|accuracy - confidence|``, weighted by size.

    .. versionadded:: 0.7.0

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.
    n_bins : int, default 15
        Number of equal-width confidence bins (torchmetrics' default; torch-uncertainty's
        ``CalibrationError`` defaults to 10, fd-shifts takes it from its configuration).
    convention : {"torch-uncertainty", "fd-shifts"}, default "torch-uncertainty"
        Whose binning to follow (module docstring): torch-uncertainty's edges
        ``linspace(0, 1, n_bins + 1)`` closed on the left, a confidence of 1 in a bin of its own;
        or fd-shifts' edges ``linspace(0, 1 + 1e-8, n_bins + 1)`` closed on the left (1 in the
        last bin), every bin's accuracy 0 when all predictions are correct or all wrong.

    Returns
    -------
    float
        The bin-size-weighted mean gap, in [0, 1].

    Examples
    --------
    >>> p = [[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.2, 0.8]]
    >>> round(expected_calibration_error(p, [0, 1, 0, 1], n_bins=2), 10)
    0.25
    """
    _check("expected_calibration_error", n_bins=n_bins, convention=convention)
    share, accuracy, confidence = _bins(*_top_label(probabilities, y_true), n_bins, convention)
    return float(np.sum(np.abs(accuracy - confidence) * share))


def maximum_calibration_error(probabilities, y_true, *, n_bins=15, convention="torch-uncertainty"):
    """Maximum calibration error: the largest ``|accuracy - confidence|`` over the non-empty bins.

    .. versionadded:: 0.7.0

    A single badly calibrated bin shows here even when it holds few rows.

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.
    n_bins : int, default 15
        Number of equal-width confidence bins, as in :func:`expected_calibration_error`.
    convention : {"torch-uncertainty", "fd-shifts"}, default "torch-uncertainty"
        Whose binning to follow (module docstring): torch-uncertainty's edges
        ``linspace(0, 1, n_bins + 1)`` closed on the left, a confidence of 1 in a bin of its own;
        or fd-shifts' edges ``linspace(0, 1 + 1e-8, n_bins + 1)`` closed on the left (1 in the
        last bin), every bin's accuracy 0 when all predictions are correct or all wrong.

    Returns
    -------
    float
        The largest gap over the bins that hold a row, in [0, 1].

    Examples
    --------
    >>> p = [[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.2, 0.8]]
    >>> round(maximum_calibration_error(p, [0, 1, 0, 1], n_bins=2), 10)
    0.25

    Both rows correct, one bin of confidence 0.85: accuracy 1, but 0 under fd-shifts' quirk.

    >>> p = [[0.9, 0.1], [0.2, 0.8]]
    >>> round(maximum_calibration_error(p, [0, 1], n_bins=2), 10)
    0.15
    >>> round(maximum_calibration_error(p, [0, 1], n_bins=2, convention="fd-shifts"), 10)
    0.85
    """
    _check("maximum_calibration_error", n_bins=n_bins, convention=convention)
    _, accuracy, confidence = _bins(*_top_label(probabilities, y_true), n_bins, convention)
    return float(np.max(np.abs(accuracy - confidence)))


def adaptive_calibration_error(probabilities, y_true, *, n_bins=15):
    """Adaptive (equal-mass) ECE, torch-uncertainty's ``AdaptiveCalibrationError``.

    .. versionadded:: 0.7.0

    The confidences sorted ascending (stably) are cut into ``n_bins`` runs of ``n // n_bins`` or
    one more rows (the longer ones first); the ECE is taken over these runs. Fewer rows than
    bins leave empty runs, where torch-uncertainty returns NaN: refused here.

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.
    n_bins : int, default 15
        Number of equal-mass bins, at most the number of rows.

    Returns
    -------
    float
        The run-size-weighted mean of ``|accuracy - mean confidence|``, in [0, 1].

    Examples
    --------
    >>> p = [[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.2, 0.8]]
    >>> round(adaptive_calibration_error(p, [0, 1, 0, 1], n_bins=2), 10)  # (0.65 + 0.15) / 2
    0.4
    """
    _check("adaptive_calibration_error", n_bins=n_bins)
    confidence, correct = _top_label(probabilities, y_true)
    n = confidence.size
    if n < n_bins:
        raise ValueError(
            f"adaptive_calibration_error: {n} rows cannot fill n_bins={n_bins} equal-mass bins; "
            "pass n_bins <= the number of rows"
        )
    order = np.argsort(confidence, kind="stable")
    sizes = np.full(n_bins, n // n_bins)
    sizes[: n % n_bins] += 1
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    confidence_mean = np.add.reduceat(confidence[order], starts) / sizes
    accuracy = np.add.reduceat(correct[order], starts) / sizes
    return float(np.sum(np.abs(accuracy - confidence_mean) * (sizes / n)))


def brier_score_terms(probabilities, y_true):
    """Per row: ``sum_k (p_k - [k == y])^2``, in [0, 2], the terms :func:`brier_score` averages.

    .. versionadded:: 0.7.0

    The terms bootstrap like a loss: :func:`bootstrap_ci` of them with their mean as the
    statistic gives an interval for the mean.

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.

    Returns
    -------
    ndarray of shape (n,)
        The squared distance of each row to its one-hot label.

    Examples
    --------
    >>> brier_score_terms([[0.5, 0.5], [0.25, 0.75]], [0, 1])  # 2 * 0.5**2, 2 * 0.25**2
    array([0.5  , 0.125])
    """
    p, y = _as_probabilities(probabilities, y_true)
    target = np.zeros_like(p)
    target[np.arange(p.shape[0]), y] = 1.0
    return np.square(p - target).sum(axis=1)


def nll_terms(probabilities, y_true):
    """Per row: ``-log p_y``, the terms :func:`negative_log_likelihood` averages.

    .. versionadded:: 0.7.0

    The terms bootstrap like a loss: :func:`bootstrap_ci` of them with their mean as the
    statistic gives an interval for the mean.

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.

    Returns
    -------
    ndarray of shape (n,)
        ``-log`` of each row's probability of its true class: infinite where it is 0 (as
        torch-uncertainty's ``CategoricalNLL``), so a mean over such a row is infinite.

    Examples
    --------
    >>> nll_terms([[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]], [0, 1, 1])  # log 2, log 4/3, log 1/0
    array([0.69314718, 0.28768207,        inf])
    """
    p, y = _as_probabilities(probabilities, y_true)
    with np.errstate(divide="ignore"):
        return -np.log(p[np.arange(p.shape[0]), y])


def _mean(terms, groups):
    if groups is None:
        return float(np.mean(terms))
    labels, inverse = _group_labels(groups, terms.size)
    sums = np.bincount(inverse, weights=terms, minlength=len(labels))
    counts = np.bincount(inverse, minlength=len(labels))
    return {label: float(s / c) for label, s, c in zip(labels, sums, counts)}


def brier_score(probabilities, y_true, *, groups=None):
    """Multiclass Brier score: the mean over rows of :func:`brier_score_terms` (torch-uncertainty's).

    .. versionadded:: 0.7.0

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows (as in :func:`aurc`).

    Returns
    -------
    float
        The mean squared distance to the one-hot label, in [0, 2] (summed over the K classes,
        not divided by K); with ``groups`` a dict from each label to its group's mean.

    Examples
    --------
    >>> brier_score([[0.9, 0.1], [0.4, 0.6]], [0, 0])  # (0.02 + 0.72) / 2
    0.37
    >>> brier_score([[0.5, 0.5], [0.25, 0.75]], [0, 1], groups=["a", "b"])
    {'a': 0.5, 'b': 0.125}
    """
    return _mean(brier_score_terms(probabilities, y_true), groups)


def negative_log_likelihood(probabilities, y_true, *, groups=None):
    """Mean negative log-likelihood of the true class (torch-uncertainty's ``CategoricalNLL``).

    .. versionadded:: 0.7.0

    Parameters
    ----------
    probabilities : array-like of shape (n, K)
        Class probabilities, each row in [0, 1] summing to 1 within :data:`ROW_SUM_TOLERANCE`.
    y_true : array-like of shape (n,)
        The true class of each row, an integer in ``[0, K)``.
    groups : array-like of shape (n,), optional
        A group label per row: the metric of each group's own rows (as in :func:`aurc`).

    Returns
    -------
    float
        The mean of :func:`nll_terms`, in nats, infinite when a true class has probability 0;
        with ``groups`` a dict from each label to its group's mean.

    Examples
    --------
    >>> round(negative_log_likelihood([[0.5, 0.5], [0.25, 0.75]], [0, 1]), 10)  # log(8/3) / 2
    0.4904146265
    >>> negative_log_likelihood([[0.5, 0.5], [0.5, 0.5]], [0, 1], groups=["a", "b"])
    {'a': 0.6931471805599453, 'b': 0.6931471805599453}
    """
    return _mean(nll_terms(probabilities, y_true), groups)
