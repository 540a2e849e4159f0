"""Closed-form optimal selective function on a finite input set (Theorems 3 and 7 of [1]).

For a finite ``X`` with known ``p_I(x)``, ``p_O(x)`` and conditional risk ``r(x)``, the
bounded TPR-FPR model (Problem 1) is solved through the structure proved in [1]: the
optimal ``c`` accepts ``s(x) = r(x) + mu g(x) < lambda`` with ``g = p_O / p_I`` (the paper prints
``p_I / p_I``, see ``docs/papers.md``), rejects ``> lambda``, and takes
values ``tau(x)`` on the boundary (Theorem 3, eq. 9), where the boundary acceptance is fixed
by the two rate constraints (Theorem 7). ``(mu, lambda)`` are the multipliers of the LP
(21): for a fixed ``mu >= 0`` the dual function is maximised at the weighted
``phi_min``-quantile ``lambda(mu)`` of the scores, and as a function of ``mu`` it is concave
and piecewise linear with breakpoints among the values ``mu_ij = (r_j - r_i) / (g_i - g_j)``
where two inputs swap order; evaluating it at ``mu = 0`` and every breakpoint therefore finds
the optimum exactly (O(m^3 log m) for ``m`` inputs, meant for small ``X``).

Note on Lemma 1 of the supplement: its proof claims ``R^S(h, c / alpha) = R^S(h, c) /
alpha``, but the selective risk is invariant to scaling ``c`` (numerator and ``phi`` scale
alike). The reformulation (21) is still exact for that very reason: any feasible ``c`` with
``phi(c) > phi_min`` scales down to ``phi = phi_min`` with the same risk and a smaller FPR.
The seeds' errata, each with its numerical evidence, are collected in ``docs/papers.md``.

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _parameters
from ._validation import as_finite_1d, check_lengths

__all__ = [
    "FiniteSolution",
    "solve_bounded_tpr_fpr_finite",
    "solve_bounded_precision_recall_finite",
]


@dataclass(frozen=True)
class FiniteSolution:
    """Optimal selective function on a finite input set.

    Attributes
    ----------
    accept_prob : ndarray, shape (m,)
        ``c(x)`` for every input.
    selective_risk, tpr, fpr : float
        ``R^S``, ``phi`` and ``rho`` of ``c``.
    mu, lam : float
        Multipliers of eq. (9): ``c(x) = 1`` where ``r + mu g < lam``, 0 where ``>``.

    Parameters
    ----------
    accept_prob : ndarray, shape (m,)
        The attribute above.
    selective_risk, tpr, fpr, mu, lam : float
        The attributes above.
    """

    accept_prob: np.ndarray
    selective_risk: float
    tpr: float
    fpr: float
    mu: float
    lam: float


def _check_distribution(p: Any, name: str) -> np.ndarray:
    p = as_finite_1d(p, name)
    if (p < 0).any():
        raise ValueError(f"{name} must be non-negative")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, sums to {p.sum()!r}")
    return p


def _dual_values(
    a: np.ndarray, r: np.ndarray, g: np.ndarray, mus: np.ndarray, phi: float, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """Dual function d(mu) = max_lambda [phi lambda - rho mu - sum_x a_x (lambda - s_x)^+]."""
    s = r[None, :] + mus[:, None] * g[None, :]
    order = np.argsort(s, axis=1, kind="stable")
    s_sorted = np.take_along_axis(s, order, axis=1)
    cum = np.cumsum(a[order], axis=1)
    k = np.argmax(cum >= phi * (1 - 1e-13), axis=1)
    lam = s_sorted[np.arange(mus.size), k]
    d = phi * lam - rho * mus - np.sum(a[None, :] * np.maximum(0.0, lam[:, None] - s), axis=1)
    return d, lam


def _greedy(a: np.ndarray, key: np.ndarray, target: float) -> np.ndarray:
    """Fill ``sum a c = target`` taking inputs in increasing ``key`` (fractional knapsack)."""
    c = np.zeros(a.size)
    order = np.argsort(key, kind="stable")
    before = np.concatenate([[0.0], np.cumsum(a[order])[:-1]])
    take = np.clip((target - before) / np.where(a[order] > 0, a[order], 1.0), 0.0, 1.0)
    c[order] = np.where(a[order] > 0, take, 0.0)
    return c


def solve_bounded_tpr_fpr_finite(
    p_in: Any, p_out: Any, cond_risk: Any, tpr_min: float, fpr_max: float
) -> FiniteSolution:
    """Optimal selective function of Problem 1 on a finite input set (Theorems 3 and 7).

    Parameters
    ----------
    p_in, p_out : array_like, shape (m,)
        ``p_I(x)`` and ``p_O(x)``, each non-negative and summing to 1.
    cond_risk : array_like, shape (m,)
        Conditional risk ``r(x) = sum_y p_I(y | x) l(y, h(x)) >= 0`` of the fixed classifier.
    tpr_min : float in (0, 1]
        phi_min.
    fpr_max : float in [0, 1]
        rho_max.

    Returns
    -------
    FiniteSolution
        An optimal ``c``; its risk equals the optimum of the LP (21).

    Raises
    ------
    ValueError
        On bad input, or when no ``c`` reaches TPR ``tpr_min`` at FPR <= ``fpr_max``.
    """
    a = _check_distribution(p_in, "p_in")
    b = _check_distribution(p_out, "p_out")
    r = as_finite_1d(cond_risk, "cond_risk")
    check_lengths(p_in=a, p_out=b, cond_risk=r)
    if (r < 0).any():
        raise ValueError("cond_risk must be non-negative")
    phi, rho = _parameters.check("solve_bounded_tpr_fpr_finite", tpr_min=tpr_min, fpr_max=fpr_max)
    if phi == 0:
        raise ValueError("tpr_min must be > 0 (the selective risk is undefined at TPR 0)")
    sup = a > 0  # inputs with p_I = 0 have g = inf and are never accepted
    a_s, b_s, r_s = a[sup], b[sup], r[sup]
    g_s = b_s / a_s
    # Neyman-Pearson: the smallest FPR at TPR = phi accepts the smallest g first
    fpr_min = float(b_s @ _greedy(a_s, g_s, phi))
    if fpr_min > rho + 1e-12:
        raise ValueError(
            f"infeasible: the smallest FPR at TPR {phi!r} is {fpr_min:.6g} > fpr_max={rho!r}"
        )
    i, j = np.triu_indices(a_s.size, k=1)
    dg = g_s[i] - g_s[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        mu_ij = (r_s[j] - r_s[i]) / dg
    mus = np.unique(np.concatenate([[0.0], mu_ij[(dg != 0) & (mu_ij > 0) & np.isfinite(mu_ij)]]))
    values = []
    lams = []
    for start in range(0, mus.size, 4096):
        chunk_values, chunk_lams = _dual_values(a_s, r_s, g_s, mus[start : start + 4096], phi, rho)
        values.append(chunk_values)
        lams.append(chunk_lams)
    d = np.concatenate(values)
    lam_all = np.concatenate(lams)
    best = int(np.argmax(d))
    mu, lam = float(mus[best]), float(lam_all[best])
    # primal recovery: c = 1 below, 0 above, boundary fixed by the constraints (Theorem 7)
    s = r_s + mu * g_s
    tol = 1e-9 * max(1.0, abs(lam))
    below = s < lam - tol
    boundary = np.abs(s - lam) <= tol
    c = below.astype(float)
    phi_b = max(phi - float(a_s[below].sum()), 0.0)
    cap = rho - float(b_s[below].sum())
    a_b, b_b, g_b = a_s[boundary], b_s[boundary], g_s[boundary]
    c_min = _greedy(a_b, g_b, phi_b)  # least OOD mass on the boundary
    c_max = _greedy(a_b, -g_b, phi_b)  # most OOD mass on the boundary
    p_min, p_max = float(b_b @ c_min), float(b_b @ c_max)
    target = min(max(cap, p_min), p_max) if mu > 0 else p_min
    theta = 1.0 if p_max - p_min <= 1e-300 else (p_max - target) / (p_max - p_min)
    c[boundary] = theta * c_min + (1.0 - theta) * c_max
    c_full = np.zeros(a.size)
    c_full[sup] = c
    tpr = float(a @ c_full)
    return FiniteSolution(
        accept_prob=c_full,
        selective_risk=float((a * r) @ c_full) / tpr,
        tpr=tpr,
        fpr=float(b @ c_full),
        mu=mu,
        lam=lam,
    )


def solve_bounded_precision_recall_finite(
    p_in: Any, p_out: Any, cond_risk: Any, precision_min: float, recall_min: float, ood_prior: float
) -> FiniteSolution:
    """Optimal selective function of Problem 2 on a finite input set (Theorem 5, A.6).

    As shown in A.6 of [1], ``kappa(c) >= kappa_min`` is
    ``rho(c) <= (1 - pi)(1 - kappa_min) / (pi kappa_min) phi(c)``; since the selective risk is
    invariant to scaling ``c``, an optimal ``c`` can have ``phi(c) = phi_min``, which turns
    Problem 2 into Problem 1 with ``rho_max = (1 - pi)(1 - kappa_min) / (pi kappa_min) phi_min``.

    Parameters
    ----------
    p_in, p_out, cond_risk : array_like, shape (m,)
        As in :func:`solve_bounded_tpr_fpr_finite`.
    precision_min : float in [0, 1]
        kappa_min.
    recall_min : float in (0, 1]
        phi_min.
    ood_prior : float in (0, 1)
        pi.

    Returns
    -------
    FiniteSolution
        An optimal ``c``, found as that of :func:`solve_bounded_tpr_fpr_finite` at the
        ``rho_max`` above.
    """
    kappa, phi, pi = _parameters.check(
        "solve_bounded_precision_recall_finite",
        precision_min=precision_min,
        recall_min=recall_min,
        ood_prior=ood_prior,
    )
    if pi is None:
        raise ValueError("ood_prior must be given")
    rho = 1.0 if kappa == 0 else min(1.0, (1 - pi) * (1 - kappa) / (pi * kappa) * phi)
    return solve_bounded_tpr_fpr_finite(p_in, p_out, cond_risk, phi, rho)
