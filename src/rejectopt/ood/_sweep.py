"""One sort and one sweep: cumulative ID/OOD counts and losses at every distinct threshold (B.2).

Private engine shared by the metrics (deterministic thresholds) and by the fitted strategies
(thresholds with a randomised acceptance ``tau`` of the boundary tie group, eq. 9). Every
function works on a batch of ``k`` scorings of the same ``n`` samples (arrays of shape
``(k, n)``), so the double-score search evaluates many angles in one vectorised pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import CONSTRAINT_TOL


@dataclass
class Sweep:
    """Cumulative statistics along each row of the scores sorted ascending.

    ``A``, ``F``, ``L`` at position ``i`` are the number of ID samples, the number of OOD
    samples and the summed ID loss among the ``i + 1`` smallest scores; :meth:`before` gives
    the same just *before* the tie group containing position ``i``; ``last`` marks the last
    position of each tie group (the only positions a threshold can cut after).
    """

    values: np.ndarray
    A: np.ndarray
    F: np.ndarray
    L: np.ndarray
    last: np.ndarray
    new_group: np.ndarray
    n_id: int
    n_ood: int

    def before(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(A0, F0, L0)``: the cumulative values just before each position's tie group."""
        k, n = self.values.shape
        start = np.maximum.accumulate(np.where(self.new_group, np.arange(n), 0), axis=1)
        idx = np.maximum(start - 1, 0) + (n * np.arange(k))[:, None]
        out = []
        for cum in (self.A, self.F, self.L):
            prefix = cum.ravel()[idx]
            prefix[start == 0] = 0.0
            out.append(prefix)
        return out[0], out[1], out[2]


def sweep(scores: np.ndarray, is_ood: np.ndarray, loss: np.ndarray) -> Sweep:
    """Sort each row of ``scores`` (shape ``(k, n)`` or ``(n,)``) and accumulate (O(k n log n)).

    The order inside a tie group is irrelevant: only whole tie groups are cut.
    """
    scores = np.atleast_2d(scores)
    k, n = scores.shape
    if k == 1:
        order = np.argsort(scores[0])
        values = scores[0][order][None, :]
        ood_sorted = is_ood[order][None, :]
        loss_sorted = loss[order][None, :]
    else:
        order = np.argsort(scores, axis=1)
        values = np.take_along_axis(scores, order, axis=1)
        ood_sorted = is_ood[order]
        loss_sorted = loss[order]
    F = np.cumsum(ood_sorted, axis=1, dtype=float)
    A = np.arange(1, n + 1, dtype=float) - F
    L = np.cumsum(loss_sorted, axis=1)
    differ = values[:, 1:] != values[:, :-1]
    new_group = np.empty((k, n), dtype=bool)
    new_group[:, 0] = True
    new_group[:, 1:] = differ
    last = np.empty((k, n), dtype=bool)
    last[:, -1] = True
    last[:, :-1] = differ
    n_ood = int(is_ood.sum())
    return Sweep(
        values=values, A=A, F=F, L=L, last=last, new_group=new_group, n_id=n - n_ood, n_ood=n_ood
    )


# A linear constraint alpha * A + beta * F + gamma >= 0 on the (expected) accepted ID count A
# and accepted OOD count F.
Constraint = tuple[float, float, float]


def tpr_fpr_constraints(n_id: int, n_ood: int, tpr_min: float, fpr_max: float) -> list[Constraint]:
    """TPR = A / n_id >= tpr_min and FPR = F / n_ood <= fpr_max (eq. 13), with tolerance."""
    return [
        (1.0 / n_id, 0.0, -tpr_min + CONSTRAINT_TOL),
        (0.0, -1.0 / n_ood, fpr_max + CONSTRAINT_TOL),
    ]


def precision_weights(n_id: int, n_ood: int, ood_prior: float | None) -> tuple[float, float]:
    """Weights ``(wA, wF)`` with precision = wA A / (wA A + wF F) (Sec. 3.3).

    ``wA = (1 - pi) / n_id`` and ``wF = pi / n_ood``; with ``ood_prior=None`` the prior is the
    sample share ``n_ood / n`` and both weights equal ``1 / n``, so the precision is the
    plain share of ID samples among the accepted ones.
    """
    if ood_prior is None:
        n = n_id + n_ood
        return 1.0 / n, 1.0 / n
    return (1.0 - ood_prior) / n_id, ood_prior / n_ood


def precision_recall_constraints(
    n_id: int, n_ood: int, precision_min: float, recall_min: float, ood_prior: float | None
) -> list[Constraint]:
    """Recall = A / n_id >= recall_min and precision >= precision_min (eq. 14), with tolerance.

    The precision constraint is written linearly,
    ``(1 - kappa) wA A - kappa wF F >= -tol (wA A + wF F)``.
    """
    wA, wF = precision_weights(n_id, n_ood, ood_prior)
    return [
        (1.0 / n_id, 0.0, -recall_min + CONSTRAINT_TOL),
        ((1.0 - precision_min + CONSTRAINT_TOL) * wA, (-precision_min + CONSTRAINT_TOL) * wF, 0.0),
    ]


@dataclass
class Best:
    """Per-row optimum: risk (inf if infeasible), cut position, tau and expected counts."""

    risk: np.ndarray
    position: np.ndarray
    tau: np.ndarray
    A: np.ndarray
    F: np.ndarray
    L: np.ndarray

    @property
    def feasible(self) -> np.ndarray:
        return np.isfinite(self.risk)


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(num.shape, np.inf)
    np.divide(num, den, out=out, where=den > 0)
    return out


def best_constrained(sw: Sweep, constraints: list[Constraint], *, randomize: bool) -> Best:
    """Smallest selective risk ``L / A`` subject to ``constraints``, per row of the sweep.

    ``randomize=False``: deterministic thresholds, i.e. cuts after whole tie groups.
    ``randomize=True``: the boundary tie group is accepted with probability ``tau`` (eq. 9);
    every constraint is linear in ``tau``, so the feasible ``tau`` form an interval and, the
    risk ``(L0 + tau l) / (A0 + tau a)`` being monotone in ``tau``, an endpoint is optimal.
    Candidates with no accepted ID sample (undefined risk) are never chosen. Ties in risk
    (within 1e-12 relative) go to the candidate accepting the most ID samples.
    """
    last = sw.last
    if not randomize:
        A, F, L = sw.A, sw.F, sw.L
        ok = last & (A > 0)
        for alpha, beta, gamma in constraints:
            ok &= alpha * A + beta * F + gamma >= 0
        risk = np.where(ok, _safe_ratio(L, A), np.inf)
        tau = np.ones(A.shape)
    else:
        A0, F0, L0 = sw.before()
        a, f, loss_b = sw.A - A0, sw.F - F0, sw.L - L0  # a, f, l of the docstring
        lo = np.zeros(a.shape)
        hi = np.ones(a.shape)
        ok = last.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            for alpha, beta, gamma in constraints:
                c0 = alpha * A0 + beta * F0 + gamma
                c1 = alpha * a + beta * f
                bound = -c0 / c1
                lo = np.where(c1 > 0, np.maximum(lo, bound), lo)
                hi = np.where(c1 < 0, np.minimum(hi, bound), hi)
                ok &= (c1 != 0) | (c0 >= 0)
        ok &= lo <= hi
        lo = np.clip(lo, 0.0, 1.0)
        hi = np.clip(hi, 0.0, 1.0)
        candidates = []
        for t in (lo, hi):
            At = A0 + t * a
            r = np.where(ok & (At > 0), _safe_ratio(L0 + t * loss_b, At), np.inf)
            candidates.append((r, t))
        (r_lo, t_lo), (r_hi, t_hi) = candidates
        take_hi = r_hi <= r_lo * (1 + 1e-12) + 1e-300
        risk = np.where(take_hi, r_hi, r_lo)
        tau = np.where(take_hi, t_hi, t_lo)
        A = A0 + tau * a
        F = F0 + tau * f
        L = L0 + tau * loss_b
    row_min = risk.min(axis=1)
    slack = 1e-12 * np.maximum(1.0, np.abs(np.where(np.isfinite(row_min), row_min, 0.0)))
    near = risk <= (row_min + slack)[:, None]
    position = np.argmax(np.where(near, A, -1.0), axis=1)
    rows = np.arange(risk.shape[0])
    return Best(
        risk=row_min,
        position=position,
        tau=tau[rows, position],
        A=A[rows, position],
        F=F[rows, position],
        L=L[rows, position],
    )
