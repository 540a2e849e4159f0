"""Baseline uncertainty scores computed from a classifier's own outputs (section 5.1 of [1]).

These functions are the one home of each baseline's formula: the classifiers'
outputs (``classifier_outputs`` of :mod:`rejectopt.classifiers`) and the landmark
experiment call them. Each is registered as a score with
``learns_from="classifier"`` so that labels, tables and config validation read it
from the registry like the learned scores.
"""

import numpy as np

__all__ = ["mcp", "svm_margin", "svor_margin", "face_score", "MCP", "Margin", "FaceScore"]


def _finite_array(values, name, ndims):
    values = np.asarray(values, dtype=np.float64)
    if values.ndim not in ndims:
        raise ValueError(
            f"{name} must have {' or '.join(map(str, ndims))} dimension(s), got shape {values.shape}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return values


def mcp(proba):
    """Maximum class probability baseline: ``1 - max_y p(y | x)``.

    Parameters
    ----------
    proba : array-like of shape (n, K)
        Class posterior estimates.

    Returns
    -------
    ndarray of shape (n,)
        One minus each row's largest posterior: larger = more uncertain.

    Examples
    --------
    >>> mcp([[0.9, 0.1], [0.5, 0.5]]).tolist()
    [0.09999999999999998, 0.5]
    """
    proba = _finite_array(proba, "proba", (2,))
    return 1.0 - proba.max(axis=1)


def svm_margin(decision):
    """SVM margin baseline: ``-|f(x)|`` (binary) or ``-max_y f_y(x)`` (multiclass).

    Parameters
    ----------
    decision : array-like of shape (n,) or (n, K)
        Decision function of a binary SVM (1-D) or per-class scores
        ``<w_y, x> + b_y`` of a multiclass SVM (2-D), over the classes the
        model knows (no ``-inf`` columns).

    Returns
    -------
    ndarray of shape (n,)
        Uncertainty (small margin = uncertain).

    Examples
    --------
    >>> svm_margin([1.5, -0.2])  # binary: the nearer the boundary, the more uncertain
    array([-1.5, -0.2])
    >>> svm_margin([[2.0, -1.0, 0.5], [0.1, 0.3, -2.0]])  # multiclass: the winning class's score
    array([-2. , -0.3])
    """
    decision = _finite_array(decision, "decision", (1, 2))
    if decision.ndim == 1:
        return -np.abs(decision)
    return -decision.max(axis=1)


def svor_margin(f, thresholds):
    """Support vector ordinal regression margin baseline: ``-min_y |f(x) - b_y|``.

    Parameters
    ----------
    f : array-like of shape (n,)
        Projection ``<w, x>``.
    thresholds : array-like of shape (Y-1,)
        Thresholds ``b_y``.

    Returns
    -------
    ndarray of shape (n,)
        Uncertainty (close to a threshold = uncertain).

    """
    f = _finite_array(f, "f", (1,))
    thresholds = _finite_array(thresholds, "thresholds", (1,))
    if thresholds.size == 0:
        raise ValueError("thresholds must contain at least one value, got shape (0,)")
    return -np.min(np.abs(f[:, None] - thresholds[None, :]), axis=1)


def face_score(detector_score):
    """Landmark baseline (section 5.2.3): the negated face-detector confidence.

    Parameters
    ----------
    detector_score : array-like of shape (n,)
        Confidence of the face detector on each image (larger = surer).

    Returns
    -------
    ndarray of shape (n,)
        Uncertainty ``-detector_score``.

    """
    return -_finite_array(detector_score, "detector_score", (1,))


class MCP:
    """Maximum class probability of a classifier with posteriors (LR, XGBoost): :func:`mcp`.

    Registered as ``"mcp"`` in :mod:`rejectopt.scores`.

    """

    compute = staticmethod(mcp)


class Margin:
    """Margin of a max-margin model: :func:`svm_margin` (SVM) or :func:`svor_margin` (SVOR).

    Registered as ``"margin"`` in :mod:`rejectopt.scores`.

    """

    compute = staticmethod(svm_margin)


class FaceScore:
    """Negated face-detector score of the landmark experiment: :func:`face_score`.

    Registered as ``"face_score"`` in :mod:`rejectopt.scores`.

    """

    compute = staticmethod(face_score)
