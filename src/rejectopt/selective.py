"""Selective classifiers built from an uncertainty score (Franc, Prusa & Voracek, 2023, Sec. 2).

All three rejection models of the paper -- cost-based (Problem 1), bounded-improvement
(Problems 2-3) and bounded-abstention (Problems 4-5) -- share one optimal form, the
*randomized Bayes selection function* (eq. 25)::

    c(x) = 1   if s(x) < a,
           nu  if s(x) == a,
           0   if s(x) > a,

where ``s`` is an uncertainty score (larger = more uncertain; a proper score orders inputs like
the conditional risk r(x) of eq. 9). The functions below fit ``(a, nu)`` on validation losses
``loss >= 0`` and scores ``s``, with empirical averages in place of the integrals over p(x) of
Theorems 3 and 6. :class:`~rejectopt.targets.Target` and :func:`rejectopt.fitting.fit_selective`
sit one layer above.

Conventions
-----------
* Expected selective risk and coverage are ``sum_i c_i l_i / sum_i c_i`` and ``mean_i c_i``
  (empirical eqs. 5-6), computed exactly by :func:`empirical_risk_coverage`; NaN risk when
  nothing is accepted.
* Equal scores form a *tie group*, treated alike: only the boundary group's ``nu`` moves the
  coverage between two consecutive distinct score values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import lazy_loader as _lazy
import numpy as np

from ._checks import as_loss_and_uncertainty, renamed_argument
from ._params import CONFIDENCE, Interval, validate_params

# the selection function's own module; TIE_BREAKING and check_tie_breaking are re-exported here
from ._selection_function import TIE_BREAKING as TIE_BREAKING
from ._selection_function import SelectionFunction
from ._selection_function import check_tie_breaking as check_tie_breaking
from .exceptions import InfeasibleTargetError
from .stats import selective_risk_interval, wilson_interval

#: scipy.stats, imported at its first use (heavy to import: ``benchmarks/import_costs_records.csv``;
#: only the Clopper-Pearson bound needs it).
_sps = _lazy.load("scipy.stats", suppress_warning=True)  # parent scipy is cheap

__all__ = [
    "OperatingPoint",
    "OODOperatingPoint",
    "SelectionFunction",
    "operating_point",
    "fit_cost_based",
    "fit_bounded_improvement",
    "fit_bounded_abstention",
    "fit_geifman_el_yaniv",
    "empirical_risk_coverage",
]


# --------------------------------------------------------------------------------------------
# Input validation and tie groups
# --------------------------------------------------------------------------------------------
def _check_pair(loss: Any, s: Any, loss_name: str = "loss") -> tuple[np.ndarray, np.ndarray]:
    """The shared check of the pair; exact values, not ranks: a threshold is compared with them."""
    return as_loss_and_uncertainty(loss, s, exact_order=False, loss_name=loss_name)


@dataclass(frozen=True)
class _TieGroups:
    """Distinct scores ``values`` (ascending) with per-group counts and loss sums."""

    values: np.ndarray
    counts: np.ndarray
    loss_sums: np.ndarray

    @property
    def cum_counts(self) -> np.ndarray:
        """N_j = #(s <= values[j]), with a leading 0 (length m + 1)."""
        return np.concatenate([[0], np.cumsum(self.counts)])

    @property
    def cum_losses(self) -> np.ndarray:
        """S_j = sum of losses with s <= values[j], with a leading 0 (length m + 1)."""
        return np.concatenate([[0.0], np.cumsum(self.loss_sums)])


def _tie_groups(loss: np.ndarray, s: np.ndarray) -> _TieGroups:
    values, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    loss_sums = np.bincount(inverse, weights=loss, minlength=values.size)
    return _TieGroups(values=values, counts=counts.astype(float), loss_sums=loss_sums)


#: The scalar parameters of the public functions below, declared once (``validate_params``); the
#: target risk of Geifman & El-Yaniv's bound depends on the loss's scale and is checked there.
_PARAMETERS = {
    "reject_cost": Interval(0, None, closed="left"),
    "target_risk": Interval(0, None),
    "target_coverage": Interval(0, 1, closed="right"),
    "delta": Interval(0, 1),
    "loss_scale": Interval(0, None),
    "confidence": CONFIDENCE,
}


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------
@renamed_argument("s", "uncertainty", since="0.6.0")
def empirical_risk_coverage(
    loss: Any, uncertainty: Any, selection: SelectionFunction
) -> tuple[float, float]:
    """Expected empirical selective risk and coverage of ``selection`` (eqs. 5-6).

    Exact over the tie randomisation (see the module's Conventions).

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss, uncertainty : array_like, shape (n,)
        Losses ``l(y_i, h(x_i)) >= 0`` and uncertainty scores.
    selection : SelectionFunction
        The selection function to evaluate.

    Returns
    -------
    (selective_risk, coverage) : tuple of float
        ``selective_risk`` is NaN when the coverage is 0.

    Examples
    --------
    Half of the tie at ``s == 0.4`` is accepted in expectation:

    >>> loss, s = [0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    >>> risk, coverage = empirical_risk_coverage(loss, s, SelectionFunction(0.4, 0.5))
    >>> round(risk, 4), round(coverage, 4)
    (0.2857, 0.5833)
    """
    loss, s = _check_pair(loss, uncertainty)
    prob = selection.acceptance_probability(s)
    accepted_mass = float(prob.sum())
    coverage = accepted_mass / loss.size
    risk = float(prob @ loss) / accepted_mass if accepted_mass > 0 else float("nan")
    return risk, coverage


# --------------------------------------------------------------------------------------------
# Cost-based model (Problem 1, eq. 4)
# --------------------------------------------------------------------------------------------
@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_cost_based(loss: Any, uncertainty: Any, reject_cost: float) -> SelectionFunction:
    """Empirical Chow rule on the score: minimise the empirical cost-based risk (eq. 1).

    Minimises ``(sum_{s_i <= u} l_i + reject_cost * #(s_i > u)) / n`` over the cuts between
    distinct scores (plus "reject all"); equal risks go to the largest coverage. Ties are
    all-or-nothing: the risk is linear in a tie group's ``nu``, so ``nu in {0, 1}`` is optimal
    (the remark after eq. (4): a deterministic optimal strategy exists).

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss, uncertainty : array_like, shape (n,)
        Validation losses (>= 0) and uncertainty scores.
    reject_cost : float
        Reject cost epsilon >= 0 (loss units).

    Returns
    -------
    SelectionFunction
        ``(u_j, 1)`` accepting the ``j`` lowest tie groups, or ``(u_1, 0)`` to reject all
        (new inputs with a score below the smallest validation score are then still accepted).

    Examples
    --------
    With a rejection cost of 0.4 it pays to accept only the two examples without a loss:

    >>> fit_cost_based([0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], reject_cost=0.4)
    SelectionFunction(threshold=0.2, accept_prob=1.0)
    """
    loss, s = _check_pair(loss, uncertainty)
    validate_params("fit_cost_based", {"reject_cost": reject_cost}, _PARAMETERS)
    reject_cost = float(reject_cost)
    groups = _tie_groups(loss, s)
    n = loss.size
    cum_counts, cum_losses = groups.cum_counts, groups.cum_losses
    risks = (cum_losses + reject_cost * (n - cum_counts)) / n  # cut after group j = 0..m
    tolerance = 1e-12 * max(1.0, float(np.abs(risks).max()))
    best = int(np.flatnonzero(risks <= risks.min() + tolerance)[-1])
    if best == 0:
        return SelectionFunction(threshold=groups.values[0], accept_prob=0.0)
    return SelectionFunction(threshold=groups.values[best - 1], accept_prob=1.0)


# --------------------------------------------------------------------------------------------
# Bounded-improvement model (Problem 3, Theorem 3, eqs. 14-16)
# --------------------------------------------------------------------------------------------
@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_bounded_improvement(loss: Any, uncertainty: Any, target_risk: float) -> SelectionFunction:
    """Maximal empirical coverage subject to empirical selective risk <= ``target_risk``.

    Empirical Theorem 3. The cumulative excess loss (r-bar of eq. 13) ``D(a, nu) =
    sum_{s_i<a} (l_i - lambda) + nu * sum_{s_i=a} (l_i - lambda)`` is <= 0 iff the selective
    risk is <= lambda. The largest prefix with ``D <= 0`` fixes gamma (eqs. 14-15); the boundary
    group's ``nu = -D(before group) / (group excess)`` (eq. 16) makes the expected risk equal
    ``target_risk`` exactly, unless the whole sample meets it (all accepted).

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss, uncertainty : array_like, shape (n,)
        Validation losses (>= 0) and uncertainty scores.
    target_risk : float
        Target selective risk lambda > 0 (loss units).

    Returns
    -------
    SelectionFunction
        ``(gamma, tau)`` of eqs. 15-16.

    Raises
    ------
    ValueError
        On bad input; :class:`InfeasibleTargetError` when the lowest-uncertainty tie group
        alone already exceeds the target.

    Examples
    --------
    The first four examples have risk 0.25; the fifth is accepted with the probability that
    lifts the expected selective risk to the target 0.3:

    >>> loss, s = [0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    >>> selection = fit_bounded_improvement(loss, s, target_risk=0.3)
    >>> selection.threshold, round(selection.accept_prob, 4)
    (0.5, 0.2857)
    >>> risk, coverage = empirical_risk_coverage(loss, s, selection)
    >>> round(risk, 4), round(coverage, 4)
    (0.3, 0.7143)
    """
    loss, s = _check_pair(loss, uncertainty)
    validate_params("fit_bounded_improvement", {"target_risk": target_risk}, _PARAMETERS)
    target_risk = float(target_risk)
    groups = _tie_groups(loss, s)
    group_excess = groups.loss_sums - target_risk * groups.counts
    cum_excess = np.concatenate([[0.0], np.cumsum(group_excess)])  # D after group j = 0..m
    tolerance = 1e-10 * (float(loss.sum()) + target_risk * loss.size)
    feasible = np.flatnonzero(cum_excess[1:] <= tolerance)  # groups j (0-based) with D <= 0
    if feasible.size == 0:
        prefix_risks = groups.cum_losses[1:] / groups.cum_counts[1:]
        raise InfeasibleTargetError(
            f"infeasible target_risk={target_risk!r}: no threshold reaches a selective risk "
            f"<= target on this sample (smallest achievable selective risk is "
            f"{prefix_risks.min():.6g})"
        )
    last = int(feasible[-1])
    if last == groups.values.size - 1:
        return SelectionFunction(threshold=groups.values[-1], accept_prob=1.0)
    boundary = last + 1
    nu = -cum_excess[last + 1] / group_excess[boundary]  # group_excess[boundary] > 0 here
    if nu <= 0.0:
        return SelectionFunction(threshold=groups.values[last], accept_prob=1.0)
    return SelectionFunction(threshold=groups.values[boundary], accept_prob=min(float(nu), 1.0))


# --------------------------------------------------------------------------------------------
# Bounded-abstention model (Problem 5, Theorem 6, eqs. 22-24)
# --------------------------------------------------------------------------------------------
@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_bounded_abstention(
    loss: Any, uncertainty: Any, target_coverage: float
) -> SelectionFunction:
    """Minimal empirical selective risk subject to coverage >= ``target_coverage``.

    Empirical Theorem 6: beta is the smallest distinct score with ``#(s <= beta) >= omega * n``
    (eq. 22) and ``kappa = (omega * n - #(s < beta)) / #(s == beta)`` (eq. 24), so the expected
    coverage is exactly ``omega``; optimal for a proper score. ``loss`` is only validated.

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss, uncertainty : array_like, shape (n,)
        Validation losses (>= 0) and uncertainty scores.
    target_coverage : float
        Target coverage omega in (0, 1].

    Returns
    -------
    SelectionFunction
        ``(beta, kappa)`` of eqs. 22-24.

    Examples
    --------
    >>> loss, s = [0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    >>> selection = fit_bounded_abstention(loss, s, target_coverage=0.75)
    >>> selection
    SelectionFunction(threshold=0.5, accept_prob=0.5)
    >>> [round(v, 4) for v in empirical_risk_coverage(loss, s, selection)]
    [0.3333, 0.75]
    """
    loss, s = _check_pair(loss, uncertainty)
    validate_params("fit_bounded_abstention", {"target_coverage": target_coverage}, _PARAMETERS)
    omega = float(target_coverage)
    groups = _tie_groups(loss, s)
    cum_counts = groups.cum_counts
    target_count = omega * loss.size
    # smallest group j (0-based) with N_j >= omega * n, tolerant to round-off in omega * n
    j = int(np.searchsorted(cum_counts[1:], target_count * (1 - 1e-12), side="left"))
    j = min(j, groups.values.size - 1)
    kappa = (target_count - cum_counts[j]) / groups.counts[j]
    return SelectionFunction(
        threshold=groups.values[j], accept_prob=float(np.clip(kappa, 0.0, 1.0))
    )


# --------------------------------------------------------------------------------------------
# Geifman & El-Yaniv (2017): selection with guaranteed risk (SGR)
# --------------------------------------------------------------------------------------------
def _binomial_tail_upper_bound(n_errors: int, n_accepted: int, delta: float) -> float:
    """B*(r, delta, m): largest b with P(Binomial(m, b) <= k) >= delta.

    It is the (1 - delta) quantile of Beta(k + 1, m - k).
    """
    if n_accepted == 0 or n_errors >= n_accepted:
        return 1.0
    return float(_sps.beta.ppf(1.0 - delta, n_errors + 1, n_accepted - n_errors))


@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_geifman_el_yaniv(
    loss01: Any,
    uncertainty: Any,
    target_risk: float,
    delta: float,
    loss_scale: float = 1.0,
) -> tuple[SelectionFunction, float]:
    """Selection with guaranteed risk (SGR) of Geifman & El-Yaniv (2017, Algorithm 1).

    Binary search over ``k = ceil(log2 n)`` thresholds; accepting ``s <= theta`` (m accepted,
    e errors) bounds the risk by ``B*(e/m, delta/k, m)`` (Clopper-Pearson) with probability
    ``1 - delta/k``, so all tested thresholds hold jointly with ``1 - delta`` (Bonferroni).
    The search moves to larger coverage when ``B* < target_risk``. Unlike the pseudo-code
    (the *last* tested threshold), the largest-coverage threshold below the target is returned
    (same union bound); if none is, ValueError.

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss01, uncertainty : array_like, shape (n,)
        0/1 losses times ``loss_scale`` (e.g. 0/100) and uncertainty scores (ties accepted together).
    target_risk : float
        Desired risk r* in (0, loss_scale], in loss units.
    delta : float
        Confidence parameter in (0, 1).
    loss_scale : float, default 1.0
        The loss of one error.

    Returns
    -------
    selection : SelectionFunction
        Deterministic: ``(theta, 1.0)``.
    risk_bound : float
        b* in loss units (< ``target_risk``): the published argument gives the true selective risk
        <= ``risk_bound`` with probability >= 1 - delta, treating the tested thresholds as fixed
        although the search picks them from the data; the guarantee is measured, not proved, here
        (the Guarantees page: conservative in every simulated cell).

    Raises
    ------
    InfeasibleTargetError
        No tested threshold has a bound below the target (a :class:`ValueError`).

    Examples
    --------
    100 examples: the 60 least uncertain are correct, every second of the others an error
    (0/100 loss):

    >>> import numpy as np
    >>> s = np.arange(100) / 100
    >>> loss01 = 100 * np.r_[np.zeros(60), np.tile([0, 1], 20)]
    >>> selection, bound = fit_geifman_el_yaniv(loss01, s, target_risk=10, delta=0.1,
    ...                                         loss_scale=100)
    >>> selection, round(bound, 4)
    (SelectionFunction(threshold=0.62, accept_prob=1.0), 9.4827)
    """
    loss01, s = _check_pair(loss01, uncertainty, loss_name="loss01")
    validate_params("fit_geifman_el_yaniv", {"loss_scale": loss_scale}, _PARAMETERS)
    loss_scale = float(loss_scale)
    errors = loss01 / loss_scale
    not_binary = ~np.isin(errors, (0.0, 1.0))
    if not_binary.any():
        i = int(np.flatnonzero(not_binary)[0])
        raise ValueError(
            f"loss01 must take only the values 0 and {loss_scale:g} (loss_scale); "
            f"loss01[{i}] = {loss01[i]}"
        )
    target_risk = float(target_risk)
    if not (math.isfinite(target_risk) and 0 < target_risk <= loss_scale):
        raise ValueError(f"target_risk must lie in (0, {loss_scale:g}], got {target_risk!r}")
    validate_params("fit_geifman_el_yaniv", {"delta": delta}, _PARAMETERS)
    delta = float(delta)

    order = np.argsort(s, kind="stable")
    s_sorted = s[order]
    cum_errors = np.concatenate([[0.0], np.cumsum(errors[order])])
    n = s.size
    n_steps = max(1, math.ceil(math.log2(n)))
    delta_step = delta / n_steps
    target = target_risk / loss_scale

    best: tuple[int, float, float] | None = None  # (n_accepted, theta, bound)
    low, high = 0, n
    for _ in range(n_steps):
        mid = (low + high + 1) // 2
        theta = s_sorted[mid - 1]
        n_accepted = int(np.searchsorted(s_sorted, theta, side="right"))  # all ties accepted
        n_errors = int(round(cum_errors[n_accepted]))
        bound = _binomial_tail_upper_bound(n_errors, n_accepted, delta_step)
        if bound < target:
            low = mid
            if best is None or n_accepted > best[0]:
                best = (n_accepted, float(theta), bound)
        else:
            high = mid
    if best is None:
        raise InfeasibleTargetError(
            f"infeasible target_risk={target_risk!r}: no tested threshold has a risk bound "
            f"below the target at delta={delta!r} with n={n} examples"
        )
    _, theta, bound = best
    return SelectionFunction(threshold=theta, accept_prob=1.0), bound * loss_scale


@dataclass(frozen=True)
class OperatingPoint:
    """Expected coverage and selective risk of a selection function on a sample, with intervals.

    Parameters
    ----------
    coverage, selective_risk : float
        ``mean_i c_i`` and ``sum_i c_i l_i / sum_i c_i`` (NaN, with its interval, when nothing
        is accepted); with OOD rows, the risk of the accepted ID rows.
    coverage_ci, selective_risk_ci : tuple of float
        ``(low, high)`` confidence intervals.
    coverage_ci_method, selective_risk_ci_method : str
        How they were computed, for the report.
    n_accepted_expected : float
        ``sum_i c_i``.

    Examples
    --------
    >>> point = operating_point([0, 100, 0, 0], [0.3, 0.1, 0.2, 0.9], SelectionFunction(0.5, 1.0), loss_bound=100)
    >>> point.coverage, point.selective_risk, point.n_accepted_expected
    (0.75, 33.333333333333336, 3.0)
    """

    coverage: float
    coverage_ci: tuple[float, float]
    coverage_ci_method: str
    selective_risk: float
    selective_risk_ci: tuple[float, float]
    selective_risk_ci_method: str
    n_accepted_expected: float


@dataclass(frozen=True)
class OODOperatingPoint(OperatingPoint):
    """An :class:`OperatingPoint` on a sample with out-of-distribution (OOD) rows, with the OOD rates.

    :func:`operating_point` with ``is_ood``: coverage of all rows, selective risk of the accepted
    in-distribution (ID) rows, and the rates of the OOD rejection models (Franc, Prusa & Paplham).

    Parameters
    ----------
    coverage, coverage_ci, coverage_ci_method, selective_risk, selective_risk_ci, \
selective_risk_ci_method, n_accepted_expected
        As :class:`OperatingPoint`.
    tpr, fpr, precision : float
        Expected share of the ID rows accepted, of the OOD rows accepted, and of ID rows among
        the accepted (NaN when nothing is accepted).
    tpr_ci, fpr_ci, precision_ci : tuple of float
        Their ``(low, high)`` intervals.
    rates_ci_method : str
        How the rates' intervals were computed.
    n_id_accepted_expected, n_ood_accepted_expected : float
        ``sum_i c_i`` over the ID and over the OOD rows.

    Examples
    --------
    >>> is_ood = [False, False, False, True, True]
    >>> point = operating_point([0, 100, 0, float("nan"), float("nan")], [0.1, 0.2, 0.9, 0.3, 0.8],
    ...                         SelectionFunction(0.5, 1.0), loss_bound=100, is_ood=is_ood)
    >>> round(point.tpr, 4), point.fpr, round(point.precision, 4), point.selective_risk
    (0.6667, 0.5, 0.6667, 50.0)
    """

    tpr: float
    tpr_ci: tuple[float, float]
    fpr: float
    fpr_ci: tuple[float, float]
    precision: float
    precision_ci: tuple[float, float]
    rates_ci_method: str
    n_id_accepted_expected: float
    n_ood_accepted_expected: float

    @property
    def recall(self) -> float:
        """The recall of the ID rows, their TPR."""
        return self.tpr

    @property
    def recall_ci(self) -> tuple[float, float]:
        """The recall's interval, the TPR's."""
        return self.tpr_ci


@renamed_argument("s", "uncertainty", since="0.6.0")
def operating_point(
    loss: Any,
    uncertainty: Any,
    selection: SelectionFunction,
    confidence: float = 0.95,
    *,
    loss_bound: float,
    is_ood: Any = None,
) -> OperatingPoint:
    """Coverage (Wilson interval) and selective risk (:func:`rejectopt.stats.selective_risk_interval`).

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty`` (``s=`` still works, with a FutureWarning, until the
       next release).

    Parameters
    ----------
    loss, uncertainty : array_like, shape (n,)
        Losses (>= 0; NaN allowed on OOD rows) and uncertainty scores.
    selection : SelectionFunction
        The fitted selection function.
    confidence : float, default 0.95
        Confidence level of every interval.
    loss_bound : float
        The largest loss a prediction can have (100 for the 0/100 loss), which scales the
        risk's interval (:func:`rejectopt.stats.selective_risk_interval`).
    is_ood : array_like of bool, shape (n,), or None
        True on the out-of-distribution rows; None: every row is in distribution.

    Returns
    -------
    OperatingPoint
        As :func:`empirical_risk_coverage`, with intervals and their method names; with
        ``is_ood``, an :class:`OODOperatingPoint` (Wilson intervals for the rates, the risk of
        the accepted ID rows).

    Examples
    --------
    >>> point = operating_point([0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    ...                         SelectionFunction(0.4, 1.0), loss_bound=1)
    >>> round(point.coverage, 4), [round(v, 4) for v in point.coverage_ci]
    (0.6667, [0.3, 0.9032])
    >>> round(point.selective_risk, 4), [round(v, 4) for v in point.selective_risk_ci]
    (0.25, [0.0456, 0.6994])
    >>> point.selective_risk_ci_method
    'Wilson score interval (95%) on the accepted rows'
    """
    validate_params("operating_point", {"confidence": confidence}, _PARAMETERS)
    if is_ood is not None:
        return _ood_operating_point(loss, uncertainty, selection, confidence, loss_bound, is_ood)
    loss, s = _check_pair(loss, uncertainty)
    prob = selection.acceptance_probability(s)
    risk, coverage = empirical_risk_coverage(loss, s, selection)
    risk_ci, risk_method = selective_risk_interval(loss, prob, confidence, loss_bound=loss_bound)
    return OperatingPoint(
        coverage=coverage,
        coverage_ci=wilson_interval(float(prob.sum()), loss.size, confidence),
        coverage_ci_method=f"Wilson score interval ({confidence:.0%})",
        selective_risk=risk,
        selective_risk_ci=risk_ci,
        selective_risk_ci_method=risk_method,
        n_accepted_expected=float(prob.sum()),
    )


def _ood_operating_point(
    loss: Any,
    s: Any,
    selection: SelectionFunction,
    confidence: float,
    loss_bound: float,
    is_ood: Any,
) -> OODOperatingPoint:
    """:func:`operating_point` on ID and OOD rows: exact expectations over the randomisation (as
    :func:`rejectopt.ood.empirical_rates`); NaN where nothing is accepted."""
    loss = np.asarray(loss, dtype=float)
    is_ood = np.asarray(is_ood, dtype=bool)
    if is_ood.shape != loss.shape:
        raise ValueError(f"is_ood has shape {is_ood.shape}, the loss {loss.shape}")
    n_id, n_ood = int((~is_ood).sum()), int(is_ood.sum())
    if n_id == 0 or n_ood == 0:
        raise ValueError(
            f"an operating point with OOD rows needs ID and OOD rows, got {n_id} ID and {n_ood} OOD"
        )
    _, s = as_loss_and_uncertainty(loss, s, exact_order=False, ignored=is_ood)  # OOD losses: NaN ok
    prob = selection.acceptance_probability(s)
    accepted_id, accepted_ood = float(prob[~is_ood].sum()), float(prob[is_ood].sum())
    accepted = accepted_id + accepted_ood
    loss_id, prob_id = loss[~is_ood], prob[~is_ood]
    risk_ci, risk_method = selective_risk_interval(
        loss_id, prob_id, confidence, loss_bound=loss_bound
    )
    rates_method = f"Wilson score interval ({confidence:.0%})"
    return OODOperatingPoint(
        coverage=accepted / is_ood.size,
        coverage_ci=wilson_interval(accepted, is_ood.size, confidence),
        coverage_ci_method=rates_method,
        selective_risk=float(prob_id @ loss_id) / accepted_id if accepted_id > 0 else float("nan"),
        selective_risk_ci=risk_ci,
        selective_risk_ci_method=risk_method,
        n_accepted_expected=accepted,
        tpr=accepted_id / n_id,
        tpr_ci=wilson_interval(accepted_id, n_id, confidence),
        fpr=accepted_ood / n_ood,
        fpr_ci=wilson_interval(accepted_ood, n_ood, confidence),
        precision=accepted_id / accepted if accepted > 0 else float("nan"),
        precision_ci=wilson_interval(accepted_id, accepted, confidence),
        rates_ci_method=rates_method,
        n_id_accepted_expected=accepted_id,
        n_ood_accepted_expected=accepted_ood,
    )


# --------------------------------------------------------------------------------------------
# Two rules of the cost-based model (Problem 1) on a classifier's own outputs
# --------------------------------------------------------------------------------------------
def chow_reject(proba: Any, reject_cost: float) -> np.ndarray:
    """Chow's rule: reject iff ``max_y p(y|x) < 1 - d`` (exactly ``1 - d`` is accepted).

    Bayes-optimal for the cost-based model on true posteriors; nothing is fitted.

    Parameters
    ----------
    proba : array_like, shape (n, K)
        Class posteriors ``p(y|x)`` (e.g. ``predict_proba``).
    reject_cost : float
        ``d``, the cost of a rejection when an error costs 1.

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
        True where the input is rejected.
    """
    proba = np.asarray(proba, dtype=float)
    if proba.ndim != 2:
        raise ValueError(f"proba must be 2-D (n, K), got shape {proba.shape}")
    return proba.max(axis=1) < 1.0 - float(reject_cost)


def fit_margin_threshold(
    decision: Any, loss: Any, reject_cost: float, *, loss_scale: float = 100.0
) -> SelectionFunction:
    """SVM margin baseline: :func:`fit_cost_based` on the uncertainty ``-|f|``, cost ``loss_scale d``.

    Parameters
    ----------
    decision, loss : array_like, shape (n,)
        ``f(x)`` on the validation sample and ``loss_scale [y != sign f(x)]``.
    reject_cost : float
        ``d``, the cost of a rejection when an error costs 1.
    loss_scale : float, default 100.0
        The loss of one error (100 for the 0/100 loss).

    Returns
    -------
    SelectionFunction
        On ``-|f|``: accepts ``|f| >= -threshold`` (``accept_prob`` 1) or, rejecting all of
        the sample, ``|f| > -threshold`` (``accept_prob`` 0).
    """
    return fit_cost_based(
        loss, -np.abs(np.asarray(decision, float)), float(loss_scale) * float(reject_cost)
    )
