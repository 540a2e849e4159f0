"""Linear classifiers of section 5.2.1: multinomial logistic regression and linear SVMs."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._crammer_singer import CrammerSingerSVM
from ._svor import SVOR, set_solver_certificate, solve_threshold_hinge_qp

__all__ = ["BinaryHingeSVM", "C_GRID", "make_classifier", "loss_weights", "KINDS"]

#: The linear models built by :func:`make_classifier` (registered in ``_training``).
KINDS = ("lr", "svm", "svor")
#: The classifiers' C grid of section 5.2 (selected by Val1 error or MAE).
C_GRID = (1, 10, 100, 1000)

#: Iteration cap for LR (Newton needs a few dozen, lbfgs up to a few thousand); a safety margin.
LR_MAX_ITER = 10_000
LR_TOL = 1e-6
#: Crammer-Singer SVM: the relative duality gap at which :class:`CrammerSingerSVM` stops.
CS_TOL = 1e-3


class BinaryHingeSVM(ClassifierMixin, BaseEstimator):
    """Binary linear SVM with an unregularised bias, solved exactly.

    Minimises ``||w||^2/2 + C/n sum_i max(0, 1 - y_i (<w, x_i> + b))`` with
    ``y_i in {-1, +1}`` encoded as labels ``{0, 1}`` (section 5.2.1 of [1], the
    binary case); other two labels are mapped in sorted order, the second one positive. This is
    SVOR with two classes and one threshold ``-b``, so it is solved by the same interior point method
    (:func:`~rejectopt.classifiers._svor.solve_threshold_hinge_qp`), with a
    certified duality gap. Unlike liblinear's ``LinearSVC``, the bias is not
    regularised.

    Parameters
    ----------
    C : float, default=1.0
        Loss weight: ``C/n`` times the summed hinge loss.
    tol : float, default=1e-6
        Relative duality gap at which to stop.
    max_iter : int, default=200
    random_state : int, default=0
        Unused (deterministic solver).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    classes_ : ndarray of shape (2,)
        ``[0, 1]`` for labels in {0, 1} (also when ``y`` holds one of them); else the two labels.
    n_classes_ : int, 2
    objective_, gap_, rel_gap_ : float
        Primal objective and certified duality gap.
    n_iter_ : int

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Section 5.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> BinaryHingeSVM(C=100.0).fit(X, [0, 0, 1, 1]).predict(X).tolist()
    [0, 0, 1, 1]
    """

    def __init__(self, *, C=1.0, tol=1e-6, max_iter=200, random_state=0):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on two labels (``{0, 1}`` or any two, the second in sorted order positive); returns self."""
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(
            y
        )  # "Unknown label type" for a continuous y, as scikit-learn's classifiers say
        labels = np.unique(y)
        if labels.dtype.kind in "biuf" and np.isin(labels, [0, 1]).all():
            classes = np.array(
                [0, 1]
            )  # the pipeline's encoding, also when a split holds one of them
        elif labels.size == 2:
            classes = labels
        else:
            prefix = "" if labels.size < 2 else "Only binary classification is supported: "
            raise ValueError(
                f"{prefix}BinaryHingeSVM needs two classes, got {labels.size} class(es): "
                f"{labels[:5].tolist()}{' ...' if labels.size > 5 else ''}"
            )
        w, b, info = solve_threshold_hinge_qp(
            X,
            (y == classes[1]).astype(np.int64),
            1,
            float(self.C),
            tol=self.tol,
            max_iter=self.max_iter,
        )
        self.coef_ = w
        self.intercept_ = float(-b[0])
        self.classes_ = classes
        self.n_classes_ = 2
        self.n_features_in_ = X.shape[1]
        set_solver_certificate(self, info)
        return self

    def decision_function(self, X):
        """``<w, x> + b``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_ + self.intercept_

    def predict(self, X):
        """``classes_[1]`` where ``<w, x> + b > 0``, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0  # checks first that the model is fitted
        return self.classes_[positive.astype(np.intp)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = (
            False  # a binary model: scikit-learn's checks skip multiclass problems
        )
        return tags


#: Largest number of LR parameters ``(d + 1) K`` for which the Newton solver is used.
NEWTON_MAX_PARAMS = 250


def lr_solver(n_features, n_classes):
    """The faster exact solver for multinomial LR of this size.

    ``newton-cholesky`` needs a dozen or so steps at any C but each costs
    ``O(n ((d+1) K)^2)``; ``lbfgs`` is cheap per step but needs hundreds to
    thousands of steps at weak regularisation. Both stop at the same tolerance
    on the same convex objective. Measured on Trn1 of split 0 (C grid, 2 cores):
    shuttle and avila favour Newton by far, letter ((16+1) x 26 parameters)
    favours lbfgs by far (``benchmarks/measured_records.csv``, topic ``lr_solver``).
    """
    return "newton-cholesky" if (n_features + 1) * n_classes <= NEWTON_MAX_PARAMS else "lbfgs"


def make_classifier(
    kind, *, C, n_classes, n_samples, n_features=None, random_state=0, c_scaling="sum"
):
    """Unfitted ``Pipeline(StandardScaler, model)`` for one model of section 5.2.

    The scaler standardises with the statistics of the data the pipeline is fitted on
    (Trn1). Every model weights the loss by ``C`` against the regulariser ``||w||^2/2``:
    ``C sum_i loss_i`` with the default ``c_scaling="sum"`` (scikit-learn's and
    LIBLINEAR's reading), ``C/n sum_i loss_i`` with ``"mean"`` (the paper's PDF shows
    ``C/n`` next to the loss but loses the regulariser). ``"sum"`` is the default because
    it reproduces the paper's full-coverage risks: on shuttle (split 0) the test error of
    LR / SVM is 2.89 / 2.15 % with ``"sum"`` and 4.12 / 2.66 % with ``"mean"`` (paper:
    3.36 ± 0.25 / 2.02 ± 0.15), where ``"mean"`` selects C = 1000, the edge of the grid.

    - ``"lr"``: multinomial logistic regression (solver by :func:`lr_solver`), intercepts
      unpenalised. On two training classes sklearn fits the binary model, which equals
      the multinomial one (penalty on both class vectors) at twice the C; that C is used,
      so the model stays multinomial.
    - ``"svm"`` with ``n_classes == 2``: :class:`BinaryHingeSVM` (exact, bias not
      regularised).
    - ``"svm"`` with ``n_classes > 2``: :class:`CrammerSingerSVM`, liblinear's
      Crammer-Singer objective (``LinearSVC(multi_class="crammer_singer",
      intercept_scaling=1)``) with the biases as a constant feature, regularised with
      ``w`` as in the paper's ``||theta||^2``, ``theta = ((w_y, b_y))``. Solved to a
      relative duality gap of :data:`CS_TOL` (certified by ``objective_``,
      ``dual_objective_``, ``rel_gap_``, ``converged_``), because liblinear's dual
      coordinate descent stopped at ``max_iter`` on most weakly regularised fits
      (letter's C=1000 objective 3.8 % above the optimum, sattelite's 3.6 times).
    - ``"svor"``: :class:`SVOR` (section 5.2.2), the same C reading per hinge term.

    Parameters
    ----------
    kind : {"lr", "svm", "svor"}
        The model.
    C : float
        The loss weight (see ``c_scaling``), positive.
    n_classes : int
        Size of the global label space ``0..n_classes-1``.
    n_samples : int
        Number of training examples ``n`` (for the ``C/n`` mapping).
    n_features : int or None, default=None
        Number of features ``d``; picks the LR solver (:func:`lr_solver`); None -> lbfgs.
    random_state : int, default=0
        Seed of the model.
    c_scaling : {"sum", "mean"}, default="sum"
        ``"sum"``: the loss weight is ``C`` itself (scikit-learn's reading).
        ``"mean"``: the loss weight is ``C/n``. A switch because the PDF extraction
        leaves the reading ambiguous (PROTOCOL.md).

    Returns
    -------
    sklearn.pipeline.Pipeline
        ``Pipeline(StandardScaler, model)``, unfitted.

    Examples
    --------
    Three classes make ``"svm"`` the Crammer-Singer SVM:

    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> pipeline = make_classifier("svm", C=1.0, n_classes=3, n_samples=75)
    >>> type(pipeline.named_steps["model"]).__name__
    'CrammerSingerSVM'
    >>> round(pipeline.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 4)
    0.96
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if C <= 0:
        raise ValueError(f"C must be positive, got {C}")
    c, C = loss_weights(C, n_samples, c_scaling)
    if kind == "lr":
        solver = "lbfgs" if n_features is None else lr_solver(n_features, n_classes)
        model = LogisticRegression(
            C=c, solver=solver, tol=LR_TOL, max_iter=LR_MAX_ITER, random_state=random_state
        )
    elif kind == "svm" and n_classes == 2:
        model = BinaryHingeSVM(C=C, random_state=random_state)
    elif kind == "svm":
        model = CrammerSingerSVM(C=c, tol=CS_TOL, random_state=random_state)
    else:
        model = SVOR(C=C, n_classes=n_classes, random_state=random_state)
    return Pipeline([("scaler", StandardScaler()), ("model", model)])


def loss_weights(C, n_samples, c_scaling="sum"):
    """``(c, C_n)``: the weight ``c`` of the summed loss and ``C_n = c n`` of the mean loss for ``C``.

    One reading of C for every linear model (see :func:`make_classifier`): with
    ``"sum"``, ``c = C``; with ``"mean"``, ``c = C / n``.
    """
    if c_scaling not in ("mean", "sum"):
        raise ValueError(f"c_scaling must be 'mean' or 'sum', got {c_scaling!r}")
    C_n = float(C) * int(n_samples) if c_scaling == "sum" else C
    return float(C_n) / int(n_samples), C_n


def _fit_classifier(kind, X, y, *, C, n_classes, random_state=0, c_scaling="sum"):
    pipe = make_classifier(
        kind,
        C=C,
        n_classes=n_classes,
        n_samples=X.shape[0],
        n_features=X.shape[1],
        random_state=random_state,
        c_scaling=c_scaling,
    )
    if kind == "lr" and np.unique(y).size == 2:
        pipe.set_params(model__C=2.0 * pipe[-1].C)
    return pipe.fit(X, y)
