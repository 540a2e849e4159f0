"""Gradient-boosted trees (XGBoost) as a third classifier, selected on Val1 like LR.

XGBoost has no regularisation constant ``C``: its "grid" is the small
hyper-parameter grid :data:`XGB_GRID` (tree depth x learning rate). Every grid
point is trained on Trn1 with up to :data:`XGB_MAX_ROUNDS` boosting rounds and
early stopping on Val1 (the log-loss of the Val1 examples, patience
:data:`XGB_EARLY_STOPPING_ROUNDS`); the grid point with the smallest Val1
error is kept. Trees need no feature scaling, so the model sees raw features.

``xgboost`` is imported lazily: the rest of :mod:`rejectopt` works without it.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ..scores import mcp

__all__ = [
    "XGB_EARLY_STOPPING_ROUNDS",
    "XGB_GRID",
    "XGB_MAX_ROUNDS",
    "XGBLabelSpaceClassifier",
    "train_xgb",
    "xgb_outputs",
]

#: The hyper-parameter grid searched on Val1, in this order; the grid index is
#: what :func:`train_xgb` reports in place of ``C`` (the summary's ``C_classifier``).
XGB_GRID = (
    {"max_depth": 3, "learning_rate": 0.1},
    {"max_depth": 3, "learning_rate": 0.3},
    {"max_depth": 6, "learning_rate": 0.1},
    {"max_depth": 6, "learning_rate": 0.3},
)
#: Upper bound on the number of boosting rounds (trees per class).
XGB_MAX_ROUNDS = 1000
#: Stop when the Val1 log-loss has not improved for this many rounds.
XGB_EARLY_STOPPING_ROUNDS = 20


def _import_xgboost():
    try:
        import xgboost
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the 'xgb' classifier needs the xgboost package: pip install xgboost") from err
    return xgboost


class XGBLabelSpaceClassifier(ClassifierMixin, BaseEstimator):
    """``xgboost.XGBClassifier`` on a fixed global label space ``0..n_classes-1``.

    XGBoost requires the training labels to be exactly ``0..m-1``. This wrapper
    encodes the classes present in training to ``0..m-1``, trains the booster
    (``tree_method="hist"``, seeded, early stopping on a validation set) and maps
    the probabilities back to the global label space, with probability 0 for the
    classes absent from training -- as :func:`classifier_outputs` does for LR.

    Parameters
    ----------
    n_classes : int or None, default=None
        Size of the global label space; None -> ``max(y) + 1`` at fit.
    max_depth : int, default=6
    learning_rate : float, default=0.3
    n_estimators : int, default=XGB_MAX_ROUNDS
        Maximum number of boosting rounds.
    early_stopping_rounds : int or None, default=XGB_EARLY_STOPPING_ROUNDS
        Patience of early stopping on the validation log-loss; used only when
        ``fit`` gets a validation set.
    random_state : int, default=0
        Seed of XGBoost (``tree_method="hist"`` with no row or column
        subsampling is deterministic for a fixed ``n_jobs``).
    n_jobs : int, default=1
        Threads of XGBoost.

    Attributes
    ----------
    classes_ : ndarray of int
        The global labels present in training (sorted); column ``j`` of the
        booster's probabilities belongs to ``classes_[j]``.
    n_classes_ : int
        Size of the global label space.
    booster_ : xgboost.XGBClassifier
        The fitted booster (on encoded labels).
    best_iteration_ : int
        Rounds kept minus one (the early-stopping optimum; the last round without it).
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = XGBLabelSpaceClassifier(n_classes=4, n_estimators=20).fit(X, y)
    >>> clf.predict_proba(X[:1]).shape
    (1, 4)
    """

    def __init__(self, *, n_classes=None, max_depth=6, learning_rate=0.3, n_estimators=XGB_MAX_ROUNDS,
                 early_stopping_rounds=XGB_EARLY_STOPPING_ROUNDS, random_state=0, n_jobs=1):
        self.n_classes = n_classes
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _make_booster(self, with_validation):
        xgboost = _import_xgboost()
        return xgboost.XGBClassifier(
            n_estimators=int(self.n_estimators),
            max_depth=int(self.max_depth),
            learning_rate=float(self.learning_rate),
            tree_method="hist",
            random_state=int(self.random_state),
            n_jobs=int(self.n_jobs),
            early_stopping_rounds=self.early_stopping_rounds if with_validation else None,
            verbosity=0,
        )

    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on ``(X, y)``; early-stop on ``(X_val, y_val)`` when given.

        Validation examples whose class is absent from ``y`` cannot enter
        XGBoost's log-loss and are left out of the early-stopping criterion
        only (they still count in the Val1 error of :func:`train_xgb`).

        Returns
        -------
        self
        """
        X = check_array(X, dtype=float)
        y = np.asarray(y).astype(np.int64)
        check_consistent_length(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"xgb needs at least two classes in training, got {self.classes_.tolist()}")
        self.n_classes_ = int(self.classes_.max()) + 1 if self.n_classes is None else int(self.n_classes)
        if self.classes_.max() >= self.n_classes_:
            raise ValueError(f"label {self.classes_.max()} >= n_classes={self.n_classes_}")
        eval_set = self._encoded_validation_set(X_val, y_val)
        self.booster_ = self._make_booster(eval_set is not None)
        self.booster_.fit(X, np.searchsorted(self.classes_, y),
                          eval_set=None if eval_set is None else [eval_set], verbose=False)
        best = getattr(self.booster_, "best_iteration", None)
        self.best_iteration_ = int(best) if best is not None else int(self.n_estimators) - 1
        self.n_features_in_ = X.shape[1]
        return self

    def _encoded_validation_set(self, X_val, y_val):
        if X_val is None:
            return None
        X_val = check_array(X_val, dtype=float)
        y_val = np.asarray(y_val).astype(np.int64)
        check_consistent_length(X_val, y_val)
        known = np.isin(y_val, self.classes_)
        if not known.any():
            raise ValueError("no validation example belongs to a class seen in training; cannot early-stop")
        return X_val[known], np.searchsorted(self.classes_, y_val[known])

    def predict_proba(self, X):
        """Class probabilities in the global label space, shape (n, n_classes_); absent classes get 0."""
        check_is_fitted(self, "booster_")
        X = check_array(X, dtype=float)
        p = self.booster_.predict_proba(X)  # uses best_iteration after early stopping
        p = np.asarray(p, dtype=float)
        p /= p.sum(axis=1, keepdims=True)  # float32 booster output -> rows sum to 1 in float64
        proba = np.zeros((X.shape[0], self.n_classes_))
        proba[:, self.classes_] = p
        return proba

    def predict(self, X):
        """``argmax_y p(y|x)`` in the global label space (ties -> smaller label)."""
        return np.argmax(self.predict_proba(X), axis=1).astype(np.int64)

    @property
    def best_params_(self):
        """The hyper-parameters that define the fitted model, rounds included (JSON-able)."""
        check_is_fitted(self, "booster_")
        return {"max_depth": int(self.max_depth), "learning_rate": float(self.learning_rate),
                "n_estimators": self.best_iteration_ + 1}


def _check_grid(grid):
    grid = tuple(dict(point) for point in grid)
    if not grid:
        raise ValueError("the xgb hyper-parameter grid is empty")
    allowed = {"max_depth", "learning_rate", "n_estimators", "early_stopping_rounds"}
    for point in grid:
        unknown = set(point) - allowed
        if unknown:
            raise ValueError(f"unknown xgb hyper-parameter(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    return grid


def train_xgb(X_trn, y_trn, X_val, y_val, grid=XGB_GRID, random_state=0, n_classes=None,
              error=None, n_jobs=1):
    """Train one booster per grid point on Trn1 and keep the best on Val1.

    Parameters
    ----------
    X_trn, y_trn, X_val, y_val : arrays
        Trn1 and Val1; integer labels in ``0..n_classes-1``.
    grid : sequence of dict, default=XGB_GRID
        Hyper-parameter points (keys ``max_depth``, ``learning_rate`` and
        optionally ``n_estimators``, ``early_stopping_rounds``).
    random_state : int, default=0
    n_classes : int or None, default=None
    error : callable or None
        ``error(y_true, y_pred) -> float``; None -> fraction misclassified.
    n_jobs : int, default=1
        XGBoost threads.

    Returns
    -------
    model : XGBLabelSpaceClassifier
        The chosen fitted model; ``model.best_params_`` holds its
        hyper-parameters and ``model.grid_index_`` its index in ``grid``.
    index : float
        Index of the chosen grid point (a float, stored where LR stores ``C``):
        smallest Val1 error, ties -> the earlier grid point.
    errors : dict
        ``float(index) -> Val1 error``.
    """
    grid = _check_grid(grid)
    if error is None:
        def error(y_true, y_pred):
            return float(np.mean(y_true != y_pred))
    y_val = np.asarray(y_val).astype(np.int64)
    best, errors = None, {}
    for index, point in enumerate(grid):
        model = XGBLabelSpaceClassifier(n_classes=n_classes, random_state=random_state, n_jobs=n_jobs, **point)
        model.fit(X_trn, y_trn, X_val, y_val)
        errors[float(index)] = error(y_val, model.predict(X_val))
        if best is None or errors[float(index)] < best[2]:
            best = (model, float(index), errors[float(index)])
    best[0].grid_index_ = int(best[1])
    return best[0], best[1], errors


def xgb_outputs(model, X):
    """Predictions, MCP baseline and probabilities of a fitted :class:`XGBLabelSpaceClassifier`.

    Returns
    -------
    dict
        ``y_pred`` (n,) int64 argmax of ``proba`` in ``0..K-1``; ``baseline`` (n,)
        ``MCP = 1 - max_y p(y|x)``; ``proba`` (n, K), zero columns for classes
        absent from training.
    """
    proba = model.predict_proba(X)
    return {
        "y_pred": np.argmax(proba, axis=1).astype(np.int64),
        "baseline": mcp(proba),
        "proba": proba,
    }
