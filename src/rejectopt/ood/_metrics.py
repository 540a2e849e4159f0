"""Evaluation metrics of OOD selective classifiers from one score (Sec. 3 and B.2 of [1]).

Conventions (the contract of :mod:`rejectopt.ood`)
---------------------------------------------------
* ``loss[i]``: the ID classifier's loss on sample ``i``; ignored (may be NaN) where
  ``is_ood[i]``. ``uncertainty``: larger = reject first.
* **Positive class = ID** (accepted, Sec. 2.2 of [1]): TPR = share of ID accepted (phi,
  recall, coverage), FPR = share of OOD accepted (rho).
* **Thresholds.** Accept iff ``uncertainty <= t`` (B.2). Any ``t`` accepts as the largest
  distinct value ``<= t`` does, so the ``m + 1`` operating points are the distinct values
  ``u_1 < ... < u_m`` (ID and OOD pooled) plus ``t = -inf`` (accept nothing). Metrics never
  split a tie group (the randomised strategies of :mod:`._strategies` do).
* **Selective risk** ``R^S_n`` (Sec. 3.2) = summed loss of accepted ID / their number; NaN,
  and never feasible, when no ID sample is accepted.
* **Precision** (Sec. 2.3, 3.3): ``kappa = (1 - pi) phi / ((1 - pi) phi + pi rho)``; with
  ``ood_prior=None``, ``pi`` is the sample share of OOD and kappa the share of ID among the
  accepted. NaN when nothing is accepted.
* Constraints are checked with an absolute tolerance of ``CONSTRAINT_TOL = 1e-12``.

References
----------
.. [1] V. Franc, D. Prusa, J. Paplham. "Reject option models comprising out-of-distribution
   detection." arXiv:2307.05199.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _parameters, _sweep
from ._validation import validate

__all__ = [
    "OperatingPoints",
    "operating_points",
    "selective_risk_at_tpr_fpr",
    "selective_risk_at_precision_recall",
    "roc_curve",
    "auroc",
    "precision_recall_curve",
    "aupr",
    "risk_coverage_curve_at_fpr",
    "oscr",
    "empirical_rates",
]


@dataclass(frozen=True)
class OperatingPoints:
    """All ``m + 1`` operating points of one uncertainty score (B.2).

    Arrays of shape ``(m + 1,)``: entry 0 is the accept-nothing ``-inf``, entry ``j`` the
    ``j``-th smallest distinct uncertainty.

    Attributes
    ----------
    threshold : ndarray
        ``-inf, u_1, ..., u_m``; the rule accepts iff ``uncertainty <= threshold``.
    n_id_accepted, n_ood_accepted : ndarray
        Number of accepted ID and OOD samples.
    loss_sum : ndarray
        Summed loss of the accepted ID samples.
    tpr, fpr : ndarray
        phi_n and rho_n of Sec. 3.2.
    precision : ndarray
        kappa_n of Sec. 3.3 (NaN when nothing is accepted).
    selective_risk : ndarray
        R^S_n of Sec. 3.2 (NaN when no ID sample is accepted).

    Parameters
    ----------
    threshold, n_id_accepted, n_ood_accepted, loss_sum, tpr, fpr, precision, selective_risk : ndarray
        The attributes above.
    """

    threshold: np.ndarray
    n_id_accepted: np.ndarray
    n_ood_accepted: np.ndarray
    loss_sum: np.ndarray
    tpr: np.ndarray
    fpr: np.ndarray
    precision: np.ndarray
    selective_risk: np.ndarray

    @property
    def recall(self) -> np.ndarray:
        """Recall = TPR (Sec. 2.3)."""
        return self.tpr


def _points(
    loss: np.ndarray, is_ood: np.ndarray, u: np.ndarray, ood_prior: float | None
) -> OperatingPoints:
    sw = _sweep.sweep(u, is_ood, loss)
    last = sw.last[0]
    zero = np.zeros(1)
    A = np.concatenate([zero, sw.A[0, last]])
    F = np.concatenate([zero, sw.F[0, last]])
    L = np.concatenate([zero, sw.L[0, last]])
    threshold = np.concatenate([[-np.inf], sw.values[0, last]])
    n_id, n_ood = sw.n_id, sw.n_ood
    tpr = A / n_id if n_id else np.full(A.shape, np.nan)
    fpr = F / n_ood if n_ood else np.full(F.shape, np.nan)
    wA, wF = _sweep.precision_weights(max(n_id, 1), max(n_ood, 1), ood_prior)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(A + F > 0, wA * A / (wA * A + wF * F), np.nan)
        risk = np.where(A > 0, L / np.where(A > 0, A, 1.0), np.nan)
    return OperatingPoints(threshold, A, F, L, tpr, fpr, precision, risk)


def operating_points(
    loss: Any, is_ood: Any, uncertainty: Any, *, ood_prior: float | None = None
) -> OperatingPoints:
    """TPR, FPR, precision, recall and selective risk at every distinct threshold (B.2).

    One stable sort of ``uncertainty`` and one cumulative sweep: O(n log n) time, O(n) memory.

    Parameters
    ----------
    loss : array_like of float, shape (n,)
        Loss ``l(y_i, h(x_i)) >= 0`` of each sample; ignored (may be NaN) for OOD samples.
    is_ood : array_like of bool, shape (n,)
        True for OOD samples (label "empty set" in [1]).
    uncertainty : array_like of float, shape (n,)
        Uncertainty score ``s(x_i)``, larger = reject first; finite.
    ood_prior : float in (0, 1), optional
        OOD prior ``pi`` used in the precision; default the sample share of OOD.

    Returns
    -------
    OperatingPoints
    """
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    return _points(loss, is_ood, u, _parameters.check("operating_points", ood_prior=ood_prior)[0])


def selective_risk_at_tpr_fpr(
    loss: Any, is_ood: Any, uncertainty: Any, tpr_min: float, fpr_max: float
) -> float:
    """Selective risk of the best threshold under the bounded TPR-FPR model, problem (13).

    ``min_t R^S_n(t)`` s.t. ``phi_n(t) >= tpr_min``, ``rho_n(t) <= fpr_max`` over the thresholds
    of :func:`operating_points` (ties never split): Table 1's "selective risk at TPR, FPR".

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        See :func:`operating_points`.
    tpr_min, fpr_max : float in [0, 1]
        phi_min and rho_max.

    Returns
    -------
    float
        NaN when no threshold accepting an ID sample is feasible (the paper's "unable").

    Examples
    --------
    Three ID samples (the one at 0.4 misclassified) and an OOD one at 0.35: TPR 2/3 is met
    without accepting it, TPR 1 is not:

    >>> loss, is_ood = [0, 1, float("nan"), 0], [False, False, True, False]
    >>> [selective_risk_at_tpr_fpr(loss, is_ood, [0.1, 0.4, 0.35, 0.2], t, 0.5) for t in (0.6, 1.0)]
    [0.0, nan]
    """
    tpr_min, fpr_max = _parameters.check(
        "selective_risk_at_tpr_fpr", tpr_min=tpr_min, fpr_max=fpr_max
    )
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    sw = _sweep.sweep(u, is_ood, loss)
    best = _sweep.best_constrained(
        sw, _sweep.tpr_fpr_constraints(sw.n_id, sw.n_ood, tpr_min, fpr_max), randomize=False
    )
    return float(best.risk[0]) if best.feasible[0] else float("nan")


def selective_risk_at_precision_recall(
    loss: Any,
    is_ood: Any,
    uncertainty: Any,
    precision_min: float,
    recall_min: float,
    *,
    ood_prior: float | None = None,
) -> float:
    """Selective risk of the best threshold under the bounded precision-recall model, problem (14).

    ``min_t R^S_n(t)`` s.t. ``kappa_n(t) >= precision_min``, ``phi_n(t) >= recall_min`` (Sec. 3.3).

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        As in :func:`selective_risk_at_tpr_fpr`.
    precision_min, recall_min : float in [0, 1]
        kappa_min and phi_min (recall = TPR).
    ood_prior : float in (0, 1), optional
        pi; default the sample share of OOD.

    Returns
    -------
    float
        NaN when infeasible ("unable").

    Examples
    --------
    >>> loss, is_ood = [1, 0, float("nan"), 0], [False, False, True, False]
    >>> round(selective_risk_at_precision_recall(loss, is_ood, [0.3, 0.1, 0.2, 0.4],
    ...                                          precision_min=0.6, recall_min=0.6), 4)
    0.3333
    """
    precision_min, recall_min, ood_prior = _parameters.check(
        "selective_risk_at_precision_recall",
        precision_min=precision_min,
        recall_min=recall_min,
        ood_prior=ood_prior,
    )
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    sw = _sweep.sweep(u, is_ood, loss)
    cons = _sweep.precision_recall_constraints(
        sw.n_id, sw.n_ood, precision_min, recall_min, ood_prior
    )
    best = _sweep.best_constrained(sw, cons, randomize=False)
    return float(best.risk[0]) if best.feasible[0] else float("nan")


def roc_curve(is_ood: Any, uncertainty: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC curve of ID (positive) vs OOD (negative) for the rule ``uncertainty <= t`` (Sec. 3.2).

    Parameters
    ----------
    is_ood : array_like of bool, shape (n,)
        True for OOD samples.
    uncertainty : array_like of float, shape (n,)
        Uncertainty score, larger = reject first; finite.

    Returns
    -------
    fpr, tpr, thresholds : ndarray, shape (m + 1,)
        Starting at ``(0, 0)`` for ``t = -inf`` and ending at ``(1, 1)``.

    Examples
    --------
    >>> fpr, tpr, thresholds = roc_curve([False, True, False], [0.1, 0.2, 0.3])
    >>> fpr, tpr
    (array([0., 0., 1., 1.]), array([0. , 0.5, 0.5, 1. ]))
    """
    _, is_ood, u = validate(None, is_ood, uncertainty, need_loss=False)
    pts = _points(np.zeros(u.shape), is_ood, u, None)
    return pts.fpr, pts.tpr, pts.threshold


def auroc(is_ood: Any, uncertainty: Any) -> float:
    """Area under the ROC curve, ID = positive class, OOD = negative (Sec. 3.2 and 3.4).

    Trapezoidal area under :func:`roc_curve`: P(random ID less uncertain than random OOD),
    ties 1/2; equals ``sklearn.metrics.roc_auc_score(~is_ood, -uncertainty)``.

    Parameters
    ----------
    is_ood, uncertainty : array_like, shape (n,)
        As in :func:`roc_curve`.

    Returns
    -------
    float
        In [0, 1]; 1 when every ID sample is less uncertain than every OOD one.

    Examples
    --------
    Three of the four (ID, OOD) pairs are ranked right:

    >>> auroc([False, True, False, True], [0.1, 0.9, 0.4, 0.3])
    0.75
    """
    fpr, tpr, _ = roc_curve(is_ood, uncertainty)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


def precision_recall_curve(
    is_ood: Any, uncertainty: Any, *, ood_prior: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision-recall curve with ID as the positive class (Sec. 3.3).

    Parameters
    ----------
    is_ood, uncertainty : array_like, shape (n,)
        See :func:`roc_curve`.
    ood_prior : float in (0, 1), optional
        ``pi`` of the precision; default the sample share of OOD.

    Returns
    -------
    precision, recall, thresholds : ndarray, shape (m,)
        One per distinct threshold, increasing (accept-nothing left out: no precision).

    Examples
    --------
    >>> precision, recall, _ = precision_recall_curve([True, False, False], [0.9, 0.1, 0.5])
    >>> precision.round(4), recall
    (array([1.    , 1.    , 0.6667]), array([0.5, 1. , 1. ]))
    """
    (ood_prior,) = _parameters.check("precision_recall_curve", ood_prior=ood_prior)
    _, is_ood, u = validate(None, is_ood, uncertainty, need_loss=False)
    pts = _points(np.zeros(u.shape), is_ood, u, ood_prior)
    return pts.precision[1:], pts.tpr[1:], pts.threshold[1:]


def aupr(is_ood: Any, uncertainty: Any, *, ood_prior: float | None = None) -> float:
    """Area under the precision-recall curve, ID positive (Sec. 3.3 and Table 1 of [1]).

    Average precision ``sum_j (recall_j - recall_{j-1}) precision_j`` (no interpolation); with
    ``ood_prior=None`` equal to ``sklearn.metrics.average_precision_score(~is_ood, -uncertainty)``.

    Parameters
    ----------
    is_ood, uncertainty, ood_prior
        As in :func:`precision_recall_curve`.

    Returns
    -------
    float
        Average precision, in [0, 1].

    Examples
    --------
    A smaller OOD prior raises the precision at every threshold:

    >>> is_ood, uncertainty = [False, True, False, True], [0.1, 0.9, 0.4, 0.3]
    >>> round(aupr(is_ood, uncertainty), 4), round(aupr(is_ood, uncertainty, ood_prior=0.2), 4)
    (0.8333, 0.9444)
    """
    _parameters.check("aupr", ood_prior=ood_prior)
    precision, recall, _ = precision_recall_curve(is_ood, uncertainty, ood_prior=ood_prior)
    steps = np.diff(np.concatenate([[0.0], recall]))
    return float(np.sum(steps * precision))


def risk_coverage_curve_at_fpr(
    loss: Any, is_ood: Any, uncertainty: Any, fpr_max: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Risk-coverage curve at a maximal FPR (Sec. 3.2, Fig. 1a of the supplement).

    The operating points with ``rho_n <= fpr_max`` and at least one accepted ID sample.

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        As in :func:`operating_points`.
    fpr_max : float in [0, 1]
        Maximal acceptable FPR rho_max.

    Returns
    -------
    coverage, selective_risk, thresholds : ndarray
        Coverage = TPR phi_n, increasing up to the largest attainable at ``fpr_max``.

    Examples
    --------
    >>> loss, is_ood = [1, 0, float("nan"), 0], [False, False, True, False]
    >>> coverage, risk, _ = risk_coverage_curve_at_fpr(loss, is_ood, [0.2, 0.1, 0.3, 0.4], 0.0)
    >>> coverage.round(4), risk
    (array([0.3333, 0.6667]), array([0. , 0.5]))
    """
    (fpr_max,) = _parameters.check("risk_coverage_curve_at_fpr", fpr_max=fpr_max)
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    pts = _points(loss, is_ood, u, None)
    keep = (pts.fpr <= fpr_max + 1e-12) & (pts.n_id_accepted > 0)
    return pts.tpr[keep], pts.selective_risk[keep], pts.threshold[keep]


def oscr(loss: Any, is_ood: Any, uncertainty: Any, *, ccr: str = "seed") -> float:
    """Open-set classification rate: area under the CCR-vs-FPR curve (Sec. 3.4 of [1]).

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        See :func:`operating_points`; for the usual reading use the 0/1 loss.
    ccr : {"seed", "open_set"}, default "seed"
        Correct classification rate at each threshold:

        * ``"seed"``: ``CCR = 1 - R^S_n`` (accuracy on *accepted* ID), as Sec. 3.4 of [1]
          states and Table 1 reproduces; from the first threshold accepting an ID sample,
          extended at that CCR down to FPR 0.
        * ``"open_set"``: ``CCR = (#accepted ID - their summed loss) / #ID`` (0/1 loss:
          correct *and* accepted over all ID, Dhamija et al. 2018), from ``(0, 0)``.

    Returns
    -------
    float
        Trapezoidal area over FPR in [0, 1].

    Examples
    --------
    >>> loss, is_ood, uncertainty = [0, 1, float("nan")], [False, False, True], [0.1, 0.3, 0.2]
    >>> oscr(loss, is_ood, uncertainty), oscr(loss, is_ood, uncertainty, ccr="open_set")
    (1.0, 0.5)
    """
    _parameters.check("oscr", ccr=ccr)
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    pts = _points(loss, is_ood, u, None)
    if ccr == "open_set":
        fpr = pts.fpr
        rate = (pts.n_id_accepted - pts.loss_sum) / (pts.n_id_accepted[-1])
    else:
        defined = pts.n_id_accepted > 0
        fpr = np.concatenate([[0.0], pts.fpr[defined]])
        rate = 1.0 - pts.selective_risk[defined]
        rate = np.concatenate([rate[:1], rate])
    return float(np.sum(np.diff(fpr) * (rate[1:] + rate[:-1]) / 2.0))


def empirical_rates(
    loss: Any, is_ood: Any, accept_prob: Any, *, ood_prior: float | None = None
) -> dict[str, float]:
    """Expected TPR, FPR, precision and selective risk of a (randomised) selective function.

    Exact over the randomisation (Sec. 3.2's estimators with stochastic ``c``): ``tpr =
    mean_{ID} c_i``, ``fpr = mean_{OOD} c_i``, risk ``= sum_{ID} c_i l_i / sum_{ID} c_i``.

    Parameters
    ----------
    loss, is_ood : array_like, shape (n,)
        As in :func:`operating_points`.
    accept_prob : array_like of float, shape (n,)
        ``c_i`` in [0, 1] (e.g. ``SelectionFunction.acceptance_probability``).
    ood_prior : float in (0, 1), optional
        ``pi`` of the precision; default the sample share of OOD.

    Returns
    -------
    dict
        Keys ``tpr``, ``fpr``, ``precision``, ``selective_risk`` (NaN when undefined).

    Examples
    --------
    Half of the second ID sample (an error) and of the first OOD sample accepted:

    >>> rates = empirical_rates([0, 1, float("nan"), float("nan")], [False, False, True, True],
    ...                         [1, 0.5, 0.5, 0])
    >>> {key: round(value, 4) for key, value in rates.items()}
    {'tpr': 0.75, 'fpr': 0.25, 'precision': 0.75, 'selective_risk': 0.3333}
    """
    (ood_prior,) = _parameters.check("empirical_rates", ood_prior=ood_prior)
    loss, is_ood, c = validate(loss, is_ood, accept_prob, uncertainty_name="accept_prob")
    if ((c < 0) | (c > 1)).any():
        raise ValueError("accept_prob must lie in [0, 1]")
    n_ood = int(is_ood.sum())
    n_id = is_ood.size - n_ood
    A = float(c[~is_ood].sum())
    F = float(c[is_ood].sum())
    wA, wF = _sweep.precision_weights(n_id, n_ood, ood_prior)
    return {
        "tpr": A / n_id,
        "fpr": F / n_ood,
        "precision": wA * A / (wA * A + wF * F) if A + F > 0 else float("nan"),
        "selective_risk": float(c @ loss) / A if A > 0 else float("nan"),
    }
