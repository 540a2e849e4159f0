"""Support vector ordinal regression with implicit constraints, solved exactly."""

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..scores._baselines import svor_margin

__all__ = ["SVOR", "svor_objective", "solve_threshold_hinge_qp", "set_solver_certificate"]


def _signs(y, n_thr):
    """Boolean (n, n_thr) mask of the '+1' hinge terms: threshold j < y_i (0-based)."""
    return np.arange(n_thr)[None, :] < y[:, None]


def svor_objective(w, b, X, y, C):
    """Primal objective of SVOR with implicit constraints.

    ``F(w, b) = ||w||^2/2 + C/n sum_i ( sum_{j < y_i} max(0, 1 - <w, x_i> + b_j)
    + sum_{j >= y_i} max(0, 1 + <w, x_i> - b_j) )`` with 0-based labels
    ``y_i in {0, ..., Y-1}`` and thresholds ``b_0, ..., b_{Y-2}`` (section 5.2.2 of
    [1]; Chu & Keerthi, 2005).

    Parameters
    ----------
    w : ndarray of shape (d,)
        The direction.
    b : ndarray of shape (Y-1,)
        The thresholds.
    X : ndarray of shape (n, d)
        The examples.
    y : ndarray of shape (n,), ints in 0..Y-1
        Their 0-based ranks.
    C : float
        The weight of the mean hinge loss.

    Returns
    -------
    float
        ``F(w, b)``.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    b = np.asarray(b, dtype=float)
    f = X @ w
    if b.size == 0:
        return float(0.5 * w @ w)
    S = np.where(_signs(y, b.size), 1.0, -1.0)
    hinge = np.maximum(0.0, 1.0 - S * (f[:, None] - b[None, :]))
    return float(0.5 * w @ w + C / X.shape[0] * hinge.sum())


def _optimal_thresholds(f, y, n_thr):
    """Exact minimiser over ``b`` of the hinge sum for fixed scores ``f = Xw``.

    For fixed ``w`` the thresholds decouple; ``phi_j(b)`` is convex piecewise linear
    with unit-slope breakpoints at ``f_i - 1`` (``y_i > j``) and ``f_i + 1``
    (``y_i <= j``). Its derivative below every breakpoint is ``-N_j`` (number of
    ``y_i <= j``), so the argmin is the interval between the ``N_j``-th and
    ``N_j + 1``-th smallest breakpoint; we return its midpoint (or its finite end if
    one side is empty). The argmin intervals are monotone in ``j``, so the midpoints
    are ordered.
    """
    out = np.empty(n_thr)
    for j in range(n_thr):
        pos = y > j
        bp = np.concatenate([f[pos] - 1.0, f[~pos] + 1.0])
        n_neg = int((~pos).sum())
        if n_neg == 0:
            out[j] = bp.min()
        elif n_neg == bp.size:
            out[j] = bp.max()
        else:
            part = np.partition(bp, [n_neg - 1, n_neg])
            out[j] = 0.5 * (part[n_neg - 1] + part[n_neg])
    return out


def _project_dual(alpha, P):
    """Make ``alpha`` satisfy ``sum_i s_ij alpha_ij = 0`` for each j, staying in the box.

    Scales down the larger of the positive / negative parts of each column.
    """
    sp = np.where(P, alpha, 0.0).sum(axis=0)
    sn = alpha.sum(axis=0) - sp
    with np.errstate(divide="ignore", invalid="ignore"):
        fp = np.where(sp > sn, np.where(sp > 0, sn / sp, 1.0), 1.0)
        fn = np.where(sn > sp, np.where(sn > 0, sp / sn, 1.0), 1.0)
    return alpha * np.where(P, fp[None, :], fn[None, :])


def _dual_objective(alpha, S, X):
    u = X.T @ (S * alpha).sum(axis=1)
    return float(alpha.sum() - 0.5 * u @ u)


def _max_step(v, dv):
    neg = dv < 0
    if not np.any(neg):
        return np.inf
    return float(np.min(-v[neg] / dv[neg]))


def set_solver_certificate(estimator, info):
    """Copy the solver's certificate (objective, duality gap, iterations) onto a fitted estimator."""
    estimator.objective_ = info["objective"]
    estimator.dual_objective_ = info["dual_objective"]
    estimator.gap_ = info["gap"]
    estimator.rel_gap_ = info["rel_gap"]
    estimator.n_iter_ = info["n_iter"]
    estimator.converged_ = info["converged"]


def solve_threshold_hinge_qp(X, y, n_thr, C, *, tol=1e-6, max_iter=200, verbose=False):
    """Solve the SVOR primal exactly by a primal-dual interior point method.

    The problem ``min_{w,b} F(w, b)`` (see :func:`svor_objective`) is the QP
    ``min ||w||^2/2 + c sum_k xi_k`` s.t. ``s_k(<w, x_i> - b_j) + xi_k >= 1``,
    ``xi >= 0``, with one constraint per (example, threshold) pair ``k = (i, j)``,
    ``s_k = +1`` if ``j < y_i`` else ``-1``, and ``c = C/n``. We run Mehrotra's
    predictor-corrector method; every Newton system is reduced to the normal
    equations in the ``d + Y - 1`` primal variables ``(w, b)``,
    ``[[I + X^T diag(Theta 1) X, -X^T Theta], [-Theta^T X, diag(1^T Theta)]]``,
    which costs ``O(n d^2 + n d (Y-1))`` per iteration; everything else is
    elementwise on ``(n, Y-1)`` arrays. The thresholds are free (unregularised)
    variables, handled exactly.

    Stopping uses a certificate independent of the IPM internals: the primal
    objective of the current ``(w, b)`` and the dual objective
    ``sum alpha - ||sum_k alpha_k s_k x_i||^2 / 2`` of the IPM multipliers
    projected onto the dual feasible set ``{0 <= alpha <= c, sum_i s_ij alpha_ij = 0}``.
    By weak duality ``P - D >= P - P* >= 0``.

    One function on purpose: the predictor and corrector steps share the iterate, its residuals
    and the factorised normal equations of the same iteration, so a split would pass a dozen
    arrays between pieces that make sense only together.

    Returns
    -------
    w, b, info : ndarray, ndarray, dict
        ``info`` has ``objective``, ``dual_objective``, ``gap`` (absolute),
        ``rel_gap``, ``n_iter``, ``converged``.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n, d = X.shape
    if n_thr == 0:
        w = np.zeros(d)
        return (
            w,
            np.empty(0),
            dict(objective=0.0, dual_objective=0.0, gap=0.0, rel_gap=0.0, n_iter=0, converged=True),
        )
    # Thresholds with all examples on one side have zero loss at the optimum for any
    # w (the threshold can move out of the way): exclude them from the QP and set
    # them from the exact 1-D rule afterwards.
    counts_neg = np.array([(y <= j).sum() for j in range(n_thr)])
    active = np.flatnonzero((counts_neg > 0) & (counts_neg < n))
    c = C / n
    J = active.size
    w = np.zeros(d)
    b = np.zeros(J)
    info = dict(n_iter=0, converged=False)
    if J > 0:
        P = active[None, :] < y[:, None]
        S = np.where(P, 1.0, -1.0)
        m2 = 2.0 * n * J
        alpha = np.full((n, J), 0.5 * c)
        xi = np.full((n, J), 2.0)
        t = np.ones((n, J))  # = A z + xi - 1 at z = 0
        best = None
        for it in range(max_iter + 1):
            mu = c - alpha
            f = X @ w
            Az = S * (f[:, None] - b[None, :])
            # certificate
            primal = 0.5 * w @ w + c * np.maximum(0.0, 1.0 - Az).sum()
            dual = _dual_objective(_project_dual(alpha, P), S, X)
            rel = (primal - dual) / max(abs(primal), 1e-300)
            if best is None or primal - dual < best[2] - best[3]:
                best = (w.copy(), b.copy(), primal, dual)
            if verbose:
                print(f"it {it:3d} primal {primal:.10g} dual {dual:.10g} rel_gap {rel:.2e}")
            info["n_iter"] = it
            if rel <= tol:
                info["converged"] = True
                break
            if it == max_iter:
                break
            r_p = Az + xi - 1.0 - t
            Sa = S * alpha
            r_w = w - X.T @ Sa.sum(axis=1)
            r_b = Sa.sum(axis=0)
            mu_c = ((alpha * t).sum() + (mu * xi).sum()) / m2
            G = xi / mu + t / alpha
            Theta = 1.0 / G
            th_row = Theta.sum(axis=1)
            K = np.empty((d + J, d + J))
            K[:d, :d] = X.T @ (X * th_row[:, None])
            K[:d, :d].flat[:: d + 1] += 1.0
            K[:d, d:] = -(X.T @ Theta)
            K[d:, :d] = K[:d, d:].T
            K[d:, d:] = np.diag(Theta.sum(axis=0))
            try:
                fac = scipy.linalg.cho_factor(K, check_finite=False)
                solve = lambda r: scipy.linalg.cho_solve(fac, r, check_finite=False)  # noqa: E731
            except np.linalg.LinAlgError:
                K.flat[:: d + J + 1] += 1e-12 * np.trace(K)
                lu = scipy.linalg.lu_factor(K, check_finite=False)
                solve = lambda r: scipy.linalg.lu_solve(lu, r, check_finite=False)  # noqa: E731

            def direction(r1, r2):
                g = -r_p + r2 / mu - r1 / alpha
                STg = S * (Theta * g)
                rhs = np.concatenate([-r_w + X.T @ STg.sum(axis=1), -r_b - STg.sum(axis=0)])
                dz = solve(rhs)
                dw, db = dz[:d], dz[d:]
                ADz = S * ((X @ dw)[:, None] - db[None, :])
                da = Theta * (g - ADz)
                dt = (-r1 - t * da) / alpha
                dxi = (-r2 + xi * da) / mu
                return dw, db, da, dt, dxi

            def step_length(da, dt, dxi):
                s = min(
                    _max_step(alpha, da), _max_step(mu, -da), _max_step(t, dt), _max_step(xi, dxi)
                )
                return s

            # predictor
            r1 = alpha * t
            r2 = mu * xi
            dw, db, da, dt, dxi = direction(r1, r2)
            s_aff = min(1.0, step_length(da, dt, dxi))
            mu_aff = (
                ((alpha + s_aff * da) * (t + s_aff * dt)).sum()
                + ((mu - s_aff * da) * (xi + s_aff * dxi)).sum()
            ) / m2
            sigma = (mu_aff / mu_c) ** 3
            # corrector
            r1 = r1 + da * dt - sigma * mu_c
            r2 = r2 - da * dxi - sigma * mu_c
            del dw, db, dt, dxi
            dw, db, da, dt, dxi = direction(r1, r2)
            s = min(1.0, 0.995 * step_length(da, dt, dxi))
            w = w + s * dw
            b = b + s * db
            alpha += s * da
            t += s * dt
            xi += s * dxi
            # keep strictly interior despite rounding
            np.clip(alpha, 1e-300, None, out=alpha)
            alpha = np.minimum(alpha, c * (1 - 1e-15))
        w, b_act = best[0], best[1]
    b_full = np.empty(n_thr)
    f = X @ w
    b_full[:] = _optimal_thresholds(f, y, n_thr)
    # exact 1-D refinement can only lower the objective for active thresholds; keep
    # the IPM value where it is (numerically) better
    if J > 0:
        F_ref = svor_objective(w, b_full, X, y, C)
        b_try = b_full.copy()
        b_try[active] = b_act
        if svor_objective(w, b_try, X, y, C) < F_ref:
            b_full = b_try
    # Optimal thresholds can always be chosen ordered (argmin intervals are monotone
    # in j, so sorting per-threshold minimisers keeps each one a minimiser).
    b_full = np.sort(b_full)
    primal = svor_objective(w, b_full, X, y, C)
    dual = best[3] if J > 0 else 0.0
    if J == 0:
        info["converged"] = True
    info.update(
        objective=primal,
        dual_objective=dual,
        gap=primal - dual,
        rel_gap=(primal - dual) / max(abs(primal), 1e-300),
    )
    return w, b_full, info


class SVOR(ClassifierMixin, BaseEstimator):
    """Support vector ordinal regression with implicit constraints (MAE variant).

    Learns ``w`` and thresholds ``b_0 <= ... <= b_{Y-2}`` by minimising exactly
    ``F(w, b) = ||w||^2/2 + C/n sum_i ( sum_{j < y_i} max(0, 1 - <w, x_i> + b_j)
    + sum_{j >= y_i} max(0, 1 + <w, x_i> - b_j) )``
    (section 5.2.2 of [1], Chu & Keerthi 2005 [2]) and predicts
    ``h(x) = sum_j [<x, w> > b_j]`` in ``{0, ..., Y-1}`` (0-based version of
    ``1 + sum_y [<x, w> > b_y]``). ``C`` weights the loss: ``C/n`` per hinge term.

    Parameters
    ----------
    C : float, default=1.0
        Loss weight; the objective uses ``C/n`` times the sum of hinge terms.
    n_classes : int or None, default=None
        Number of ordered classes ``Y``; inferred as ``max(y) + 1`` if None.
    tol : float, default=1e-6
        Stop when the relative duality gap ``(P - D)/P`` is below ``tol``.
    max_iter : int, default=200
        Maximum number of interior point iterations.
    random_state : int, default=0
        Unused (the solver is deterministic); kept for a uniform API.
    verbose : bool, default=False

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    thresholds_ : ndarray of shape (n_classes - 1,), sorted ascending.
    classes_ : ndarray of shape (n_classes,), ``arange(n_classes)``.
    n_classes_ : int
    objective_ : float
        Primal objective ``F(coef_, thresholds_)``.
    dual_objective_ : float
        Dual objective of a feasible dual point (lower bound on the optimum).
    gap_ : float
        Certified duality gap ``objective_ - dual_objective_ >= F - F*``.
    rel_gap_ : float
        ``gap_ / objective_``.
    n_iter_ : int
        Interior point iterations.

    Notes
    -----
    Solved by a primal-dual (Mehrotra predictor-corrector) interior point method on
    the QP with slacks, reduced to normal equations in the ``d + Y - 1`` variables
    ``(w, b)``; see :func:`solve_threshold_hinge_qp`. The thresholds are not
    regularised. Thresholds not separating any two training examples (all
    examples on one side, e.g. extreme classes missing from training) are set to
    the finite end of their optimal interval.

    References
    ----------
    .. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option
       Classifiers. JMLR 24(11):1-49, 2023. Section 5.2.2.
    .. [2] W. Chu, S. S. Keerthi. New approaches to support vector ordinal
       regression. ICML 2005.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = SVOR(C=100.0).fit(X, np.array([0, 0, 1, 2]))
    >>> model.predict(X).tolist()
    [0, 0, 1, 2]
    """

    def __init__(
        self, *, C=1.0, n_classes=None, tol=1e-6, max_iter=200, random_state=0, verbose=False
    ):
        self.C = C
        self.n_classes = n_classes
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Fit by the interior point method, to a relative duality gap of ``tol``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Integer labels in ``0..n_classes-1``.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(
            y
        )  # "Unknown label type" for a continuous y, as scikit-learn's classifiers say
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"SVOR needs ordinal labels, the integers 0..n_classes-1 in the classes' order; got "
                f"{y.dtype} labels such as {y[:1].tolist()[0]!r}: encode them in their order first"
            )
        if not np.all(np.mod(y, 1) == 0):
            raise ValueError("y must hold integer labels 0..n_classes-1")
        y = y.astype(np.int64)
        n_classes = int(y.max()) + 1 if self.n_classes is None else int(self.n_classes)
        if y.min() < 0 or y.max() >= n_classes:
            raise ValueError(
                f"labels must lie in 0..{n_classes - 1}, got range [{y.min()}, {y.max()}]"
            )
        if self.C <= 0:
            raise ValueError(f"C must be positive, got {self.C}")
        w, b, info = solve_threshold_hinge_qp(
            X,
            y,
            n_classes - 1,
            float(self.C),
            tol=self.tol,
            max_iter=self.max_iter,
            verbose=self.verbose,
        )
        self.coef_ = w
        self.thresholds_ = b
        self.n_classes_ = n_classes
        self.classes_ = np.arange(n_classes)
        self.n_features_in_ = X.shape[1]
        set_solver_certificate(self, info)
        return self

    def decision_function(self, X):
        """Projection ``<x, w>``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_

    def predict(self, X):
        """``h(x) = sum_j [<x, w> > b_j]`` in ``0..n_classes-1``."""
        f = self.decision_function(X)
        return (f[:, None] > self.thresholds_[None, :]).sum(axis=1).astype(np.int64)

    def margin(self, X):
        """Baseline uncertainty ``-min_j |<x, w> - b_j|`` (section 5.2.2 of [1])."""
        f = self.decision_function(X)
        if self.thresholds_.size == 0:  # one class in training: every example equally certain
            return np.full(f.shape, -np.inf)
        return svor_margin(f, self.thresholds_)
