"""What a selective classifier's accept / reject decisions count and cost.

:func:`reject_confusion_matrix` counts accepted / rejected against correct / wrong;
:func:`selective_outcome` is the empirical risk of Chow's cost-based model (Problem 1 of [1]).

[1] is listed in the references of :mod:`rejectopt.metrics`.
"""

import math

import numpy as np

from .._checks import check_1d
from ._losses import _as_loss


def _as_label_array(values, name):
    array = check_1d(values, name)
    if array.size == 0:
        raise ValueError(f"{name} must contain at least one example, got shape (0,)")
    if array.dtype.kind in "fc" and not np.all(np.isfinite(array)):
        raise ValueError(
            f"{name} contains {np.count_nonzero(~np.isfinite(array))} NaN or infinite value(s)"
        )
    if array.dtype.kind == "O":
        bad = [
            i for i, v in enumerate(array.tolist()) if isinstance(v, float) and not math.isfinite(v)
        ]
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
    rejected = check_1d(rejected, "rejected")
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
        ``loss`` and ``accepted`` not 1-D or not of the same non-zero length, a loss that is negative or
        not finite, or ``reject_cost`` negative or not finite.

    Examples
    --------
    >>> out = selective_outcome([0, 100, 0, 100], [True, True, True, False], reject_cost=0.2)
    >>> out["cost_risk"], out["coverage"], out["n_rejected"]  # (100 + 100 * 0.2 * 1) / 4
    (30.0, 0.75, 1)
    """
    loss = check_1d(np.asarray(loss, dtype=float), "loss")
    accepted = check_1d(np.asarray(accepted, dtype=bool), "accepted")
    if loss.shape != accepted.shape or loss.size == 0:
        raise ValueError(
            f"loss and accepted must be of the same non-zero length, got {loss.shape}, {accepted.shape}"
        )
    loss = _as_loss(loss)
    if not (math.isfinite(float(reject_cost)) and float(reject_cost) >= 0):
        raise ValueError(f"reject_cost must be a finite number >= 0, got {reject_cost!r}")
    n, n_acc = loss.size, int(accepted.sum())
    n_rej = n - n_acc
    return {
        "cost_risk": (float(loss[accepted].sum()) + float(loss_scale) * float(reject_cost) * n_rej)
        / n,
        "coverage": n_acc / n,
        "selective_risk": float(loss[accepted].mean()) if n_acc else float("nan"),
        "n_test": n,
        "n_rejected": n_rej,
        "n_errors_accepted": int(np.count_nonzero(loss[accepted])),
    }
