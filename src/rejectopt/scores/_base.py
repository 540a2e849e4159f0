"""Shared machinery of the linear per-predicted-class uncertainty scores (eq. 37)."""

import reprlib

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_array, check_consistent_length
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .._checks import check_1d
from ._registry import SCORES

__all__ = ["PerClassLinearScore"]


def single_threaded_blas():
    """Context limiting BLAS to one thread.

    The learners' matrix products are small (per class, d+1 columns) and SELE
    already runs its chunk batches in threads; multithreaded BLAS gains little
    here and its spinning worker threads can slow these calls by orders of
    magnitude when the machine is loaded.
    """
    return threadpool_limits(limits=1, user_api="blas")


def feature_statistics(X, standardize):
    """Mean and scale used to standardise ``X``; constant features get scale 1."""
    d = X.shape[1]
    if not standardize:
        return np.zeros(d), np.ones(d)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale <= 1e-12 * np.maximum(1.0, np.abs(mean))] = 1.0
    return mean, scale


def check_predicted_classes(y_pred, n_samples, n_classes=None):
    """Validate predicted class indices; ``None`` means one class (structured output).

    Returns an int array of shape (n_samples,) and the number of classes.
    """
    if y_pred is None:
        return np.zeros(n_samples, dtype=np.intp), 1
    y_pred = np.asarray(y_pred)
    if y_pred.ndim != 1 or y_pred.shape[0] != n_samples:
        raise ValueError(f"y_pred must have shape ({n_samples},), got {y_pred.shape}")
    if y_pred.size and not np.issubdtype(y_pred.dtype, np.integer):
        if not np.all(np.isfinite(y_pred)) or np.any(y_pred != np.round(y_pred)):
            raise ValueError("y_pred must hold integer class indices 0..K-1")
    y_pred = y_pred.astype(np.intp)
    if y_pred.size and y_pred.min() < 0:
        raise ValueError(f"y_pred must be non-negative class indices, got minimum {y_pred.min()}")
    if n_classes is None:
        n_classes = int(y_pred.max()) + 1 if y_pred.size else 1
    return y_pred, int(n_classes)


class ClassLayout:
    """Examples grouped by predicted class so that per-class products are plain BLAS calls.

    ``order`` sorts examples by class (stably); ``bounds[c]:bounds[c+1]`` is the
    block of class ``c`` in the sorted layout. ``design`` is the sorted design
    matrix with a trailing column of ones (for the per-class bias).
    """

    def __init__(self, X, classes, n_classes, mean=None, scale=None):
        self.order = np.argsort(classes, kind="stable")
        counts = np.bincount(classes, minlength=n_classes)[:n_classes]
        self.bounds = np.concatenate([[0], np.cumsum(counts)])
        self.counts = counts
        self.n_classes = n_classes
        n, d = X.shape
        self.design = np.empty((n, d + 1))
        self.design[:, d] = 1.0
        # Standardised ``(X - mean) / scale`` and class-sorted in row blocks straight into the design:
        # beside the caller's X, the fit holds one n x (d+1) matrix, not three n x d temporaries.
        step = max(1, (1 << 15) // max(1, d))
        for start in range(0, n, step):
            rows = self.order[start : start + step]
            block = X[rows]
            if mean is not None:
                block -= mean
                block /= scale
            self.design[start : start + step, :d] = block

    @property
    def n_params(self):
        return self.n_classes * self.design.shape[1]

    def blocks(self):
        """Yield ``(class, slice)`` for each class with at least one example."""
        for c in range(self.n_classes):
            if self.counts[c]:
                yield c, slice(self.bounds[c], self.bounds[c + 1])

    def scores_sorted(self, theta):
        """``s = <w_c, x> + b_c`` in class-sorted order; ``theta`` has shape (K, d+1)."""
        s = np.empty(self.design.shape[0])
        for c, rows in self.blocks():
            s[rows] = self.design[rows] @ theta[c]
        return s

    def gradient(self, grad_scores_sorted):
        """Map a gradient w.r.t. the sorted scores to one w.r.t. ``theta`` (K, d+1)."""
        grad = np.zeros((self.n_classes, self.design.shape[1]))
        for c, rows in self.blocks():
            grad[c] = grad_scores_sorted[rows] @ self.design[rows]
        return grad


class PerClassLinearScore(BaseEstimator):
    """Base class of scores ``s(x) = <w_{h(x)}, x> + b_{h(x)}`` (eq. 37 of [1]).

    Subclasses implement ``_fit_parameters(layout, target)`` returning a
    (K, d+1) array ``[w_c, b_c]`` in standardised feature space.

    Classes never predicted in the training data get zero weights and the bias
    ``unseen_class_score_`` (the largest training uncertainty), so their inputs
    are treated as at least as uncertain as the most uncertain training example.
    Predicted class indices ``>= n_classes_`` at predict time are handled the same way.

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Eq. (37).

    """

    def _validate_fit_data(self, X, y_pred, target, target_name):
        X = check_array(X, dtype=np.float64)
        target = check_1d(np.asarray(target, dtype=np.float64), target_name)
        check_consistent_length(X, target)
        if not np.all(np.isfinite(target)):
            raise ValueError(f"{target_name} contains NaN or infinite values")
        classes, n_classes = check_predicted_classes(y_pred, X.shape[0], self.n_classes)
        if classes.size and classes.max() >= n_classes:
            raise ValueError(f"y_pred contains class {classes.max()} but n_classes={n_classes}")
        return X, classes, n_classes, target

    def _prepare_layout(self, X, y_pred, target, target_name):
        X, classes, n_classes, target = self._validate_fit_data(X, y_pred, target, target_name)
        self.mean_, self.scale_ = feature_statistics(X, self.standardize)
        self.n_features_in_ = X.shape[1]
        self.n_classes_ = n_classes
        self.structured_ = y_pred is None
        layout = ClassLayout(X, classes, n_classes, self.mean_, self.scale_)
        self.class_seen_ = layout.counts > 0
        return layout, target[layout.order]

    def _set_parameters(self, theta, layout, unseen_score):
        """Store ``theta`` (K, d+1) as ``coef_``/``intercept_`` with the unseen-class rule."""
        theta = np.array(theta, dtype=np.float64)
        theta[~self.class_seen_] = 0.0
        self.unseen_class_score_ = float(unseen_score)
        theta[~self.class_seen_, -1] = self.unseen_class_score_
        self.coef_ = theta[:, :-1]
        self.intercept_ = theta[:, -1]

    def _raw_scores(self, X, y_pred):
        """Linear score of eq. (37) for new data, without any sign convention."""
        check_is_fitted(self, ["coef_", "intercept_"])
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the score was fitted with {self.n_features_in_}"
            )
        if self.structured_ and y_pred is not None:
            raise ValueError(
                "the score was fitted in structured-output mode (y_pred=None); pass y_pred=None"
            )
        if not self.structured_ and y_pred is None:
            raise ValueError("the score was fitted per predicted class; y_pred is required")
        classes, _ = check_predicted_classes(y_pred, X.shape[0], self.n_classes_)
        Z = (X - self.mean_) / self.scale_
        known = classes < self.n_classes_
        safe = np.where(known, classes, 0)
        s = np.einsum("ij,ij->i", Z, self.coef_[safe]) + self.intercept_[safe]
        s[~known] = self.unseen_class_score_
        return s

    # ----------------------------------------------------------------------------------------
    # JSON round trip (plain numbers only: loading a score cannot run code)
    # ----------------------------------------------------------------------------------------
    def to_dict(self):
        """JSON-able parameters of the fitted score: everything :meth:`predict` needs.

        ``kind`` is the name under which the class is registered
        (:func:`rejectopt.scores.register_score`); :meth:`from_dict` dispatches on it.
        ``structured`` is written only for a score fitted with ``y_pred=None``.
        """
        check_is_fitted(self, ["coef_", "intercept_"])
        kinds = [name for name, info in SCORES.items() if info.cls is type(self)]
        if not kinds:
            raise ValueError(
                f"{type(self).__name__} is not a registered score: to_dict needs its registered name"
            )
        data = {
            "kind": kinds[0],
            "C": float(self.C),
            "n_classes": int(self.n_classes_),
            "n_features": int(self.n_features_in_),
            "mean": self.mean_.tolist(),
            "scale": self.scale_.tolist(),
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_.tolist(),
            "unseen_class_score": float(self.unseen_class_score_),
            "class_seen": [bool(v) for v in self.class_seen_],
        }
        if self.structured_:
            data["structured"] = True
        return data

    @classmethod
    def from_dict(cls, data, *, name="score"):
        """Rebuild a fitted score from :meth:`to_dict` output, validating every field.

        The class is looked up in the score registry by ``data["kind"]`` (it must be a
        subclass of ``cls``). Checked: keys (none missing, none unknown), types (JSON
        numbers, not strings or booleans), lengths, finite values, ``scale > 0``,
        ``n_classes`` / ``n_features`` >= 1. ``name`` prefixes the field names in messages
        (``score.scale[3]``).

        Raises
        ------
        ValueError
            Naming the first bad field.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{name} must be an object, got {type(data).__name__}")
        required = {
            "kind",
            "C",
            "n_classes",
            "n_features",
            "mean",
            "scale",
            "coef",
            "intercept",
            "unseen_class_score",
            "class_seen",
        }
        missing = sorted(required - set(data))
        if missing:
            raise ValueError(f"{name}: missing keys {missing}")
        unknown = sorted(map(str, set(data) - required - {"structured"}))
        if unknown:
            raise ValueError(f"{name}: unknown keys {unknown}")
        kind = data["kind"]
        if not isinstance(kind, str) or kind not in SCORES:
            raise ValueError(f"{name}.kind: {SCORES.unknown_message(kind)}")
        score_cls = SCORES.get(kind).cls
        if not (isinstance(score_cls, type) and issubclass(score_cls, cls)):
            raise ValueError(f"{name}.kind: score {kind!r} is not a {cls.__name__}")
        K = _json_int(data["n_classes"], f"{name}.n_classes")
        d = _json_int(data["n_features"], f"{name}.n_features")
        C = _json_numbers(data["C"], (), f"{name}.C")
        if C < 0:
            raise ValueError(f"{name}.C must be >= 0, got {_brief(data['C'])}")
        width = score_cls._standardised_width(d) if hasattr(score_cls, "_standardised_width") else d
        mean = _json_numbers(data["mean"], (width,), f"{name}.mean")
        scale = _json_numbers(data["scale"], (width,), f"{name}.scale")
        if (scale <= 0).any():
            j = int(np.flatnonzero(scale <= 0)[0])
            raise ValueError(f"{name}.scale[{j}] must be > 0, got {_brief(data['scale'][j])}")
        coef = _json_numbers(data["coef"], (K, width), f"{name}.coef")
        intercept = _json_numbers(data["intercept"], (K,), f"{name}.intercept")
        unseen = float(_json_numbers(data["unseen_class_score"], (), f"{name}.unseen_class_score"))
        seen = data["class_seen"]
        if (
            not isinstance(seen, list)
            or len(seen) != K
            or not all(isinstance(v, bool) for v in seen)
        ):
            raise ValueError(
                f"{name}.class_seen must be a list of {K} booleans (true/false), one per class"
            )
        structured = data.get("structured", False)
        if not isinstance(structured, bool) or (structured and K != 1):
            raise ValueError(
                f"{name}.structured must be true (with n_classes 1) or false, got {_brief(structured)}"
            )
        score = SCORES.get(kind).make(float(C), n_classes=K)
        score.mean_, score.scale_, score.coef_, score.intercept_ = mean, scale, coef, intercept
        score.n_classes_, score.n_features_in_ = K, d
        score.unseen_class_score_, score.class_seen_ = unseen, np.array(seen, dtype=bool)
        score.structured_ = structured
        if hasattr(score, "_restored"):  # a score on features of its inputs (the class-shared ones)
            score._restored()
        return score


def _json_int(value, field):
    """A JSON integer >= 1 (not a boolean, not a float)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{field} must be an integer >= 1, got {_brief(value)}")
    return value


def _json_numbers(value, shape, field):
    """Nested JSON lists of finite numbers of exactly ``shape`` as float64 (a float for ``shape=()``)."""
    if not shape:
        if not _is_finite_number(value):
            raise ValueError(f"{field} must be a finite number, got {_brief(value)}")
        return float(value)
    if not isinstance(value, list) or len(value) != shape[0]:
        got = f"a list of {len(value)}" if isinstance(value, list) else type(value).__name__
        raise ValueError(
            f"{field} must be a list of {shape[0]} {'lists' if len(shape) > 1 else 'numbers'}, got {got}"
        )
    if len(shape) > 1:
        return np.array(
            [_json_numbers(row, shape[1:], f"{field}[{i}]") for i, row in enumerate(value)],
            dtype=np.float64,
        ).reshape(shape)
    for i, v in enumerate(value):
        if not _is_finite_number(v):
            raise ValueError(f"{field}[{i}] must be a finite number, got {_brief(v)}")
    return np.array(value, dtype=np.float64)


def _is_finite_number(value):
    """A finite JSON number: int or float, not a boolean, representable as a finite float64."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:  # an integer beyond the float range
        return False


def _brief(value):
    """Short ``repr`` of a (possibly huge or deeply nested) JSON value for messages."""
    return reprlib.repr(value)
