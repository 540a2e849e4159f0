"""Gradient-boosted trees (XGBoost) as a third classifier, selected on Val1 like LR.

XGBoost has no regularisation constant ``C``: its "grid" is the small
hyper-parameter grid :data:`XGB_GRID` (tree depth x learning rate). Trees need
no feature scaling, so the model sees raw features. :func:`train_xgb` selects
in two phases:

1. every grid point is boosted on Trn1 for at most :data:`XGB_SELECTION_ROUNDS`
   rounds, with early stopping on Val1 (the log-loss of the Val1 examples,
   patience :data:`XGB_EARLY_STOPPING_ROUNDS`); the point with the smallest
   Val1 error wins;
2. only the winner, if it was still improving at the cap, is boosted on, up to
   :data:`XGB_MAX_ROUNDS` rounds with the same early stopping.

Why: the cost is the number of boosting rounds. A round grows one
tree per class, and the hundreds to thousands of rounds of a grid cost far
more than building the matrices: sharing them saves little, the rounds are
what to cut. The two phases take about half the rounds,
and half the time, of boosting every point to its own early stop on avila
split 0 and fewer on pendigit, and on split 0 of avila, pendigit, sattelite,
shuttle and letter they choose the same grid point with the same rounds, so
the same model and Val1 log-loss (``benchmarks/bench_xgb.py``; measured:
``benchmarks/measured_records.csv``, topic ``xgb_rounds``). ``max_bin``
stays XGBoost's 256: 64 bins raised avila's Val1 log-loss at 300 rounds by
about as much as they saved in time (topic ``xgb_max_bin``).

The Trn1 histogram matrix (``xgboost.QuantileDMatrix``) and the Val1 matrix
(quantised with Trn1's cuts) are built once and shared by every grid point.
Boosting runs round by round through XGBoost's native ``Booster`` with the
early-stopping rule of ``xgboost.train``, so a booster paused at the selection
cap resumes exactly where it stopped: the chosen model is bit-identical to
:class:`XGBLabelSpaceClassifier` fitted alone at that grid point, which is
bit-identical to the ``xgboost.XGBClassifier`` used before (same parameters,
early stopping and probabilities). ``n_jobs``
threads are used for everything (matrices, boosting, prediction) and no more;
``tree_method="hist"`` with no subsampling makes the result deterministic for
a fixed ``n_jobs``.

``xgboost`` is imported lazily: the rest of :mod:`rejectopt` works without it.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ..scores import mcp

__all__ = [
    "XGB_EARLY_STOPPING_ROUNDS",
    "XGB_GRID",
    "XGB_MAX_ROUNDS",
    "XGB_SELECTION_ROUNDS",
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
#: Upper bound on the number of boosting rounds (trees per class) of the chosen model.
XGB_MAX_ROUNDS = 1000
#: Stop when the Val1 log-loss has not improved for this many rounds.
XGB_EARLY_STOPPING_ROUNDS = 20
#: Round cap of every grid point while the grid is compared (phase 1 of :func:`train_xgb`):
#: the smallest of 100, 150, 200, 300 that chose the same point as uncapped selection
#: on split 0 of avila (200 chose depth 6 and a 12 % higher Val1 log-loss), pendigit,
#: sattelite, shuttle and letter.
XGB_SELECTION_ROUNDS = 300


def _import_xgboost():
    try:
        import xgboost  # xgboost: heavy, only an XGBoost fit needs it
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the 'xgb' classifier needs the xgboost package: pip install 'rejectopt[xgboost]' "
            "(XGBoost's CPU build, also in the pipeline extra) or pip install xgboost (its CUDA "
            "build)"
        ) from err
    return xgboost


def _check_n_jobs(n_jobs):
    """``n_jobs`` as a positive int: XGBoost reads ``nthread <= 0`` as "every core", more than asked for."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer (XGBoost threads), got {n_jobs!r}")
    return int(n_jobs)


class _Matrices:
    """Trn1 and Val1 as XGBoost matrices, built once and shared by every booster trained on them.

    Labels are encoded to ``0..m-1`` over the classes present in Trn1
    (``classes``). The Val1 matrix holds only the examples of those classes
    (the others cannot enter the log-loss) and is quantised with Trn1's cuts.
    """

    def __init__(self, X, y, X_val, y_val, n_classes, n_jobs):
        xgboost = _import_xgboost()
        X = check_array(X, dtype=float)
        y = np.asarray(y).astype(np.int64)
        check_consistent_length(X, y)
        self.classes = np.unique(y)
        if self.classes.size < 2:
            raise ValueError(
                f"xgb needs at least two classes in training, got {self.classes.tolist()}"
            )
        self.n_classes = int(self.classes.max()) + 1 if n_classes is None else int(n_classes)
        if self.classes.max() >= self.n_classes:
            raise ValueError(f"label {self.classes.max()} >= n_classes={self.n_classes}")
        self.n_jobs = _check_n_jobs(n_jobs)
        self.n_features = X.shape[1]
        self.train = xgboost.QuantileDMatrix(
            X, np.searchsorted(self.classes, y), nthread=self.n_jobs
        )
        self.val = None
        if X_val is not None:
            X_val = check_array(X_val, dtype=float)
            y_val = np.asarray(y_val).astype(np.int64)
            check_consistent_length(X_val, y_val)
            known = np.isin(y_val, self.classes)
            if not known.any():
                raise ValueError(
                    "no validation example belongs to a class seen in training; cannot early-stop"
                )
            self.val = xgboost.QuantileDMatrix(
                X_val[known],
                np.searchsorted(self.classes, y_val[known]),
                ref=self.train,
                nthread=self.n_jobs,
            )

    def params(self, max_depth, learning_rate, random_state):
        """Booster parameters, as ``xgboost.XGBClassifier`` sets them for these labels."""
        binary = self.classes.size == 2
        params = {
            "objective": "binary:logistic" if binary else "multi:softprob",
            "eval_metric": "logloss" if binary else "mlogloss",
            "max_depth": int(max_depth),
            "learning_rate": float(learning_rate),
            "tree_method": "hist",
            "random_state": int(random_state),
            "nthread": self.n_jobs,
            "verbosity": 0,
        }
        if not binary:
            params["num_class"] = int(self.classes.size)
        return params


class _Boosting:
    """One booster grown round by round with ``xgboost.train``'s early-stopping rule.

    Without a validation matrix or patience every round counts; otherwise a
    round is the best when its Val1 log-loss is strictly below every earlier
    one, and boosting stops after ``patience`` rounds without a new best.
    :meth:`run` can be called again with a larger cap: it resumes the same
    booster, so pausing changes nothing.
    """

    def __init__(self, matrices, params, patience):
        xgboost = _import_xgboost()
        self.matrices = matrices
        self.patience = patience if matrices.val is not None and patience else None
        self.booster = xgboost.Booster(
            params, [matrices.train] + ([matrices.val] if self.patience else [])
        )
        self.rounds, self.best_iteration, self.best_score, self.stopped = 0, -1, np.inf, False

    def run(self, max_rounds):
        """Boost until ``max_rounds`` rounds are done or early stopping fires; return self."""
        while self.rounds < max_rounds and not self.stopped:
            self.booster.update(self.matrices.train, self.rounds)
            if self.patience is None:
                self.best_iteration = self.rounds
            else:
                result = self.booster.eval_set([(self.matrices.val, "val1")], self.rounds)
                score = float(result.rsplit(":", 1)[1])
                if self.rounds == 0 or score < self.best_score:
                    self.best_iteration, self.best_score = self.rounds, score
                self.stopped = self.rounds - self.best_iteration >= self.patience
            self.rounds += 1
        return self


class XGBLabelSpaceClassifier(ClassifierMixin, BaseEstimator):
    """XGBoost gradient-boosted trees on a fixed global label space ``0..n_classes-1``.

    XGBoost requires the training labels to be exactly ``0..m-1``. This wrapper
    encodes the classes present in training to ``0..m-1``, trains the booster
    (``tree_method="hist"``, seeded, early stopping on a validation set) and maps
    the probabilities back to the global label space, with probability 0 for the
    classes absent from training -- as :func:`classifier_outputs` does for LR.
    The booster is XGBoost's native ``Booster`` with the parameters, early
    stopping and probabilities of ``xgboost.XGBClassifier`` (same model, same
    predictions), trained round by round so that :func:`train_xgb` can share
    its matrices across a grid and pause a booster.

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
        ``fit`` gets a validation set (None or 0: no early stopping).
    random_state : int, default=0
        Seed of XGBoost (``tree_method="hist"`` with no row or column
        subsampling is deterministic for a fixed ``n_jobs``).
    n_jobs : int, default=1
        Threads of XGBoost for the matrices, the boosting and the predictions;
        a positive integer (ValueError otherwise).

    Attributes
    ----------
    classes_ : ndarray of int
        The global labels present in training (sorted); column ``j`` of the
        booster's probabilities belongs to ``classes_[j]``.
    n_classes_ : int
        Size of the global label space.
    booster_ : xgboost.Booster
        The fitted booster (on encoded labels), cut to its first
        ``best_iteration_ + 1`` rounds.
    best_iteration_ : int
        Rounds kept minus one (the early-stopping optimum; the last round without it).
    capped_ : bool
        Whether boosting with early stopping reached ``n_estimators`` rounds before the stopping
        rule fired (the round cap, not convergence, ended it).
    n_features_in_ : int
    """

    def __init__(
        self,
        *,
        n_classes=None,
        max_depth=6,
        learning_rate=0.3,
        n_estimators=XGB_MAX_ROUNDS,
        early_stopping_rounds=XGB_EARLY_STOPPING_ROUNDS,
        random_state=0,
        n_jobs=1,
    ):
        self.n_classes = n_classes
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on ``(X, y)``; early-stop on ``(X_val, y_val)`` when given.

        Validation examples whose class is absent from ``y`` cannot enter
        XGBoost's log-loss and are left out of the early-stopping criterion
        only (they still count in the Val1 error of :func:`train_xgb`).

        Returns
        -------
        self
        """
        matrices = _Matrices(X, y, X_val, y_val, self.n_classes, self.n_jobs)
        return self._finish(matrices, self._start(matrices).run(int(self.n_estimators)))

    def _start(self, matrices):
        """An unstarted :class:`_Boosting` of this model's hyper-parameters on shared ``matrices``."""
        params = matrices.params(self.max_depth, self.learning_rate, self.random_state)
        return _Boosting(matrices, params, self.early_stopping_rounds)

    def _finish(self, matrices, boosting):
        """Take the fitted state from ``boosting`` (its booster cut to the best round); return self."""
        self.classes_ = matrices.classes
        self.n_classes_ = matrices.n_classes
        self.n_features_in_ = matrices.n_features
        self.best_iteration_ = int(boosting.best_iteration)
        # boosted to its round cap before early stopping fired: the Val1 log-loss had improved within
        # the last `patience` rounds (logged as a fit stopped at its iteration cap)
        self.capped_ = bool(
            boosting.patience and not boosting.stopped and boosting.rounds >= int(self.n_estimators)
        )
        self.booster_ = boosting.booster[: self.best_iteration_ + 1]
        self.booster_.set_param({"nthread": matrices.n_jobs})
        return self

    def predict_proba(self, X):
        """Class probabilities in the global label space, shape (n, ``n_classes_``); absent classes get 0."""
        check_is_fitted(self, "booster_")
        X = check_array(X, dtype=float)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}"
            )
        p = self.booster_.inplace_predict(X)  # float32, as XGBClassifier.predict_proba
        if p.ndim == 1:  # binary:logistic gives p(second class)
            p = np.column_stack([1.0 - p, p])
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
        return {
            "max_depth": int(self.max_depth),
            "learning_rate": float(self.learning_rate),
            "n_estimators": self.best_iteration_ + 1,
        }


def _check_grid(grid):
    grid = tuple(dict(point) for point in grid)
    if not grid:
        raise ValueError("the xgb hyper-parameter grid is empty")
    allowed = {"max_depth", "learning_rate", "n_estimators", "early_stopping_rounds"}
    for point in grid:
        unknown = set(point) - allowed
        if unknown:
            raise ValueError(
                f"unknown xgb hyper-parameter(s) {sorted(unknown)}; allowed: {sorted(allowed)}"
            )
    return grid


def _check_selection_rounds(selection_rounds):
    if selection_rounds is None:
        return None
    if (
        isinstance(selection_rounds, bool)
        or not isinstance(selection_rounds, numbers.Integral)
        or selection_rounds < 1
    ):
        raise ValueError(
            f"selection_rounds must be a positive integer or None, got {selection_rounds!r}"
        )
    return int(selection_rounds)


def train_xgb(
    X_trn,
    y_trn,
    X_val,
    y_val,
    grid=XGB_GRID,
    random_state=0,
    n_classes=None,
    error=None,
    n_jobs=1,
    selection_rounds=XGB_SELECTION_ROUNDS,
):
    """Boost every grid point on Trn1 up to a round cap, keep the best on Val1, boost it on.

    Phase 1: each point of ``grid`` is boosted for at most
    ``min(selection_rounds, n_estimators)`` rounds with early stopping on the
    Val1 log-loss, all on one shared pair of Trn1 / Val1 matrices; its Val1
    error is that of the booster at its best round. Phase 2: the point with the
    smallest error, if it reached the cap without early stopping, is boosted on
    to its ``n_estimators`` (default :data:`XGB_MAX_ROUNDS`) with the same early
    stopping, as if it had never paused. ``selection_rounds=None`` boosts every
    point to its own stop (the earlier full-length selection: about twice the
    rounds on avila, see the module docstring).

    Parameters
    ----------
    X_trn, y_trn, X_val, y_val : arrays
        Trn1 and Val1; integer labels in ``0..n_classes-1``.
    grid : sequence of dict, default=XGB_GRID
        Hyper-parameter points (keys ``max_depth``, ``learning_rate`` and
        optionally ``n_estimators``, ``early_stopping_rounds``).
    random_state : int, default=0
        Seed of XGBoost.
    n_classes : int or None, default=None
        Size of the global label space; None -> ``max(y_trn) + 1``.
    error : callable or None
        ``error(y_true, y_pred) -> float``; None -> fraction misclassified.
    n_jobs : int, default=1
        XGBoost threads, a positive integer. More than one buys little at
        these sizes and collapses when the cores are shared (OpenMP threads
        wait for each other every tree): on pendigit split 0 two threads took
        barely less time than one for twice the CPU, and many times more
        beside two busy processes on two cores (measured:
        ``benchmarks/measured_records.csv``, topic ``xgb_threads``).
    selection_rounds : int or None, default=XGB_SELECTION_ROUNDS
        Round cap of phase 1; None for no cap.

    Returns
    -------
    model : XGBLabelSpaceClassifier
        The chosen fitted model, bit-identical to
        ``XGBLabelSpaceClassifier(**point).fit(X_trn, y_trn, X_val, y_val)``
        at its grid point; ``model.best_params_`` holds its hyper-parameters
        and ``model.grid_index_`` its index in ``grid``.
    index : float
        Index of the chosen grid point (a float, stored where LR stores ``C``):
        smallest phase-1 Val1 error, ties -> the earlier grid point.
    errors : dict
        ``float(index) -> phase-1 Val1 error``, the errors that chose the point
        (for the chosen point, the returned model's error whenever phase 2 did
        not boost it on).
    """
    grid = _check_grid(grid)
    selection_rounds = _check_selection_rounds(selection_rounds)
    if error is None:

        def error(y_true, y_pred):
            return float(np.mean(y_true != y_pred))

    y_val = np.asarray(y_val).astype(np.int64)
    X_val = check_array(X_val, dtype=float)
    matrices = _Matrices(X_trn, y_trn, X_val, y_val, n_classes, n_jobs)
    best, errors = None, {}
    for index, point in enumerate(grid):
        model = XGBLabelSpaceClassifier(
            n_classes=n_classes, random_state=random_state, n_jobs=n_jobs, **point
        )
        boosting = model._start(matrices)
        rounds = int(model.n_estimators)
        boosting.run(rounds if selection_rounds is None else min(selection_rounds, rounds))
        errors[float(index)] = error(y_val, model._finish(matrices, boosting).predict(X_val))
        if best is None or errors[float(index)] < best[2]:
            best = (model, boosting, errors[float(index)], float(index))
    model, boosting, _, index = best
    if boosting.rounds < int(model.n_estimators) and not boosting.stopped:
        model._finish(matrices, boosting.run(int(model.n_estimators)))
    model.grid_index_ = int(index)
    return model, index, errors


def xgb_outputs(model, X):
    """Predictions, MCP baseline and probabilities of a fitted :class:`XGBLabelSpaceClassifier`.

    Parameters
    ----------
    model : XGBLabelSpaceClassifier
        Fitted.
    X : array-like of shape (n, d)
        The examples.

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
