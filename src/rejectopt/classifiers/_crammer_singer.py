"""Crammer-Singer multiclass linear SVM solved to a certified relative duality gap."""

import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse import csr_matrix
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_X_y, validate_data

__all__ = ["CrammerSingerSVM", "crammer_singer_objective", "fit_crammer_singer_path"]

#: Initial smoothing temperature ``mu`` (margins are in units of the 0/1 label loss).
MU_START = 1.0
#: ``mu`` is lowered once the Newton decrement is at most ``MU_CENTRAL * C * mu`` ...
MU_CENTRAL = 10.0
#: ... by a factor in [MU_MIN_FACTOR, MU_MAX_FACTOR], aimed at a smoothing gap of MU_TARGET * tol.
MU_MIN_FACTOR = 0.3
MU_MAX_FACTOR = 0.5
MU_TARGET = 0.25
#: A warm start whose Newton decrement exceeds ``MU_RECENTER * C * mu`` first raises ``mu`` ten-fold.
MU_RECENTER = 1e3
#: Softmax weights below this are left out of the Hessian (which stays positive definite).
HESS_DROP = 1e-10
#: Below this fraction of non-zero class-pair weights the Hessian uses a sparse product.
SPARSE_DENSITY = 0.05
#: Rows per block of the Hessian's outer products: about this many floats per block.
BLOCK_FLOATS = 1 << 22
_TINY = 1e-300


def _margins(Z, yi, W):
    """``A[i, y] = [y != y_i] + <w_y - w_{y_i}, z_i>``, shape (n, K)."""
    S = Z @ W.T
    rows = np.arange(len(yi))
    A = S - S[rows, yi][:, None] + 1.0
    A[rows, yi] = 0.0
    return A


def _primal(Z, yi, W, C):
    return 0.5 * float(np.sum(W * W)) + C * float(_margins(Z, yi, W).max(axis=1).sum())


def _evaluate(Z, yi, W, C, mu):
    """``(f, W, Pi, A, m)``: smoothed objective ``||W||^2/2 + C sum_i mu log sum_y exp(A_iy/mu)``,
    the softmax ``Pi`` of ``A / mu``, the margins ``A`` and their row maxima ``m``."""
    A = _margins(Z, yi, W)
    m = A.max(axis=1)
    E = np.exp((A - m[:, None]) / mu)
    s = E.sum(axis=1)
    f = 0.5 * float(np.sum(W * W)) + C * float(np.sum(m + mu * np.log(s)))
    return f, W, E / s[:, None], A, m


def _dual(Z, yi, Pi, C):
    """``D(pi)`` at the dual feasible point ``pi_i = Pi[i]`` and ``W(pi)``."""
    R = -Pi
    rows = np.arange(len(yi))
    R[rows, yi] += 1.0
    Wd = C * (R.T @ Z)
    return C * float(np.sum(R[rows, yi])) - 0.5 * float(np.sum(Wd * Wd)), Wd


def _hessian(Z, Pi, C, mu):
    """Cholesky factor of ``I + C/mu sum_i (diag(pi_i) - pi_i pi_i^T) (x) z_i z_i^T``.

    Uses ``diag(q) - q q^T = sum_{k<l} q_k q_l (e_k - e_l)(e_k - e_l)^T + (1 - sum q) diag(q)``
    with the weights below ``HESS_DROP`` set to zero (the matrix stays positive
    definite): only class pairs close to a tie cost anything.
    """
    K, p = Pi.shape[1], Z.shape[1]
    Q = np.where(Pi >= HESS_DROP, Pi, 0.0)
    rows = np.flatnonzero(np.count_nonzero(Q, axis=1) > 1)
    iu, ju = np.triu_indices(p)
    kk, ll = np.triu_indices(K, 1)
    pairs, diag = np.zeros((kk.size, iu.size)), np.zeros((K, iu.size))
    block = max(1, BLOCK_FLOATS // max(iu.size, kk.size))
    for start in range(0, rows.size, block):
        Qb, Zb = Q[rows[start : start + block]], Z[rows[start : start + block]]
        outer = Zb[:, iu] * Zb[:, ju]
        weights = Qb[:, kk] * Qb[:, ll]
        r, c = np.nonzero(weights)
        if r.size < SPARSE_DENSITY * weights.size:
            pairs += csr_matrix((weights[r, c], (c, r)), shape=weights.shape[::-1]) @ outer
        else:
            pairs += weights.T @ outer
        diag += (Qb * (1.0 - Qb.sum(axis=1))[:, None]).T @ outer
    incidence = np.zeros((kk.size, K))
    incidence[np.arange(kk.size), kk] = incidence[np.arange(kk.size), ll] = 1.0
    diag += incidence.T @ pairs
    B = np.zeros((K, K, iu.size))
    B[kk, ll] = B[ll, kk] = -pairs
    B[np.arange(K), np.arange(K)] = diag
    F = np.empty((K, K, p, p))
    F[:, :, iu, ju] = B
    F[:, :, ju, iu] = B
    H = F.transpose(0, 2, 1, 3).reshape(K * p, K * p) * (C / mu)
    H[np.diag_indices_from(H)] += 1.0
    jitter = 1e-13 * float(H.diagonal().max())
    while True:  # rounding in the huge C/mu terms can cost definiteness: add a relative jitter
        try:
            return cho_factor(H)
        except LinAlgError:
            H[np.diag_indices_from(H)] += jitter
            jitter *= 100.0


def _line_search(Z, yi, C, mu, point, step, slope):
    """Backtracking (Armijo) along ``step`` from ``point``; None if no decrease is found."""
    t = 1.0
    while t > 1e-12:
        trial = _evaluate(Z, yi, point[1] + t * step, C, mu)
        if trial[0] <= point[0] + 1e-4 * t * slope:
            return trial
        t *= 0.5
    return None


def _solve(Z, yi, C, W, tol, max_iter, mu, predictor=None):
    """Path-following Newton method on the smoothed primal; stops on the duality gap.

    At every iterate the gap splits as ``P(W) - D(pi) = ||grad f_mu(W)||^2 / 2 + S``,
    ``S = C sum_i (max_y A_iy - <pi_i, A_i>)`` the smoothing part: Newton steps
    reduce the first, lowering ``mu`` (with a predictor step along the path
    ``W(mu)``) the second. ``predictor = (cholesky, C_prev)`` from a solve at a
    smaller C gives a first-order step along ``W(C)`` first. Every Cholesky
    factorisation counts as an iteration. Returns ``(W, mu, cholesky, info)``.
    """
    point = _evaluate(Z, yi, W, C, mu)
    if predictor is not None:
        step = (
            (C - predictor[1]) / predictor[1] * cho_solve(predictor[0], W.ravel()).reshape(W.shape)
        )
        point = _line_search(Z, yi, C, mu, point, step, 0.0) or point
    n_iter, chol, starting = 0, None, True
    while True:
        f, W, Pi, A, m = point
        P = 0.5 * float(np.sum(W * W)) + C * float(m.sum())
        D, Wd = _dual(Z, yi, Pi, C)
        target = tol * max(abs(P), _TINY)
        if P - D <= target or n_iter >= max_iter:
            break
        S = C * float(np.sum(m - np.sum(Pi * A, axis=1)))
        g = (W - Wd).ravel()
        chol = _hessian(Z, Pi, C, mu)
        n_iter += 1
        d = -cho_solve(chol, g)
        dec = -float(g @ d)
        if starting and dec > MU_RECENTER * C * mu and mu < MU_START:
            mu = min(MU_START, 10.0 * mu)
            point = _evaluate(Z, yi, W, C, mu)
            continue
        starting = False
        if S > 0.5 * target and dec <= MU_CENTRAL * C * mu:
            mu_new = mu * min(max(MU_TARGET * target / S, MU_MIN_FACTOR), MU_MAX_FACTOR)
            dPi = Pi * (A - np.sum(Pi * A, axis=1)[:, None]) / mu**2
            step = (mu_new - mu) * cho_solve(chol, C * (dPi.T @ Z).ravel()).reshape(W.shape)
            mu = mu_new
            point = min(
                _evaluate(Z, yi, W, C, mu), _evaluate(Z, yi, W + step, C, mu), key=lambda q: q[0]
            )
            continue
        trial = _line_search(Z, yi, C, mu, point, d.reshape(W.shape), -dec)
        if trial is None:  # no decrease at this mu within rounding: smooth less, or stop
            if S <= 0.5 * target:
                break
            mu *= MU_MIN_FACTOR
            trial = _evaluate(Z, yi, W, C, mu)
        point = trial
    D = min(D, P)  # D <= P holds exactly; this only removes rounding
    gap = P - D
    rel_gap = gap / max(abs(P), _TINY)
    return (
        W,
        mu,
        chol,
        {
            "objective": P,
            "dual_objective": D,
            "gap": gap,
            "rel_gap": rel_gap,
            "n_iter": n_iter,
            "converged": bool(rel_gap <= tol),
        },
    )


def crammer_singer_objective(X, y, coef, intercept, C, classes=None):
    """Primal objective ``P(W)`` of :class:`CrammerSingerSVM` at ``W = [coef, intercept]``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The examples.
    y : array-like of shape (n,)
        Their labels, each one of ``classes``.
    coef : array-like of shape (K, d)
        ``w_y`` per class.
    intercept : array-like of shape (K,)
        ``b_y`` per class (regularised with ``coef``, as in :class:`CrammerSingerSVM`).
    C : float
        The loss weight.
    classes : array-like of shape (K,), optional
        Maps the labels ``y`` to rows of ``coef`` (default ``np.unique(y)``).

    Returns
    -------
    float
        ``P(W)``.
    """
    X = check_array(X, dtype=float)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    yi = np.searchsorted(classes, np.asarray(y))
    W = np.column_stack([np.asarray(coef, dtype=float), np.asarray(intercept, dtype=float)])
    return _primal(np.column_stack([X, np.ones(len(X))]), yi, W, float(C))


class CrammerSingerSVM(ClassifierMixin, BaseEstimator):
    r"""Crammer-Singer multiclass linear SVM with a certified duality gap.

    Minimises

    .. math:: P(W) = \tfrac12 \|W\|_F^2 + C \sum_i \max_y \big([y \ne y_i]
              + \langle w_y - w_{y_i}, \tilde x_i\rangle\big),
              \qquad \tilde x_i = (x_i, 1),

    over ``W = [coef_, intercept_]`` of shape (K, d + 1): the bias is the
    constant feature, regularised together with ``w`` ([1]_, liblinear's
    ``MCSVM_CS`` with ``-B 1`` [2]_, i.e. ``LinearSVC(multi_class="crammer_singer",
    C=C, intercept_scaling=1)``). Its dual (Crammer & Singer [1]_, Keerthi et al. [3]_)
    with one distribution ``pi_i`` over the K classes per example is

    .. math:: \max_{\pi_i \in \Delta_K} D(\pi) = C \sum_i (1 - \pi_{i y_i})
              - \tfrac12 \|W(\pi)\|_F^2, \qquad
              W(\pi) = C \sum_i (e_{y_i} - \pi_i) \tilde x_i^\top,

    (liblinear's dual variables are ``alpha_i^m = C([m = y_i] - pi_im)``: ``sum_m alpha_i^m = 0``,
    ``alpha_i^m <= C [m = y_i]``, and it minimises ``-D``). Weak duality gives
    ``D(pi) <= P(W)`` for every ``W`` and every ``pi`` with rows on the simplex.

    Solver: Newton's method on the smoothed primal ``f_mu`` (``max_y`` replaced
    by ``mu log sum_y exp(. / mu)``), path-following in ``mu`` with predictor
    steps along ``W(mu)``; the Hessian only involves examples near a tie of two
    classes, so late iterations are cheap. With ``A_iy = [y != y_i] + <w_y - w_{y_i}, x~_i>``,
    the softmax ``pi_i = softmax(A_i / mu)`` of every iterate is dual feasible and certifies
    ``gap = P(W) - D(pi) = ||grad f_mu(W)||^2 / 2 + C sum_i (max_y A_iy - <pi_i, A_i>) >= 0``
    (the second term alone at ``W = W(pi)``); it stops as soon as ``gap / |P| <= tol``,
    never on an iteration count alone.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the summed loss.
    tol : float, default=1e-3
        Relative duality gap ``(P - D) / |P|`` at which to stop.
    max_iter : int, default=1000
        Cap on Newton iterations (Hessian factorisations); stopping there, or at
        the limit of floating point, leaves ``converged_ = False`` and warns
        (ConvergenceWarning naming C and the reached gap).
    warm_start : bool, default=False
        Start from the previous solution (same classes and features) if fitted.
    random_state : int, default=0
        Unused (deterministic solver); kept for the drop-in interface.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        Sorted labels seen in training (at least two).
    coef_ : ndarray of shape (K, d)
    intercept_ : ndarray of shape (K,)
    objective_, dual_objective_ : float
        ``P`` at the returned ``W`` and ``D`` at the dual certificate.
    gap_, rel_gap_ : float
        ``objective_ - dual_objective_ >= 0`` and ``gap_ / max(|objective_|, tiny)``.
    n_iter_ : int
        Newton iterations (Hessian factorisations).
    converged_ : bool
        ``rel_gap_ <= tol``.
    smoothing_ : float
        The final ``mu`` (where a warm start resumes).
    n_features_in_ : int

    Notes
    -----
    With two classes present, ``decision_function`` still returns shape (n, 2)
    (``LinearSVC`` returns the 1-D difference ``F = f_1 - f_0``); at the optimum
    ``w_0 = -w_1``, so the columns equal ``[-F, F] / 2``, which is what
    :func:`~rejectopt.classifiers._training.classifier_outputs` builds from a 1-D output.

    References
    ----------
    .. [1] K. Crammer, Y. Singer. On the algorithmic implementation of multiclass
       kernel-based vector machines. JMLR 2:265-292, 2001.
    .. [2] R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang, C.-J. Lin. LIBLINEAR:
       A library for large linear classification. JMLR 9:1871-1874, 2008.
    .. [3] S. S. Keerthi, S. Sundararajan, K.-W. Chang, C.-J. Hsieh, C.-J. Lin.
       A sequential dual method for large scale multi-class linear SVMs. KDD 2008.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [0.2, 0.1], [4.2, 0.1], [0.1, 4.2]])
    >>> est = CrammerSingerSVM(C=10.0).fit(X, [3, 7, 9, 3, 7, 9])
    >>> est.predict(X).tolist(), est.converged_
    ([3, 7, 9, 3, 7, 9], True)
    """

    def __init__(self, *, C=1.0, tol=1e-3, max_iter=1000, warm_start=False, random_state=0):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the model to a relative duality gap of ``tol``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training features (the bias is their constant extra feature).
        y : array-like of shape (n_samples,)
            Labels, at least two distinct values (any sortable labels).

        Returns
        -------
        self : CrammerSingerSVM
        """
        X, y = validate_data(self, X, y, dtype=float)
        X, classes, yi = _check_training_data(X, y)
        if not self.C > 0:
            raise ValueError(f"C must be positive, got {self.C}")
        W0 = mu0 = None
        if (
            self.warm_start
            and hasattr(self, "coef_")
            and np.array_equal(classes, self.classes_)
            and self.coef_.shape[1] == X.shape[1]
        ):
            W0, mu0 = np.column_stack([self.coef_, self.intercept_]), self.smoothing_
        self._fit(X, classes, yi, W0, mu0)
        return self

    def _fit(self, X, classes, yi, W0=None, mu0=None, predictor=None):
        """Solve from ``W0`` at smoothing ``mu0``; returns the final Cholesky factor (or None)."""
        Z = np.column_stack([X, np.ones(X.shape[0])])
        W0 = np.zeros((classes.size, Z.shape[1])) if W0 is None else np.array(W0, dtype=float)
        W, mu, chol, info = _solve(
            Z,
            yi,
            float(self.C),
            W0,
            float(self.tol),
            int(self.max_iter),
            MU_START if mu0 is None else mu0,
            predictor,
        )
        self.classes_ = classes
        self.coef_ = np.ascontiguousarray(W[:, :-1])
        self.intercept_ = W[:, -1].copy()
        self.n_features_in_ = X.shape[1]
        self.smoothing_ = mu
        for key in ("objective", "dual_objective", "gap", "rel_gap", "n_iter", "converged"):
            setattr(self, key + "_", info[key])
        if not self.converged_:
            warnings.warn(
                f"CrammerSingerSVM(C={self.C:g}) stopped after {self.n_iter_} iterations "
                f"(max_iter={self.max_iter}) with relative duality gap {self.rel_gap_:.3g} > "
                f"tol={self.tol:g}",
                ConvergenceWarning,
                stacklevel=2,
            )
        return chol

    def decision_function(self, X):
        """Class scores ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features with the training data's columns.

        Returns
        -------
        ndarray of shape (n_samples, K)
            Columns in the order of ``classes_``; two columns also when K = 2.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_.T + self.intercept_

    def predict(self, X):
        """Labels of the highest class score (ties go to the earlier class).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]


def _check_training_data(X, y):
    X, y = check_X_y(X, y, dtype=float)
    check_classification_targets(
        y
    )  # "Unknown label type" for a continuous y, as scikit-learn's classifiers say
    classes, yi = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"CrammerSingerSVM needs at least 2 classes in y, got {classes.size} class"
        )
    return X, classes, yi.astype(np.intp)


def fit_crammer_singer_path(X, y, C_grid, *, tol=1e-3, max_iter=1000, random_state=0):
    """Fit one :class:`CrammerSingerSVM` per ``C``, warm-started along increasing ``C``.

    Each fit starts from the previous solution, its smoothing ``mu`` and a
    first-order predictor step along ``W(C)``; each is certified on its own.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    C_grid : sequence of float
    tol, max_iter, random_state
        As in :class:`CrammerSingerSVM`.

    Returns
    -------
    list of CrammerSingerSVM
        Fitted estimators in the order of ``C_grid`` (a repeated C gives the same object).
    """
    X, classes, yi = _check_training_data(X, y)
    fitted, W0, mu0, predictor = {}, None, None, None
    if not all(float(C) > 0 for C in C_grid):
        raise ValueError(f"every C must be positive, got {list(C_grid)}")
    for C in sorted({float(c) for c in C_grid}):
        est = CrammerSingerSVM(C=C, tol=tol, max_iter=max_iter, random_state=random_state)
        chol = est._fit(X, classes, yi, W0, mu0, predictor)
        W0, mu0 = np.column_stack([est.coef_, est.intercept_]), est.smoothing_
        if chol is not None:
            predictor = (chol, C)
        elif predictor is not None:
            predictor = (predictor[0], C)
        fitted[C] = est
    return [fitted[float(C)] for C in C_grid]
