"""SVM with a reject option: the double hinge loss of Grandvalet et al. (2008), solved exactly."""

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_X_y

from ..metrics import per_example_loss
from ..metrics._confusion import selective_outcome

__all__ = ["DoubleHingeSVM", "chow_thresholds", "double_hinge_loss", "fit_double_hinge"]


def _entropy(p):
    """Binary entropy in nats, ``H(p) = -p log p - (1-p) log(1-p)``."""
    return -p * np.log(p) - (1.0 - p) * np.log1p(-p)


def chow_thresholds(c_pos=1.0, c_neg=1.0, r_pos=0.2, r_neg=0.2):
    """Posterior thresholds ``(p_minus, p_plus)`` of Chow's rule for the costs.

    ``c_pos`` / ``c_neg``: cost of misclassifying a positive / negative example;
    ``r_pos`` / ``r_neg``: cost of rejecting a positive / negative example. With
    ``p = P(Y=+1|x)``, predicting -1 costs ``c_pos p``, predicting +1 costs
    ``c_neg (1-p)`` and rejecting costs ``r_pos p + r_neg (1-p)``, so Bayes' rule
    rejects iff ``p_minus < p < p_plus`` with ``p_minus = r_neg / (c_pos - r_pos + r_neg)``
    and ``p_plus = (c_neg - r_neg) / (c_neg - r_neg + r_pos)``.

    Parameters
    ----------
    c_pos : float, default=1.0
        Cost of misclassifying a positive example (predicting -1 for ``y = +1``).
    c_neg : float, default=1.0
        Cost of misclassifying a negative example.
    r_pos : float, default=0.2
        Cost of rejecting a positive example.
    r_neg : float, default=0.2
        Cost of rejecting a negative example.

    Returns
    -------
    p_minus, p_plus : float
        Bayes' rule predicts -1 for ``p <= p_minus``, rejects for ``p_minus < p < p_plus`` and
        predicts +1 for ``p >= p_plus``.

    Raises
    ------
    ValueError
        If a cost is not positive, or ``r_pos/c_pos + r_neg/c_neg >= 1`` (then
        ``p_minus >= p_plus``: rejection is never optimal).
    """
    costs = {"c_pos": c_pos, "c_neg": c_neg, "r_pos": r_pos, "r_neg": r_neg}
    for name, value in costs.items():
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite cost, got {value!r}")
    if r_pos / c_pos + r_neg / c_neg >= 1.0:
        raise ValueError(
            f"inconsistent costs {costs}: need r_pos/c_pos + r_neg/c_neg < 1, else rejection is "
            "never optimal (Chow's thresholds satisfy p_minus >= p_plus)"
        )
    return r_neg / (c_pos - r_pos + r_neg), (c_neg - r_neg) / (c_neg - r_neg + r_pos)


def double_hinge_loss(y, f, p_minus, p_plus):
    """Double hinge loss ``l(y, f) = max(0, T_{p_minus}(y, f), T_{p_plus}(y, f))`` for ``y`` in {-1, +1}.

    ``T_p(y, f) = H(p) - y q f`` with ``q = 1 - p`` (``y = +1``) or ``q = p`` (``y = -1``)
    is the tangent at ``f = log(p/(1-p))`` of the logistic negative log-likelihood
    ``log(1 + exp(-y f))`` (see the Notes of :class:`DoubleHingeSVM`).

    Parameters
    ----------
    y : array-like
        Labels in {-1, +1}.
    f : array-like
        Scores (estimated posterior logits of +1), broadcast against ``y``.
    p_minus, p_plus : float
        Chow's posterior thresholds, ``0 < p_minus < p_plus < 1`` (:func:`chow_thresholds`).

    Returns
    -------
    numpy.ndarray
        The loss of each example, ``>= 0``.
    """
    y = np.asarray(y, dtype=float)
    f = np.asarray(f, dtype=float)
    tangents = [_entropy(p) - y * np.where(y > 0, 1.0 - p, p) * f for p in (p_minus, p_plus)]
    return np.maximum(0.0, np.maximum(*tangents))


def _hinge_form(y, p_minus, p_plus):
    """Hinge decomposition ``l = a_i [t_i - m]_+ + D [tau_i - m]_+`` in the margin ``m = y f``."""
    pos = y > 0
    h_lo, h_hi = _entropy(p_minus), _entropy(p_plus)
    a = np.where(pos, 1.0 - p_plus, p_minus)
    t = np.where(pos, h_hi / (1.0 - p_plus), h_lo / p_minus)
    tau = y * (h_lo - h_hi) / (p_plus - p_minus)
    return a, p_plus - p_minus, t, tau


def _best_intercept(f, y, t, tau, cxi, ceta):
    """Exact minimiser over ``b`` of ``sum_i cxi_i [t_i - y_i(f_i+b)]_+ + ceta_i [tau_i - y_i(f_i+b)]_+``.

    Convex piecewise linear in ``b`` with kinks ``y_i k_i - f_i``: the first kink
    where the right slope ``-(positive weight above) + (negative weight below)``
    turns non-negative is a minimiser.
    """
    bp = np.concatenate([y * t - f, y * tau - f])
    c = np.concatenate([cxi, ceta])
    pos = np.concatenate([y > 0, y > 0])
    order = np.argsort(bp, kind="stable")
    cum_pos = np.cumsum(np.where(pos[order], c[order], 0.0))
    cum_neg = np.cumsum(np.where(pos[order], 0.0, c[order]))
    slope = cum_neg - (cum_pos[-1] - cum_pos)
    return float(bp[order][min(np.searchsorted(slope, 0.0), len(bp) - 1)])


def _certificate(gamma, y, Phi, K, cxi, ceta, t, tau, zero_below=0.0):
    """A feasible dual point from ``gamma``, its dual value, and the primal value of the model it defines.

    ``gamma`` is cleaned to the box ``[0, cxi + ceta]``, entries below ``zero_below``
    times the box are zeroed, then ``sum_i y_i gamma_i = 0`` is restored by scaling
    down the class with the larger sum; the model is
    ``f = sum_j y_j gamma_j k(x_j, .) + b`` with ``b`` optimal for it.
    Returns ``(primal, dual, gamma, b)``; ``primal - dual`` bounds the suboptimality.
    """
    u = cxi + ceta
    g = np.clip(gamma, 0.0, u)
    g[g < zero_below * u] = 0.0
    excess = float(y @ g)
    side = y > 0 if excess > 0 else y < 0
    total = g[side].sum()
    if total > 0:
        g[side] *= max(0.0, 1.0 - abs(excess) / total)
    alpha = np.minimum(g, cxi)
    beta = g - alpha
    coef = y * g
    if K is None:
        w = Phi.T @ coef
        f, ww = Phi @ w, float(w @ w)
    else:
        f = K @ coef
        ww = float(coef @ f)
    b = _best_intercept(f, y, t, tau, cxi, ceta)
    m = y * (f + b)
    loss = cxi @ np.maximum(0.0, t - m) + ceta @ np.maximum(0.0, tau - m)
    return 0.5 * ww + float(loss), float(t @ alpha + tau @ beta) - 0.5 * ww, g, b


def _max_step(v, dv):
    neg = dv < 0
    return float(np.min(-v[neg] / dv[neg])) if np.any(neg) else np.inf


def _solve(Phi, y, cxi, ceta, t, tau, *, K=None, tol=1e-8, max_iter=100):
    """Primal-dual (Mehrotra) interior point method on the primal QP (10) with features ``Phi``.

    Variables ``v = (theta, b)``, slacks ``xi, eta``; constraints ``m + xi >= t``,
    ``m + eta >= tau``, ``xi >= 0``, ``eta >= 0`` with ``m = y (Phi theta + b)``.
    The Newton systems reduce to ``(r+1) x (r+1)`` normal equations. The stopping
    test is the relative duality gap of :func:`_certificate`; the best certificate
    seen is returned as ``(gamma, b, info)``.

    One function on purpose: the predictor and corrector steps share the iterate, its residuals
    and the factorised normal equations of the same iteration, so a split would pass a dozen
    arrays between pieces that make sense only together.
    """
    n, r = Phi.shape
    M = y[:, None] * np.hstack([Phi, np.ones((n, 1))])
    hv = np.ones(r + 1)
    hv[-1] = 0.0
    v = np.zeros(r + 1)
    xi = np.maximum(t, 0.0) + 1.0
    eta = np.maximum(tau, 0.0) + 1.0
    s = [xi - t, eta - tau, xi.copy(), eta.copy()]
    lam = [cxi / 2, ceta / 2, cxi / 2, ceta / 2]
    best, stalled = None, 0
    info = {"n_iter": 0, "converged": False}
    for it in range(max_iter + 1):
        # the certificate (O(n log n + n r)) only once the interior point gap is near tol
        complementarity = sum(float(sk @ lk) for sk, lk in zip(s, lam))
        own_primal = 0.5 * float(v[:-1] @ v[:-1]) + float(cxi @ xi + ceta @ eta)
        last = it == max_iter or stalled >= 3
        if best is None or last or complementarity <= 1e4 * tol * abs(own_primal):
            cert = _certificate(lam[0] + lam[1], y, Phi, K, cxi, ceta, t, tau)
            if best is None or cert[0] - cert[1] < best[0] - best[1]:
                best = cert
        info["n_iter"] = it
        if best[0] - best[1] <= tol * abs(best[0]) or last:
            break
        m = M @ v
        r_dv = hv * v - M.T @ (lam[0] + lam[1])
        r_dxi, r_deta = cxi - lam[0] - lam[2], ceta - lam[1] - lam[3]
        r_p = [m + xi - t - s[0], m + eta - tau - s[1], xi - s[2], eta - s[3]]
        W = [lk / sk for lk, sk in zip(lam, s)]
        a1, a2 = W[0] + W[2], W[1] + W[3]
        delta = W[0] * W[2] / a1 + W[1] * W[3] / a2
        S = M.T @ (delta[:, None] * M)
        S.flat[:: r + 2] += hv
        try:
            fac = scipy.linalg.cho_factor(S, check_finite=False)
            solve_S = lambda rhs: scipy.linalg.cho_solve(fac, rhs, check_finite=False)  # noqa: E731
        except (
            np.linalg.LinAlgError
        ):  # numerically indefinite near the end: pivoted LU + refinement
            fac = scipy.linalg.lu_factor(S, check_finite=False)
            solve_S = lambda rhs: scipy.linalg.lu_solve(fac, rhs, check_finite=False)  # noqa: E731

        def newton(r_v, r_xi, r_eta, r_pk, rc):
            q = [rck / sk + Wk * rpk for rck, sk, Wk, rpk in zip(rc, s, W, r_pk)]
            R_xi, R_eta = -r_xi - (q[0] + q[2]), -r_eta - (q[1] + q[3])
            rhs = -r_v - M.T @ (q[0] + q[1] + W[0] * R_xi / a1 + W[1] * R_eta / a2)
            dv = solve_S(rhs)
            Mdv = M @ dv
            dxi = (R_xi - W[0] * Mdv) / a1
            deta = (R_eta - W[1] * Mdv) / a2
            ds = [Mdv + dxi + r_pk[0], Mdv + deta + r_pk[1], dxi + r_pk[2], deta + r_pk[3]]
            dlam = [-(rck + lk * dsk) / sk for rck, lk, dsk, sk in zip(rc, lam, ds, s)]
            return [dv, dxi, deta, ds, dlam]

        def direction(rc):
            """Newton step, with iterative refinement of the one equation the elimination may break."""
            step_ = newton(r_dv, r_dxi, r_deta, r_p, rc)
            zero_n, zero_4 = np.zeros(n), [np.zeros(n)] * 4
            for _ in range(2):
                dv, dlam = step_[0], step_[4]
                err = hv * dv - M.T @ (dlam[0] + dlam[1]) + r_dv
                if np.abs(err).max() <= 1e-14 * (1.0 + np.abs(r_dv).max()):
                    break
                fix = newton(err, zero_n, zero_n, zero_4, zero_4)
                step_ = [a + b for a, b in zip(step_[:3], fix[:3])] + [
                    [a + b for a, b in zip(step_[k], fix[k])] for k in (3, 4)
                ]
            return step_

        def step(ds, dlam):
            return _max_step(np.concatenate(s + lam), np.concatenate(ds + dlam))

        mu = complementarity / (4 * n)
        rc = [sk * lk for sk, lk in zip(s, lam)]
        _, _, _, ds, dlam = direction(rc)  # predictor (affine scaling)
        a_aff = min(1.0, step(ds, dlam))
        mu_aff = sum(
            float((sk + a_aff * dsk) @ (lk + a_aff * dlk))
            for sk, dsk, lk, dlk in zip(s, ds, lam, dlam)
        ) / (4 * n)
        sigma = (mu_aff / mu) ** 3
        rc = [rck + dsk * dlk - sigma * mu for rck, dsk, dlk in zip(rc, ds, dlam)]
        dv, dxi, deta, ds, dlam = direction(rc)  # corrector
        a = min(1.0, 0.99 * step(ds, dlam))
        stalled = stalled + 1 if a < 1e-6 else 0
        v, xi, eta = v + a * dv, xi + a * dxi, eta + a * deta
        s = [np.maximum(sk + a * dsk, 1e-300) for sk, dsk in zip(s, ds)]
        lam = [np.maximum(lk + a * dlk, 1e-300) for lk, dlk in zip(lam, dlam)]
    # sparsify: zero the interior point multipliers of non-support vectors if the gap allows
    bound = max(best[0] - best[1], tol * abs(best[0]))
    for zero_below in (1e-6, 1e-8, 1e-10, 1e-12):
        sparse = _certificate(best[2], y, Phi, K, cxi, ceta, t, tau, zero_below)
        if sparse[0] - sparse[1] <= bound:
            best = sparse
            break
    primal, dual, gamma, b = best
    info.update(
        objective=primal,
        dual_objective=dual,
        gap=primal - dual,
        rel_gap=(primal - dual) / max(abs(primal), 1e-300),
        converged=primal - dual <= tol * abs(primal),
    )
    return gamma, b, info


def _rbf_features(K):
    """``Phi`` with ``Phi Phi^T = K`` (eigenvectors scaled by sqrt of eigenvalues above rounding)."""
    vals, vecs = np.linalg.eigh(K)
    keep = vals > max(vals[-1], 0.0) * 1e-13
    return vecs[:, keep] * np.sqrt(vals[keep])


class DoubleHingeSVM(ClassifierMixin, BaseEstimator):
    r"""Binary SVM with a reject option trained on the double hinge loss (Grandvalet et al., 2008).

    Minimises exactly ``P(f, b) = ||f||^2/2 + C sum_i l(y_i, f(x_i) + b)`` over
    ``f`` in the kernel's RKHS and an unregularised intercept ``b``, where ``l`` is
    the double hinge loss for Chow's posterior thresholds ``p- < p+``. The score
    ``f(x)`` estimates the posterior logit ``log(P(Y=+1|x)/P(Y=-1|x))`` near the
    thresholds ``f- = log(p-/(1-p-))`` and ``f+ = log(p+/(1-p+))``; an example is
    rejected iff ``f- < f(x) < f+``.

    Parameters
    ----------
    reject_cost : float, default=0.2
        Symmetric cost ``d`` of a rejection (misclassification costs 1), ``0 < d < 1/2``;
        then ``p- = d`` and ``p+ = 1 - d``. Used for ``r_pos`` / ``r_neg`` left None.
    C : float, default=1.0
        Weight of the *sum* of the losses, as scikit-learn's ``SVC(C=...)``:
        ``||f||^2/2 + C sum_i loss_i`` (not ``C/n``); the paper's ``C``. With standardised
        features, grids in ``C n`` (e.g. ``C in {1, 10, 100, 1000} / n``) are the informative ones.
    kernel : {"linear", "rbf"}, default="linear"
    gamma : "scale", "auto" or float, default="scale"
        RBF width in ``exp(-gamma ||x - x'||^2)``: ``"scale"`` is
        ``1 / (n_features * X.var())`` as in scikit-learn, ``"auto"`` is ``1 / n_features``.
    n_landmarks : int or None, default=None
        ``kernel="rbf"`` only. None: the exact kernel (``O(n^3)`` time, ``O(n^2)`` memory). An
        int ``r``: the Nyström approximation (:class:`sklearn.kernel_approximation.Nystroem`)
        on ``r`` training rows ``z_j`` drawn uniformly without replacement, i.e. ``f`` in the
        span of the ``k(z_j, .)``: problem (10) with the features ``K_nm K_mm^{-1/2}``, at
        ``O(n r^2)`` per iteration; ``r >= n`` is the exact problem up to rounding. The
        approximation can only raise the minimum of ``P``.
    random_state : int or None, default=None
        Seed of the Nyström landmarks (unused otherwise).
    c_pos, c_neg : float or None, default=None
        Cost of misclassifying a positive / negative example (None: 1). The
        positive class is ``classes_[1]`` (the larger label in sorted order).
    r_pos, r_neg : float or None, default=None
        Cost of rejecting a positive / negative example (None: ``reject_cost``).
        Costs must satisfy ``r_pos/c_pos + r_neg/c_neg < 1``.
    tol : float, default=1e-8
        Stop when the certified relative duality gap ``(P - D)/P`` is below ``tol``.
    max_iter : int, default=100
        Maximum interior point iterations.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    p_minus_, p_plus_ : float
        Chow's posterior thresholds.
    f_minus_, f_plus_ : float
        Rejection thresholds on ``decision_function``.
    threshold_ : float
        ``log(c_neg/c_pos)`` (0 for equal misclassification costs), lies in
        ``(f_minus_, f_plus_)``; ``predict`` returns ``classes_[1]`` iff ``f(x) > threshold_``.
    coef_ : ndarray of shape (n_features,) or ``(n_landmarks_,)``
        For ``kernel="linear"``, and in the Nyström feature space for ``n_landmarks`` set.
    feature_map_ : Nystroem or None
        The fitted Nyström map (``n_landmarks`` set), else None.
    n_landmarks_ : int or None
        Number of landmarks used (``min(n_landmarks, n)``), None for the exact kernel.
    intercept_ : float
    dual_coef_ : ndarray of shape (n_SV,)
        ``y_i gamma_i`` of the support vectors (``gamma = alpha + beta`` of the dual).
    support_ : ndarray of int
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Only for ``kernel="rbf"`` with the exact kernel.
    gamma_ : float
        The RBF width used (None for linear).
    objective_ : float
        Primal objective ``P`` of the fitted model.
    dual_objective_ : float
        Dual objective (11) at a feasible dual point: a lower bound on ``min P``.
    gap_, rel_gap_ : float
        ``objective_ - dual_objective_ >= P - min P``, and it divided by ``objective_``.
    n_iter_ : int
    converged_ : bool
        ``rel_gap_ <= tol``; otherwise ``fit`` emits a ConvergenceWarning (the certificate stays valid).

    Notes
    -----
    **Reconstruction.** The equations of the seed text were lost in extraction; they
    are rebuilt here from the surviving sentences (quoted), then checked.

    *Chow's rule.* "incurs a cost r- and r+ for examples labeled -1 and +1",
    costs c-, c+ of errors, "0 < p- < p+ < 1" under assumptions (1)-(2): minimising
    the expected cost gives :func:`chow_thresholds`; ``p- < p+`` iff
    ``r+/c+ + r-/c- < 1``, which is (2). "in the symmetric case ... p- = 1 - p+ = r".

    *Loss (7)-(8).* "the surrogate loss should be tangent to the neg-log-likelihood
    at f = log(p/(1-p))", at "the threshold points p+ and p-", and "to encourage
    sparsity" it is zero past a point (Figure 1: "double hinge"). The tangent of
    ``log(1 + exp(-y f))`` at ``f = logit(p)`` is ``H(p) - (1-p) f`` for ``y=+1`` and
    ``H(p) + p f`` for ``y=-1``, ``H`` the entropy in nats; hence
    ``l(y, f) = max(0, T_{p-}(y, f), T_{p+}(y, f))`` (:func:`double_hinge_loss`). In
    the margin ``m = y f``: ``l = a_i [t_i - m]_+ + (p+ - p-) [tau_i - m]_+``.
    Evidence: (i) the fragments "D = C(p+ - p-), C_i = C(1 - p+) for positive
    examples, and C_i = C p- for negative examples" are exactly these hinge weights
    times ``C``; (ii) "for negative examples t_i = H(p-)/p-,
    tau_i = (H(p-) - H(p+))/(p- - p+)" are the zero of ``H(p-) + p- f`` and the
    crossing of the two tangents, in the margin; symmetrically for positives
    ``t_i = H(p+)/(1-p+)``, ``tau_i = (H(p-) - H(p+))/(p+ - p-)``; (iii) "the loss of
    Bartlett and Wegkamp (2008) is a scaled version": for ``p- = d = 1 - p+``,
    ``l(y, f) = H(d) phi(d y f / H(d))`` with their ``phi(z) = 1 - (1-d) z / d``
    (``z < 0``), ``1 - z`` (``0 <= z < 1``), ``0`` else; (iv) "The two rules are
    identical for r ~ 0.24": B&W reject iff ``|z| < 1/2``, ours iff ``|f| < log((1-d)/d)``,
    i.e. ``|z| < d log((1-d)/d) / H(d)``, which equals 1/2 at ``d = 0.24149`` (the root by
    :func:`scipy.optimize.brentq`; erratum notes in ``docs/papers.md``); ours
    rejects more below and fewer above ("rejects more examples when the loss
    incurred by rejection is small"). (iii) and (iv) are checked in the tests.
    The costs enter the loss only through ``p-`` and ``p+`` (the paper's
    ``l_{p-,p+}``): scaling all four costs changes nothing.

    *Primal (10).* With the regularised risk (6) and "C an arbitrary constant":
    ``min 1/2 ||f||^2 + sum_i C_i xi_i + D sum_i eta_i`` s.t.
    ``y_i (f(x_i) + b) >= t_i - xi_i``, ``y_i (f(x_i) + b) >= tau_i - eta_i``,
    ``xi, eta >= 0`` ("slack variables xi and eta"), i.e. ``P`` above.

    *Dual (11).* "a quadratic problem under box constraints", "an additional vector
    to optimize": ``max_{alpha, beta} sum_i (t_i alpha_i + tau_i beta_i) -
    1/2 sum_ij gamma_i gamma_j y_i y_j k(x_i, x_j)``, ``gamma = alpha + beta``,
    s.t. ``sum_i y_i gamma_i = 0``, ``0 <= alpha_i <= C_i``, ``0 <= beta_i <= D``, with
    ``f = sum_j gamma_j y_j k(x_j, .)`` and ``b`` the multiplier of the equality
    ("primal variable b is equal to [the Lagrange parameter]"). Its five KKT
    subsets (gamma = 0; 0 < gamma < C_i with ``m = t_i``; gamma = C_i; C_i < gamma <
    C_i + D with ``m = tau_i``; gamma = C_i + D) are the "five subsets" with
    ``I_T = I_t u I_tau``. Checked: the primal agrees with an independent cvxpy
    solve of ``P`` written with the ``max`` form of the loss (tests).

    **Solver.** Not the paper's active set method (Algorithm 1, one linear system
    over the margin vectors per iteration) but a Mehrotra primal-dual interior
    point method on (10) whose Newton steps reduce to ``(r+1) x (r+1)`` normal
    equations, ``r`` the feature dimension: ``d`` for linear (``O(n d^2)`` per
    iteration), for the exact RBF kernel the rank of the kernel matrix via its
    eigendecomposition (hence its cost above: meant for ``n`` up to a few thousand).
    Iterations hardly depend on ``C`` (10-25 measured). Each builds a feasible dual
    point and the model it defines (with the exactly optimal ``b``); their duality gap
    is the stopping test, as the paper suggests ("monitoring the duality gap").

    **Kernels.** The seed's experiments use Gaussian kernels, because the linear one is
    biased even where the true log-odds is linear: the loss is tangent to the logistic
    loss only at ``f-`` and ``f+``, and one line cannot meet the log-odds at both. On
    1-D classes N(-1, 1) / N(+1, 1) with equal priors (log-odds ``2x``) the best linear
    model rejects ``|x| < 1.449`` at ``d = 0.1`` where Chow's rule rejects ``|x| < 1.099``
    (excess cost 0.0037 over Bayes' 0.0701); at ``d = 0.05`` its best slope is 0, so it
    rejects everything. The RBF model's excess cost falls towards 0 as ``n`` grows (tests;
    ``docs/papers.md``); beyond a few thousand rows, set ``n_landmarks``
    (``benchmarks/bench_double_hinge_nystroem.py`` measures the distance to the exact
    kernel).

    References
    ----------
    .. [1] Y. Grandvalet, A. Rakotomamonjy, J. Keshet, S. Canu. Support Vector
       Machines with a Reject Option. NIPS 21, 2008.
    .. [2] P. L. Bartlett, M. H. Wegkamp. Classification with a Reject Option using
       a Hinge Loss. JMLR 9:1823-1840, 2008.
    .. [3] C. K. Chow. On optimum recognition error and reject tradeoff. IEEE
       Trans. Inf. Theory 16(1):41-46, 1970.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-3.0], [-2.0], [-0.1], [0.1], [2.0], [3.0]])
    >>> y = np.array(["a", "a", "b", "a", "b", "b"])
    >>> model = DoubleHingeSVM(reject_cost=0.2, C=10.0).fit(X, y)
    >>> model.predict([[-3.0], [3.0]]).tolist(), model.reject([[-3.0], [0.0], [3.0]]).tolist()
    (['a', 'b'], [False, True, False])
    """

    def __init__(
        self,
        *,
        reject_cost=0.2,
        C=1.0,
        kernel="linear",
        gamma="scale",
        n_landmarks=None,
        random_state=None,
        c_pos=None,
        c_neg=None,
        r_pos=None,
        r_neg=None,
        tol=1e-8,
        max_iter=100,
    ):
        self.reject_cost = reject_cost
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.n_landmarks = n_landmarks
        self.random_state = random_state
        self.c_pos = c_pos
        self.c_neg = c_neg
        self.r_pos = r_pos
        self.r_neg = r_neg
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _costs(self):
        """``(c_pos, c_neg, r_pos, r_neg)`` after defaults, validated."""
        d = self.reject_cost
        if self.r_pos is None or self.r_neg is None:
            if not np.isfinite(d) or d <= 0:
                raise ValueError(f"reject_cost must be positive, got {d!r}")
            if d >= 0.5 and all(
                c is None for c in (self.c_pos, self.c_neg, self.r_pos, self.r_neg)
            ):
                raise ValueError(
                    f"reject_cost must be < 1/2, got {d!r}: with a rejection cost of at "
                    "least half the misclassification cost rejection is never optimal"
                )
        costs = [1.0 if c is None else c for c in (self.c_pos, self.c_neg)]
        costs += [d if r is None else r for r in (self.r_pos, self.r_neg)]
        chow_thresholds(*costs)
        return tuple(float(c) for c in costs)

    def _kernel_gamma(self, X):
        if self.kernel == "linear":
            return None
        if self.kernel != "rbf":
            raise ValueError(f"kernel must be 'linear' or 'rbf', got {self.kernel!r}")
        if self.gamma == "scale":
            var = X.var()
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if self.gamma == "auto":
            return 1.0 / X.shape[1]
        if isinstance(self.gamma, str) or not self.gamma > 0:
            raise ValueError(
                f"gamma must be 'scale', 'auto' or a positive float, got {self.gamma!r}"
            )
        return float(self.gamma)

    def fit(self, X, y):
        """Fit on ``X`` of shape (n, d) and ``y`` holding exactly two distinct labels."""
        X, y = check_X_y(X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            k = self.classes_.size
            raise ValueError(
                f"Only binary classification is supported. DoubleHingeSVM needs exactly two "
                f"classes in y, found {k} class{'es' if k > 1 else ''}: {self.classes_.tolist()[:10]}"
            )
        if not (np.isfinite(self.C) and self.C > 0):
            raise ValueError(f"C must be positive, got {self.C!r}")
        c_pos, c_neg, r_pos, r_neg = self._costs()
        self.p_minus_, self.p_plus_ = chow_thresholds(c_pos, c_neg, r_pos, r_neg)
        self.f_minus_ = float(np.log(self.p_minus_ / (1.0 - self.p_minus_)))
        self.f_plus_ = float(np.log(self.p_plus_ / (1.0 - self.p_plus_)))
        self.threshold_ = float(np.log(c_neg / c_pos))
        self.gamma_ = self._kernel_gamma(X)
        self.n_features_in_ = X.shape[1]
        ys = np.where(y == self.classes_[1], 1.0, -1.0)
        a, D, t, tau = _hinge_form(ys, self.p_minus_, self.p_plus_)
        cxi, ceta = self.C * a, np.full_like(a, self.C * D)
        self.feature_map_, self.n_landmarks_ = None, None
        if self.n_landmarks is not None:
            if self.kernel != "rbf":
                raise ValueError(
                    f"n_landmarks is the Nyström rank of the rbf kernel; kernel={self.kernel!r} "
                    "takes n_landmarks=None"
                )
            if (
                isinstance(self.n_landmarks, bool)
                or not isinstance(self.n_landmarks, (int, np.integer))
                or self.n_landmarks < 1
            ):
                raise ValueError(
                    f"n_landmarks must be a positive int or None, got {self.n_landmarks!r}"
                )
            self.n_landmarks_ = int(min(self.n_landmarks, X.shape[0]))
            self.feature_map_ = Nystroem(
                gamma=self.gamma_, n_components=self.n_landmarks_, random_state=self.random_state
            ).fit(X)
            K, Phi = None, self.feature_map_.transform(X)
        elif self.kernel == "linear":
            K, Phi = None, X
        else:
            K = rbf_kernel(X, gamma=self.gamma_)
            Phi = _rbf_features(K)
        gamma, b, info = _solve(
            Phi, ys, cxi, ceta, t, tau, K=K, tol=self.tol, max_iter=self.max_iter
        )
        self.support_ = np.flatnonzero(gamma > 0)
        self.dual_coef_ = (ys * gamma)[self.support_]
        self.intercept_ = b
        if K is None:
            self.coef_ = Phi.T @ (ys * gamma)
        else:
            self.support_vectors_ = X[self.support_]
        self.objective_, self.dual_objective_ = info["objective"], info["dual_objective"]
        self.gap_, self.rel_gap_ = info["gap"], info["rel_gap"]
        self.n_iter_, self.converged_ = info["n_iter"], info["converged"]
        if not self.converged_:
            warnings.warn(
                f"DoubleHingeSVM: relative duality gap {self.rel_gap_:.2e} > tol={self.tol:g} "
                f"after {self.n_iter_} iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def decision_function(self, X):
        """Score ``f(x)``, an estimate of the posterior logit of ``classes_[1]`` near the thresholds."""
        check_is_fitted(self, "intercept_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but DoubleHingeSVM is expecting "
                f"{self.n_features_in_} features as input."
            )
        if self.feature_map_ is not None:
            return self.feature_map_.transform(X) @ self.coef_ + self.intercept_
        if self.kernel == "linear":
            return X @ self.coef_ + self.intercept_
        return (
            rbf_kernel(X, self.support_vectors_, gamma=self.gamma_) @ self.dual_coef_
            + self.intercept_
        )

    def predict(self, X):
        """The class on f's side of ``threshold_`` (0 for equal misclassification costs), rejected or not."""
        f = self.decision_function(X)
        return self.classes_[(f > self.threshold_).astype(int)]

    def reject(self, X):
        """Boolean array, True where Chow's rule on ``f`` abstains: ``f_minus_ < f(x) < f_plus_``."""
        f = self.decision_function(X)
        return (f > self.f_minus_) & (f < self.f_plus_)


def fit_double_hinge(
    Z_trn,
    y_trn,
    Z_val,
    y_val,
    reject_cost: float,
    C_grid: Sequence[float],
    *,
    c_scaling: str = "mean",
    kernel: str = "linear",
    gamma_grid: Sequence[float] | None = None,
    n_landmarks: int | None = None,
    random_state=None,
):
    """One :class:`DoubleHingeSVM` per ``C`` (and per RBF width); the best by the validation cost risk.

    Model selection for the cost-based model: the cost risk ``(errors + d rejections) / n`` of
    each model on the validation sample (:func:`rejectopt.metrics._confusion.selective_outcome`, in percent
    with the 0/100 loss), the smallest kept; ties go to the smaller ``C`` (and, for the RBF
    kernel, first to the smaller width ``gamma``: the smoother model). ``Z_*`` are
    (standardised) features, ``y_*`` binary labels. The loss weight is ``C / n_trn``
    (``c_scaling="mean"``: ``C`` per example) or ``C`` (``"sum"``).

    ``kernel="linear"`` fits the linear model (``gamma_grid`` must be None). ``kernel="rbf"``
    fits one model per ``(gamma, C)`` of ``gamma_grid x C_grid`` (absolute widths), with the
    Nyström rank ``n_landmarks`` (None: the exact kernel) and the landmarks' seed
    ``random_state``: the same landmarks for every ``(gamma, C)`` and every reject cost.

    Parameters
    ----------
    Z_trn : array-like of shape (n_trn, n_features)
        Training features.
    y_trn : array-like of shape (n_trn,)
        Training labels, two distinct values.
    Z_val : array-like of shape (n_val, n_features)
        Validation features, the sample the model is chosen on.
    y_val : array-like of shape (n_val,)
        Validation labels.
    reject_cost : float
        Cost ``d`` of a rejection, ``0 < d < 1/2`` (misclassification costs 1).
    C_grid : sequence of float
        The loss weights tried, read with ``c_scaling``.
    c_scaling : {"mean", "sum"}, default="mean"
        ``"mean"``: the model's ``C`` is ``C / n_trn``; ``"sum"``: ``C`` itself.
    kernel : {"linear", "rbf"}, default="linear"
        The model's kernel.
    gamma_grid : sequence of float or None, default=None
        The absolute RBF widths tried (``kernel="rbf"`` only).
    n_landmarks : int or None, default=None
        The Nyström rank of the RBF models (None: the exact kernel).
    random_state : int or None, default=None
        Seed of the Nyström landmarks.

    Returns
    -------
    model : DoubleHingeSVM
    C : float
        The chosen grid value.
    info : dict
        ``key``: the chosen model's key in ``val_cost_risk`` and ``fits`` (``C`` for the linear
        kernel, ``(gamma, C)`` for the RBF kernel); ``gamma``: the chosen width (None for linear);
        ``val_cost_risk`` (key -> validation cost risk, percent), ``fit_wall_s`` / ``fit_cpu_s``
        (summed over the grid), ``fits`` (key -> (wall s, cpu s, iterations, relative gap)).

    Raises
    ------
    ValueError
        On an unknown ``kernel`` or ``c_scaling``, or a ``gamma_grid`` that does not fit the kernel.
    """
    if c_scaling not in ("mean", "sum"):
        raise ValueError(f"c_scaling must be 'mean' or 'sum', got {c_scaling!r}")
    if kernel == "linear":
        if gamma_grid is not None:
            raise ValueError(
                "gamma_grid is the RBF kernel's; the linear kernel takes gamma_grid=None"
            )
        grid: list[tuple[float | None, float]] = [
            (None, float(c)) for c in sorted(float(c) for c in C_grid)
        ]
    elif kernel == "rbf":
        gammas = sorted(float(g) for g in (gamma_grid or ()))
        if not gammas or any(not (np.isfinite(g) and g > 0) for g in gammas):
            raise ValueError(
                f"kernel='rbf' needs gamma_grid of positive widths, got {gamma_grid!r}"
            )
        grid = [(g, float(c)) for g in gammas for c in sorted(float(c) for c in C_grid)]
    else:
        raise ValueError(f"kernel must be 'linear' or 'rbf', got {kernel!r}")
    n = len(y_trn)
    y_val = np.asarray(y_val)
    best: tuple[DoubleHingeSVM, Any, float] | None = None
    risks: dict[Any, float] = {}
    fits: dict[Any, tuple[float, float, int, float]] = {}
    for gamma, C in grid:
        key: Any = C if gamma is None else (gamma, C)
        weight = C / n if c_scaling == "mean" else C
        extra: dict[str, Any] = (
            {}
            if gamma is None
            else {
                "kernel": "rbf",
                "gamma": gamma,
                "n_landmarks": n_landmarks,
                "random_state": random_state,
            }
        )
        wall, cpu = time.perf_counter(), time.process_time()
        model = DoubleHingeSVM(reject_cost=reject_cost, C=weight, **extra).fit(Z_trn, y_trn)
        fits[key] = (
            time.perf_counter() - wall,
            time.process_time() - cpu,
            int(model.n_iter_),
            float(model.rel_gap_),
        )
        loss = per_example_loss("zero_one", y_val, model.predict(Z_val))
        risks[key] = selective_outcome(loss, ~model.reject(Z_val), reject_cost)["cost_risk"]
        if best is None or risks[key] < best[2]:
            best = (model, key, risks[key])
    if best is None:
        raise ValueError(f"C_grid must hold at least one C, got {C_grid!r}")
    model, key, _ = best
    info = {
        "key": key,
        "gamma": None if kernel == "linear" else key[0],
        "val_cost_risk": risks,
        "fits": fits,
        "fit_wall_s": sum(f[0] for f in fits.values()),
        "fit_cpu_s": sum(f[1] for f in fits.values()),
    }
    return model, (key if kernel == "linear" else key[1]), info
