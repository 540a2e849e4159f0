"""Regression-based uncertainty scores: REG (regress the loss) and TCP (regress p(true class))."""

import numpy as np

from ._base import PerClassLinearScore, single_threaded_blas

__all__ = ["REG", "TCP"]


def _per_class_ridge(layout, target, C):
    """Minimise ``C/2 sum_c ||w_c||^2 + 1/n sum_i (t_i - <w_{c_i}, x_i> - b_{c_i})^2``.

    Biases are not regularised, so each class is solved on centred data ``A``,
    ``t``: ``w = (A^T A + lam I)^{-1} A^T t`` with ``lam = C n / 2``, computed in
    the primal (a d x d system) when a class has at least d examples and in the
    dual, ``w = A^T (A A^T + lam I)^{-1} t`` (an n_c x n_c system), when it has
    fewer, as for the 2,448 HOG features of the landmark experiment. Then
    ``b = mean(t) - mean(x) w``. ``C = 0`` gives the minimum-norm least-squares
    solution.
    """
    n, d1 = layout.design.shape
    d = d1 - 1
    theta = np.zeros((layout.n_classes, d1))
    lam = C * n / 2.0
    for c, rows in layout.blocks():
        X_c = layout.design[rows, :d]
        t_c = target[rows]
        x_mean, t_mean = X_c.mean(axis=0), t_c.mean()
        A, t = X_c - x_mean, t_c - t_mean
        if lam == 0:
            w = np.linalg.lstsq(A, t, rcond=None)[0]
        elif A.shape[0] >= d:
            w = np.linalg.solve(A.T @ A + lam * np.eye(d), A.T @ t)
        else:
            w = A.T @ np.linalg.solve(A @ A.T + lam * np.eye(A.shape[0]), t)
        theta[c, :d] = w
        theta[c, d] = t_mean - x_mean @ w
    return theta


def _check_C(C):
    if not np.isfinite(C) or C < 0:
        raise ValueError(f"C must be a finite non-negative number, got {C!r}")
    return float(C)


class REG(PerClassLinearScore):
    """Uncertainty score learned by regressing the classifier's loss.

    Minimises ``F(theta) = C/2 sum_c ||w_c||^2 + 1/n sum_i (l_i - s(x_i))^2``
    over the linear score of eq. (37) of [1], ``s(x) = <w_{h(x)}, x> + b_{h(x)}``;
    its population minimiser is the conditional risk (Theorem 7 of [1]).
    The biases ``b_c`` are not regularised. Closed form per predicted class;
    ``C = 0`` gives the minimum-norm least-squares fit.

    Parameters
    ----------
    C : float, default=10
        Weight of the regulariser.
    n_classes : int or None, default=None
        Number of predicted classes ``K``; None -> ``max(y_pred) + 1`` at fit.
    standardize : bool, default=True
        Standardise ``X`` with the mean/std of the training data (constant
        features get scale 1) before the linear score is applied.

    Attributes
    ----------
    coef_ : ndarray of shape (K, d)
        Per-class weights on standardised features.
    intercept_ : ndarray of shape (K,)
    mean_, scale_ : ndarray of shape (d,)
        Standardisation statistics from the training data.
    n_classes_ : int
    class_seen_ : ndarray of shape (K,)
        Whether each class was predicted in the training data. Unseen classes
        get zero weights and bias ``unseen_class_score_`` = the largest
        training score (treated as most uncertain).
    n_features_in_ : int

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Theorem 7, eq. (37).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> reg = REG(C=0).fit(X, np.array([0, 0, 1, 1]), np.array([0.0, 1.0, 0.0, 1.0]))
    >>> reg.predict(X, np.array([0, 0, 1, 1])).round(6).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """

    def __init__(self, *, C=10.0, n_classes=None, standardize=True):
        self.C = C
        self.n_classes = n_classes
        self.standardize = standardize

    def fit(self, X, y_pred, loss):
        """Fit the score on features ``X``, predicted classes ``y_pred`` and losses ``loss``.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y_pred : array-like of shape (n,) of int in 0..K-1, or None
            Predicted classes ``h(x_i)``; None fits a single weight vector
            (structured-output mode).
        loss : array-like of shape (n,)
            Losses ``l(y_i, h(x_i))``.

        Returns
        -------
        self
        """
        C = _check_C(self.C)
        layout, target = self._prepare_layout(X, y_pred, loss, "loss")
        with single_threaded_blas():
            theta = _per_class_ridge(layout, target, C)
        fitted = layout.scores_sorted(theta)
        self._set_parameters(theta, layout, fitted.max() if fitted.size else 0.0)
        return self

    def predict(self, X, y_pred):
        """Uncertainty ``s(x)`` (larger = more uncertain), shape (n,)."""
        return self._raw_scores(X, y_pred)


class TCP(PerClassLinearScore):
    """True-class-probability score: ridge regression of ``p_hat(y_i | x_i)``.

    Minimises ``F(theta) = C/2 sum_c ||w_c||^2 + 1/n sum_i (p_i - c(x_i))^2``
    with the per-predicted-class linear confidence ``c(x)`` of eq. (37) of [1]
    (biases not regularised). ``predict`` returns the **negative** predicted
    confidence, an uncertainty (larger = more uncertain), as in section 5.1 of [1].

    Parameters
    ----------
    C : float, default=10
    n_classes : int or None, default=None
    standardize : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (K, d)
        Per-class weights of the confidence (not of the uncertainty).
    intercept_ : ndarray of shape (K,)
    mean_, scale_, n_classes_, class_seen_, n_features_in_
        As in :class:`REG`. Unseen classes get the smallest training
        confidence ``unseen_class_score_``, i.e. the largest uncertainty.

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Section 5.1 (TCP).

    Examples
    --------
    The classifier's probability of the true class is regressed; the uncertainty is its
    negative:

    >>> import numpy as np
    >>> X, y_pred = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    >>> tcp = TCP(C=0).fit(X, y_pred, np.array([0.9, 0.7, 0.8, 0.4]))
    >>> tcp.predict(X, y_pred).round(4)
    array([-0.9, -0.7, -0.8, -0.4])
    """

    def __init__(self, *, C=10.0, n_classes=None, standardize=True):
        self.C = C
        self.n_classes = n_classes
        self.standardize = standardize

    def fit(self, X, y_pred, p_true):
        """Fit on features, predicted classes and the classifier's probability of the true class.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y_pred : array-like of shape (n,) of int, or None
        p_true : array-like of shape (n,)
            ``p_hat(y_i | x_i)`` of the classifier.

        Returns
        -------
        self
        """
        C = _check_C(self.C)
        layout, target = self._prepare_layout(X, y_pred, p_true, "p_true")
        with single_threaded_blas():
            theta = _per_class_ridge(layout, target, C)
        fitted = layout.scores_sorted(theta)
        self._set_parameters(theta, layout, fitted.min() if fitted.size else 0.0)
        return self

    def predict(self, X, y_pred):
        """Uncertainty ``-c(x)`` (negative predicted confidence), shape (n,)."""
        return -self._raw_scores(X, y_pred)
