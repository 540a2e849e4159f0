"""Selective classifiers built from an uncertainty score (Franc, Prusa & Voracek, 2023, Sec. 2).

All three rejection models of the paper -- cost-based (Problem 1), bounded-improvement
(Problems 2-3) and bounded-abstention (Problems 4-5) -- share one optimal form, the
*randomized Bayes selection function* (eq. 25)::

    c(x) = 1   if s(x) < a,
           nu  if s(x) == a,
           0   if s(x) > a,

where ``s`` is an uncertainty score (larger = more uncertain; a proper score orders inputs
like the conditional risk r(x) of eq. 9), ``a`` a decision threshold and ``nu`` an acceptance
probability. The functions below fit ``(a, nu)`` on a validation sample of per-example losses
``loss >= 0`` and scores ``s``, replacing the integrals over p(x) of Theorems 3 and 6 by
empirical averages.

:class:`Target` names one of the three models with its parameter (``coverage=0.8``,
``risk=5``, ``reject-cost=10``; :func:`parse_target`); :class:`OODTarget` one of the models
with out-of-distribution inputs of :mod:`rejectopt.ood` (``tpr=0.8,fpr=0.2``,
``precision=0.9,recall=0.7``; the score then learns from the ID rows of
:func:`split_ood_rows`). :func:`fit_selective` learns a whole
selective classifier from a classifier's predictions and losses -- a registered score with C
chosen by validation AuRC, then the selection function for a target -- on the rows of
:func:`split_rows`; :func:`operating_point` reports its coverage and selective risk with
confidence intervals (``python -m rejectopt select`` is a shell around these).

Conventions
-----------
* The *expected* selective risk and coverage of a randomized selection function on a sample
  are the ratio of expectations ``sum_i c_i l_i / sum_i c_i`` and ``mean_i c_i`` (the empirical
  versions of eqs. 5-6), computed exactly, without sampling (:func:`empirical_risk_coverage`,
  the one home of this computation). With nothing accepted the selective risk is undefined: NaN.
* Examples with equal score form a *tie group*: a selection function treats them alike, so
  only the acceptance probability ``nu`` of the boundary group can move the coverage
  between two consecutive distinct score values.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import lazy_loader as _lazy

#: scipy.stats, imported at its first use (about 0.6 s; only the Clopper-Pearson bound needs it).
_sps = _lazy.load("scipy.stats", suppress_warning=True)  # parent scipy is cheap

from .stats import selective_risk_interval, wilson_interval

__all__ = [
    "InfeasibleTargetError",
    "OperatingPoint",
    "SelectionFunction",
    "SelectiveFit",
    "Target",
    "TARGET_KINDS",
    "OODTarget",
    "OOD_TARGET_KINDS",
    "describe_attainable",
    "fit_selective",
    "operating_point",
    "parse_target",
    "split_ood_rows",
    "split_rows",
    "target_from_dict",
    "target_to_dict",
    "fit_cost_based",
    "fit_bounded_improvement",
    "fit_bounded_abstention",
    "fit_geifman_el_yaniv",
    "empirical_risk_coverage",
]


# --------------------------------------------------------------------------------------------
# The selection function
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SelectionFunction:
    """Randomized Bayes selection function on an uncertainty score (eq. 25).

    Accept when ``s < threshold``, reject when ``s > threshold`` and accept with probability
    ``accept_prob`` when ``s == threshold`` (the boundary case of eqs. 15 and 23).

    Parameters
    ----------
    threshold : float
        Decision threshold ``a`` (gamma in eq. 15, beta in eq. 23). May be ``+inf`` (accept
        everything) or ``-inf`` (reject everything), never NaN.
    accept_prob : float
        Acceptance probability ``nu`` in [0, 1] at exact ties ``s == threshold`` (tau in
        eq. 16, kappa in eq. 24).
    """

    threshold: float
    accept_prob: float

    def __post_init__(self) -> None:
        threshold = float(self.threshold)
        accept_prob = float(self.accept_prob)
        if math.isnan(threshold):
            raise ValueError("SelectionFunction: threshold must not be NaN")
        if not 0.0 <= accept_prob <= 1.0:
            raise ValueError(
                f"SelectionFunction: accept_prob must lie in [0, 1], got {self.accept_prob!r}"
            )
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "accept_prob", accept_prob)

    def acceptance_probability(self, uncertainty: Any) -> np.ndarray:
        """Probability c(x) of accepting each input: 1, ``accept_prob`` or 0 (eq. 25).

        Parameters
        ----------
        uncertainty : array_like of float
            Uncertainty scores ``s(x)``; NaN is rejected with ValueError.

        Returns
        -------
        numpy.ndarray of float, same shape as ``uncertainty``.
        """
        s = _as_finite_or_inf_array(uncertainty, "uncertainty")
        prob = np.where(s < self.threshold, 1.0, 0.0)
        prob[s == self.threshold] = self.accept_prob
        return prob

    def accept(self, uncertainty: Any, random_state: Any = None) -> np.ndarray:
        """Draw accept/reject decisions; randomises only at exact ties ``s == threshold``.

        Parameters
        ----------
        uncertainty : array_like of float
            Uncertainty scores ``s(x)``.
        random_state : None, int, or numpy.random.Generator
            Seed or generator (``numpy.random.default_rng``) for the boundary draws.

        Returns
        -------
        numpy.ndarray of bool
            True where the prediction is accepted.
        """
        s = _as_finite_or_inf_array(uncertainty, "uncertainty")
        accepted = s < self.threshold
        ties = s == self.threshold
        n_ties = int(ties.sum())
        if n_ties and self.accept_prob >= 1.0:
            accepted[ties] = True
        elif n_ties and self.accept_prob > 0.0:
            rng = np.random.default_rng(random_state)
            accepted[ties] = rng.random(n_ties) < self.accept_prob
        return accepted

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict; infinite thresholds are written as the strings ``"inf"``/``"-inf"``."""
        data = asdict(self)
        if math.isinf(self.threshold):
            data["threshold"] = "inf" if self.threshold > 0 else "-inf"
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, name: str = "SelectionFunction") -> "SelectionFunction":
        """Inverse of :meth:`to_dict`, for untrusted input (e.g. a hand-edited JSON file).

        ``threshold`` must be a number or the string ``"inf"`` / ``"-inf"``, ``accept_prob``
        a number in [0, 1]; no other key is allowed. ``name`` prefixes the field names in
        the messages (``selection.threshold``).

        Raises
        ------
        ValueError
            Naming the missing, unknown or malformed field.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{name} must be an object with keys threshold and accept_prob, "
                             f"got {type(data).__name__}")
        missing = {"threshold", "accept_prob"} - set(data)
        if missing:
            raise ValueError(f"{name}: missing keys {sorted(missing)}")
        unknown = set(data) - {"threshold", "accept_prob"}
        if unknown:
            raise ValueError(f"{name}: unknown keys {sorted(map(str, unknown))}")
        threshold = data["threshold"]
        if isinstance(threshold, str) and threshold in ("inf", "-inf"):
            threshold = float(threshold)
        elif not _is_real_number(threshold) or not math.isfinite(float(threshold)):
            raise ValueError(f'{name}.threshold must be a finite number, "inf" or "-inf", '
                             f"got {reprlib.repr(threshold)}")
        accept_prob = data["accept_prob"]
        if not _is_real_number(accept_prob) or not 0.0 <= accept_prob <= 1.0:
            raise ValueError(f"{name}.accept_prob must be a number in [0, 1], got {reprlib.repr(accept_prob)}")
        return cls(threshold=float(threshold), accept_prob=float(accept_prob))


def _is_real_number(value: Any) -> bool:
    """True for int and float values (JSON numbers) within the float range; False for bool, str, etc."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return False
    try:
        float(value)
    except OverflowError:  # an integer beyond the float range
        return False
    return True


# --------------------------------------------------------------------------------------------
# Input validation and tie groups
# --------------------------------------------------------------------------------------------
def _as_finite_or_inf_array(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(arr))[0])}")
    return arr


def _validate_loss_and_scores(loss: Any, s: Any, loss_name: str = "loss") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(loss, s)`` as 1-D float arrays or raise ValueError naming the bad input."""
    loss = np.asarray(loss, dtype=float)
    s = np.asarray(s, dtype=float)
    if loss.ndim != 1 or s.ndim != 1:
        raise ValueError(
            f"{loss_name} and s must be 1-D, got shapes {loss.shape} and {s.shape}"
        )
    if loss.shape[0] != s.shape[0]:
        raise ValueError(
            f"length mismatch: {loss_name} has {loss.shape[0]} elements, s has {s.shape[0]}"
        )
    if loss.shape[0] == 0:
        raise ValueError(f"{loss_name} and s are empty; need at least one example")
    for name, arr in ((loss_name, loss), ("s", s)):
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} must be finite; {name}[{i}] = {arr[i]}")
    if (loss < 0).any():
        i = int(np.flatnonzero(loss < 0)[0])
        raise ValueError(f"{loss_name} must be non-negative; {loss_name}[{i}] = {loss[i]}")
    return loss, s


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


def _check_unit_interval(value: float, name: str, *, closed_low: bool) -> float:
    value = float(value)
    low_ok = value >= 0.0 if closed_low else value > 0.0
    if not (math.isfinite(value) and low_ok and value <= 1.0):
        interval = "[0, 1]" if closed_low else "(0, 1]"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return value


def _check_nonnegative(value: float, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


class InfeasibleTargetError(ValueError):
    """No selection function meets the target on the sample (e.g. a selective risk below
    that of the least uncertain examples)."""


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------
def empirical_risk_coverage(loss: Any, s: Any, selection: SelectionFunction) -> tuple[float, float]:
    """Expected empirical selective risk and coverage of ``selection`` (eqs. 5-6).

    The expectation is over the randomisation at ties, computed exactly:
    ``coverage = mean_i c_i`` and ``risk = sum_i c_i l_i / sum_i c_i`` with ``c_i`` from
    :meth:`SelectionFunction.acceptance_probability`.

    Parameters
    ----------
    loss : array_like, shape (n,)
        Non-negative losses ``l(y_i, h(x_i))``.
    s : array_like, shape (n,)
        Uncertainty scores.
    selection : SelectionFunction

    Returns
    -------
    (selective_risk, coverage) : tuple of float
        ``selective_risk`` is NaN when the coverage is 0 (the selective risk is undefined).
    """
    loss, s = _validate_loss_and_scores(loss, s)
    prob = selection.acceptance_probability(s)
    accepted_mass = float(prob.sum())
    coverage = accepted_mass / loss.size
    risk = float(prob @ loss) / accepted_mass if accepted_mass > 0 else float("nan")
    return risk, coverage


# --------------------------------------------------------------------------------------------
# Cost-based model (Problem 1, eq. 4)
# --------------------------------------------------------------------------------------------
def fit_cost_based(loss: Any, s: Any, reject_cost: float) -> SelectionFunction:
    """Empirical Chow rule on the score: minimise the empirical cost-based risk (eq. 1).

    The empirical risk of accepting the examples with ``s <= u`` is
    ``(sum_{s_i <= u} l_i + reject_cost * #(s_i > u)) / n``. It is evaluated for every cut
    between consecutive distinct score values (plus "reject all") and the minimiser is
    returned. Ties are handled all-or-nothing: the risk is linear in the acceptance probability
    of a tie group, so an extreme value ``nu in {0, 1}`` is always optimal -- the empirical
    counterpart of the remark after eq. (4) that a deterministic optimal strategy exists.
    Among equally good cuts the one with the largest coverage is returned.

    Parameters
    ----------
    loss : array_like, shape (n,)
        Non-negative losses on a validation sample.
    s : array_like, shape (n,)
        Uncertainty scores on the same sample.
    reject_cost : float
        Reject cost epsilon >= 0 (same units as the loss).

    Returns
    -------
    SelectionFunction
        ``(u_j, 1)`` accepting the ``j`` lowest tie groups, or ``(u_1, 0)`` to reject all
        (new inputs with a score below the smallest validation score are then still accepted).
    """
    loss, s = _validate_loss_and_scores(loss, s)
    reject_cost = _check_nonnegative(reject_cost, "reject_cost")
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
def fit_bounded_improvement(loss: Any, s: Any, target_risk: float) -> SelectionFunction:
    """Maximal empirical coverage subject to empirical selective risk <= ``target_risk``.

    Empirical version of Theorem 3. With the excess loss ``l_i - lambda`` (the r-bar of
    eq. 13), the cumulative excess ``D(a, nu) = sum_{s_i<a} (l_i - lambda)
    + nu * sum_{s_i=a} (l_i - lambda)`` is piecewise linear along the sorted sample, and the
    selective risk is <= lambda iff ``D <= 0``. The largest prefix with ``D <= 0`` fixes the
    threshold gamma (eq. 14-15); on the boundary tie group the acceptance probability
    ``nu = -D(before group) / (excess of the group)`` (eq. 16) makes the expected selective
    risk equal ``target_risk`` exactly. If the whole sample has risk <= target, everything is
    accepted.

    Parameters
    ----------
    loss, s : array_like, shape (n,)
        Validation losses (>= 0) and uncertainty scores.
    target_risk : float
        Target selective risk lambda > 0 (same units as the loss).

    Returns
    -------
    SelectionFunction

    Raises
    ------
    ValueError
        On bad input, or when no threshold reaches a selective risk <= target (the
        lowest-uncertainty tie group alone already exceeds it).
    """
    loss, s = _validate_loss_and_scores(loss, s)
    target_risk = float(target_risk)
    if not (math.isfinite(target_risk) and target_risk > 0):
        raise ValueError(f"target_risk must be a finite number > 0, got {target_risk!r}")
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
def fit_bounded_abstention(loss: Any, s: Any, target_coverage: float) -> SelectionFunction:
    """Minimal empirical selective risk subject to coverage >= ``target_coverage``.

    Empirical version of Theorem 6: the threshold beta is the smallest distinct score at
    which the cumulative count ``#(s <= beta)`` reaches ``omega * n`` (eq. 22), and the
    acceptance probability at the boundary tie group is
    ``kappa = (omega * n - #(s < beta)) / #(s == beta)`` (eq. 24), so that the expected
    coverage equals ``omega`` exactly. For a proper uncertainty score this is the optimal
    strategy; ``loss`` is used only for input validation.

    Parameters
    ----------
    loss, s : array_like, shape (n,)
        Validation losses (>= 0) and uncertainty scores.
    target_coverage : float
        Target coverage omega in (0, 1].

    Returns
    -------
    SelectionFunction
    """
    loss, s = _validate_loss_and_scores(loss, s)
    omega = _check_unit_interval(target_coverage, "target_coverage", closed_low=False)
    groups = _tie_groups(loss, s)
    cum_counts = groups.cum_counts
    target_count = omega * loss.size
    # smallest group j (0-based) with N_j >= omega * n, tolerant to round-off in omega * n
    j = int(np.searchsorted(cum_counts[1:], target_count * (1 - 1e-12), side="left"))
    j = min(j, groups.values.size - 1)
    kappa = (target_count - cum_counts[j]) / groups.counts[j]
    return SelectionFunction(threshold=groups.values[j], accept_prob=float(np.clip(kappa, 0.0, 1.0)))


# --------------------------------------------------------------------------------------------
# Geifman & El-Yaniv (2017): selection with guaranteed risk (SGR)
# --------------------------------------------------------------------------------------------
def _binomial_tail_upper_bound(n_errors: int, n_accepted: int, delta: float) -> float:
    """B*(r, delta, m): largest b with P(Binomial(m, b) <= errors) >= delta (Clopper-Pearson).

    Solves ``sum_{j<=k} C(m, j) b^j (1-b)^(m-j) = delta`` for b, i.e. the (1 - delta)
    quantile of Beta(k + 1, m - k).
    """
    if n_accepted == 0 or n_errors >= n_accepted:
        return 1.0
    return float(_sps.beta.ppf(1.0 - delta, n_errors + 1, n_accepted - n_errors))


def fit_geifman_el_yaniv(
    loss01: Any,
    s: Any,
    target_risk: float,
    delta: float,
    loss_scale: float = 1.0,
) -> tuple[SelectionFunction, float]:
    """Selection with guaranteed risk (SGR) of Geifman & El-Yaniv (2017, Algorithm 1).

    Binary search over ``k = ceil(log2 n)`` thresholds on the sorted scores. For the
    threshold accepting the examples with ``s <= theta`` (m accepted, e errors) the selective
    risk is bounded with probability ``1 - delta/k`` by the binomial tail inversion
    ``B*(e/m, delta/k, m)`` (Clopper-Pearson upper bound); the Bonferroni correction makes the
    bound hold for all tested thresholds simultaneously with probability ``1 - delta``.
    The search moves towards larger coverage when ``B* < target_risk``.

    Deviation from the published pseudo-code, which outputs the *last* tested threshold:
    here the largest-coverage tested threshold whose bound is below the target is returned
    (its guarantee is covered by the same union bound); if none is, ValueError is raised.

    Parameters
    ----------
    loss01 : array_like, shape (n,)
        0/1 losses times ``loss_scale`` (e.g. 0/100 with ``loss_scale=100``).
    s : array_like, shape (n,)
        Uncertainty scores (accept ``s <= theta``; ties are accepted together).
    target_risk : float
        Desired risk r* in (0, loss_scale], in loss units.
    delta : float
        Confidence parameter in (0, 1).
    loss_scale : float, default 1.0
        Value of a loss of one error.

    Returns
    -------
    selection : SelectionFunction
        Deterministic: ``(theta, 1.0)``.
    risk_bound : float
        Guaranteed selective-risk bound b* (in loss units): with probability >= 1 - delta the
        true selective risk of ``selection`` is <= ``risk_bound`` (< ``target_risk``).
    """
    loss01, s = _validate_loss_and_scores(loss01, s, loss_name="loss01")
    loss_scale = float(loss_scale)
    if not (math.isfinite(loss_scale) and loss_scale > 0):
        raise ValueError(f"loss_scale must be a finite number > 0, got {loss_scale!r}")
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
    delta = float(delta)
    if not (math.isfinite(delta) and 0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")

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
        raise ValueError(
            f"infeasible target_risk={target_risk!r}: no tested threshold has a risk bound "
            f"below the target at delta={delta!r} with n={n} examples"
        )
    _, theta, bound = best
    return SelectionFunction(threshold=theta, accept_prob=1.0), bound * loss_scale


# --------------------------------------------------------------------------------------------
# Targets: which of the three models, and its parameter
# --------------------------------------------------------------------------------------------
#: Target kinds: bounded abstention, bounded improvement, cost-based model.
TARGET_KINDS = ("coverage", "risk", "reject-cost")


@dataclass(frozen=True)
class Target:
    """What a selection function is fitted for.

    ``kind`` is ``"coverage"`` (bounded abstention, :func:`fit_bounded_abstention`: value
    in (0, 1]), ``"risk"`` (bounded improvement, :func:`fit_bounded_improvement`: the
    largest coverage with selective risk <= value, in loss units, e.g. percent for the
    0/100 loss; value > 0) or ``"reject-cost"`` (cost-based model, :func:`fit_cost_based`:
    minimise risk + value * rejection rate; value >= 0).
    """

    kind: str
    value: float

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"target must be coverage=W, risk=L or reject-cost=E, got kind {self.kind!r}")
        try:
            number = float(self.value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"target {self.kind}: {reprlib.repr(self.value)} is not a number") from None
        if self.kind == "coverage" and not 0.0 < number <= 1.0:
            raise ValueError(f"target coverage must lie in (0, 1], got {number:g}")
        if self.kind == "risk" and not (math.isfinite(number) and number > 0):
            raise ValueError(f"target risk must be a finite number > 0 (loss units), got {number:g}")
        if self.kind == "reject-cost" and not (math.isfinite(number) and number >= 0):
            raise ValueError(f"target reject-cost must be a finite number >= 0, got {number:g}")
        object.__setattr__(self, "value", number)

    def fit(self, loss: Any, uncertainty: Any) -> SelectionFunction:
        """Fit the selection function on calibration ``loss`` and ``uncertainty``.

        Raises :class:`InfeasibleTargetError` when a risk target cannot be met.
        """
        if self.kind == "coverage":
            return fit_bounded_abstention(loss, uncertainty, self.value)
        if self.kind == "risk":
            return fit_bounded_improvement(loss, uncertainty, self.value)
        return fit_cost_based(loss, uncertainty, self.value)

    def __str__(self) -> str:
        return f"{self.kind}={self.value:g}"


#: Target kinds of the OOD rejection models (Franc, Prusa & Paplham): bounded TPR-FPR (Theorem 3)
#: and bounded precision-recall (Theorem 5), each with its two bounds in text order.
OOD_TARGET_KINDS = {"tpr-fpr": ("tpr", "fpr"), "precision-recall": ("precision", "recall")}
_OOD_TARGET_FORMS = "tpr=T,fpr=F or precision=P,recall=R"
_ALL_TARGET_FORMS = f"coverage=W, risk=L, reject-cost=E, {_OOD_TARGET_FORMS}"


@dataclass(frozen=True)
class OODTarget:
    """A target of a reject option model comprising out-of-distribution (OOD) inputs.

    ``kind`` is ``"tpr-fpr"`` (bounded TPR-FPR model, :func:`rejectopt.ood.fit_bounded_tpr_fpr`:
    the smallest selective risk of the accepted in-distribution (ID) inputs subject to
    TPR = share of ID accepted >= ``bounds[0]`` and FPR = share of OOD accepted <= ``bounds[1]``)
    or ``"precision-recall"`` (bounded precision-recall model,
    :func:`rejectopt.ood.fit_bounded_precision_recall`: precision = share of ID among the
    accepted >= ``bounds[0]`` and recall = TPR >= ``bounds[1]``). Each bound lies in [0, 1].
    The precision uses the share of OOD in the sample as the OOD prior.
    """

    kind: str
    bounds: tuple

    def __post_init__(self) -> None:
        if self.kind not in OOD_TARGET_KINDS:
            raise ValueError(f"target must be {_OOD_TARGET_FORMS}, got kind {self.kind!r}")
        bounds = tuple(self.bounds)
        if len(bounds) != 2:
            raise ValueError(f"target {self.kind} needs two bounds ({', '.join(self.names)}), got {len(bounds)}")
        checked = []
        for name, value in zip(self.names, bounds):
            if not _is_real_number(value) or not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"target {name} must be a number in [0, 1], got {reprlib.repr(value)}")
            checked.append(float(value))
        object.__setattr__(self, "bounds", tuple(checked))

    @property
    def names(self) -> tuple[str, str]:
        """``("tpr", "fpr")`` or ``("precision", "recall")``."""
        return OOD_TARGET_KINDS[self.kind]

    def as_dict(self) -> dict[str, float]:
        """``{"tpr": 0.8, "fpr": 0.2}`` or ``{"precision": 0.9, "recall": 0.7}``."""
        return dict(zip(self.names, self.bounds))

    def __str__(self) -> str:
        return ",".join(f"{name}={value:g}" for name, value in self.as_dict().items())

    def met(self, rates: dict) -> dict[str, bool]:
        """Whether each bound holds for ``rates`` (keys ``tpr``/``fpr`` or ``precision``/``recall``).

        TPR, precision and recall are lower bounds, FPR an upper bound; an undefined (NaN)
        rate does not meet its bound. Compared with the tolerance
        :data:`rejectopt.ood.CONSTRAINT_TOL`, as the strategies do.
        """
        from .ood import CONSTRAINT_TOL  # lazy: rejectopt.ood imports this module

        out = {}
        for name, bound in self.as_dict().items():
            value = float(rates[name])
            out[name] = bool(value <= bound + CONSTRAINT_TOL if name == "fpr" else value >= bound - CONSTRAINT_TOL)
        return out

    def fit(self, loss: Any, is_ood: Any, uncertainty: Any) -> SelectionFunction:
        """Fit the optimal selection function on calibration rows (Theorem 3 or 5 of the OOD paper).

        ``loss`` of the OOD rows is ignored (may be NaN). The rule is randomised at the
        boundary tie group (``accept_prob``), so the bounds hold for the expected rates.

        Raises
        ------
        InfeasibleTargetError
            No threshold meets both bounds while accepting an ID input (the paper's "unable");
            the message names the target and what the rows allow (:meth:`attainable`).
        ValueError
            Bad input (no ID or no OOD rows, NaN, lengths), from :mod:`rejectopt.ood`.
        """
        from .ood import fit_bounded_precision_recall, fit_bounded_tpr_fpr  # lazy: rejectopt.ood imports this module

        fit = fit_bounded_tpr_fpr if self.kind == "tpr-fpr" else fit_bounded_precision_recall
        try:
            return fit(loss, is_ood, uncertainty, *self.bounds)
        except InfeasibleTargetError:
            pass  # described below with what the rows allow; bad input (a plain ValueError) propagates
        is_ood = np.asarray(is_ood).astype(bool)  # valid: the strategy checked it
        attainable = self.attainable(is_ood, uncertainty)
        raise InfeasibleTargetError(f"target {self} is infeasible on these {is_ood.size} rows "
                                    f"({int((~is_ood).sum())} ID, {int(is_ood.sum())} OOD): "
                                    f"{describe_attainable(self, attainable)}; the strategy is unable")

    def attainable(self, is_ood: Any, uncertainty: Any) -> dict[str, float]:
        """What the rows allow for each bound, given the other, with randomised thresholds.

        For ``tpr-fpr``: ``fpr_at_tpr`` (smallest FPR with TPR >= the TPR bound) and
        ``tpr_at_fpr`` (largest TPR with FPR <= the FPR bound); for ``precision-recall``:
        ``precision_at_recall`` (largest precision with recall >= the recall bound, NaN if
        nothing is accepted) and ``recall_at_precision`` (largest recall with precision >= the
        precision bound; 0 if no accepted set reaches it). Between two consecutive distinct
        scores the rates move linearly with the acceptance probability of the tie group, so
        the ROC points are interpolated.
        """
        from .ood import operating_points

        is_ood = np.asarray(is_ood, dtype=bool)
        points = operating_points(np.zeros(is_ood.size), is_ood, uncertainty)
        n_id, n_ood = int((~is_ood).sum()), int(is_ood.sum())
        tpr, fpr = points.tpr, points.fpr
        if self.kind == "tpr-fpr":
            tpr_min, fpr_max = self.bounds
            return {"fpr_at_tpr": _fpr_at_tpr(tpr, fpr, tpr_min), "tpr_at_fpr": _tpr_at_fpr(tpr, fpr, fpr_max)}
        precision_min, recall_min = self.bounds
        A, F = tpr * n_id, fpr * n_ood
        candidates = [A[1:][tpr[1:] >= recall_min], F[1:][tpr[1:] >= recall_min]]
        if recall_min > 0:
            candidates = [np.append(candidates[0], recall_min * n_id),
                          np.append(candidates[1], _fpr_at_tpr(tpr, fpr, recall_min) * n_ood)]
        accepted = candidates[0] + candidates[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            precisions = np.where(accepted > 0, candidates[0] / accepted, np.nan)
        best_precision = float(np.nanmax(precisions)) if np.isfinite(precisions).any() else float("nan")
        # largest A on each segment between consecutive points with (1 - p) A - p F >= 0 (linear in tau)
        g = (1.0 - precision_min) * A - precision_min * F
        g0, g1 = g[:-1], g[1:]
        tol = 1e-12 * max(n_id, n_ood)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(g1 >= -tol, 1.0, np.where(g0 >= -tol, g0 / (g0 - g1), np.nan))
        reach = A[:-1] + t * (A[1:] - A[:-1])
        best_recall = float(np.nanmax(reach)) / n_id if np.isfinite(reach).any() else 0.0
        return {"precision_at_recall": best_precision, "recall_at_precision": best_recall}


def _fpr_at_tpr(tpr: np.ndarray, fpr: np.ndarray, tpr_min: float) -> float:
    """Smallest FPR with TPR >= ``tpr_min`` on the interpolated ROC (points from (0, 0) to (1, 1))."""
    j = int(np.searchsorted(tpr, tpr_min, side="left"))
    if j == 0:
        return 0.0
    if j >= tpr.size:
        return float(fpr[-1])
    share = (tpr_min - tpr[j - 1]) / (tpr[j] - tpr[j - 1])
    return float(fpr[j - 1] + share * (fpr[j] - fpr[j - 1]))


def _tpr_at_fpr(tpr: np.ndarray, fpr: np.ndarray, fpr_max: float) -> float:
    """Largest TPR with FPR <= ``fpr_max`` on the interpolated ROC."""
    j = int(np.searchsorted(fpr, fpr_max, side="right")) - 1
    if j >= fpr.size - 1:
        return float(tpr[-1])
    share = (fpr_max - fpr[j]) / (fpr[j + 1] - fpr[j])
    return float(tpr[j] + share * (tpr[j + 1] - tpr[j]))


def describe_attainable(target: OODTarget, attainable: dict) -> str:
    """One phrase: what the rows allow for ``target`` (from :meth:`OODTarget.attainable`)."""
    def fmt(value):
        return "nothing" if math.isnan(value) else f"{value:.4g}"

    if target.kind == "tpr-fpr":
        tpr_min, fpr_max = target.bounds
        return (f"at TPR >= {tpr_min:g} the smallest attainable FPR is {fmt(attainable['fpr_at_tpr'])}, "
                f"at FPR <= {fpr_max:g} the largest attainable TPR is {fmt(attainable['tpr_at_fpr'])}")
    precision_min, recall_min = target.bounds
    return (f"at recall >= {recall_min:g} the largest attainable precision is "
            f"{fmt(attainable['precision_at_recall'])}, at precision >= {precision_min:g} the largest attainable "
            f"recall is {fmt(attainable['recall_at_precision'])}")


def target_from_dict(data: Any) -> "Target | OODTarget":
    """The target of a ``{"kind": ..., "value": ...}`` dict (``model.json``), for untrusted input.

    ``value`` is a number for ``coverage`` / ``risk`` / ``reject-cost`` and an object
    ``{"tpr": T, "fpr": F}`` / ``{"precision": P, "recall": R}`` for the OOD kinds.

    Raises
    ------
    ValueError
        Naming the malformed part.
    """
    if not isinstance(data, dict) or set(data) != {"kind", "value"}:
        raise ValueError("target must be an object with keys kind and value")
    kind, value = data["kind"], data["value"]
    if not isinstance(kind, str):
        raise ValueError("target must hold a kind (text) and a value")
    if kind in OOD_TARGET_KINDS:
        names = OOD_TARGET_KINDS[kind]
        if not isinstance(value, dict) or set(value) != set(names):
            raise ValueError(f"target.value of kind {kind} must be an object with keys {' and '.join(names)}")
        return OODTarget(kind, tuple(value[name] for name in names))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("target must hold a kind (text) and a value (number)")
    return Target(kind, value)


def target_to_dict(target: "Target | OODTarget") -> dict[str, Any]:
    """Inverse of :func:`target_from_dict`."""
    if isinstance(target, OODTarget):
        return {"kind": target.kind, "value": target.as_dict()}
    return {"kind": target.kind, "value": target.value}


def _parse_ood_target(text: str, parts: list[str]) -> OODTarget:
    values = {}
    for part in parts:
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in ("tpr", "fpr", "precision", "recall"):
            raise ValueError(f"target must be {_ALL_TARGET_FORMS}, got {text!r}")
        if name in values:
            raise ValueError(f"target {text!r} gives {name} twice")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"target {name}: {value.strip()!r} is not a number") from None
        if not 0.0 <= number <= 1.0:  # also NaN
            raise ValueError(f"target {name} must lie in [0, 1], got {value.strip()}")
        values[name] = number
    for kind, names in OOD_TARGET_KINDS.items():
        if set(names) == set(values):
            return OODTarget(kind, tuple(values[name] for name in names))
        if set(values) < set(names):
            missing = (set(names) - set(values)).pop()
            raise ValueError(f"target {text!r} needs {missing} as well: {','.join(f'{n}=...' for n in names)}")
    raise ValueError(f"target must be {_OOD_TARGET_FORMS}, got {text!r} (the bounds of two models mixed)")


def parse_target(text: str) -> "Target | OODTarget":
    """Parse a target text into a :class:`Target` or an :class:`OODTarget`.

    ``coverage=0.8``, ``risk=5`` or ``reject-cost=10`` (also ``reject_cost``) give a
    :class:`Target`; ``tpr=0.8,fpr=0.2`` or ``precision=0.9,recall=0.7`` (either order, each
    bound in [0, 1]) an :class:`OODTarget`.

    Raises
    ------
    ValueError
        Unknown kind, a missing or repeated bound, a value that is not a number or out of
        range; the message starts with ``target``.
    """
    parts = str(text).split(",")
    first = parts[0].partition("=")[0].strip().lower()
    if len(parts) > 1 or first in ("tpr", "fpr", "precision", "recall"):
        return _parse_ood_target(str(text), parts)
    kind, sep, value = str(text).partition("=")
    kind = kind.strip().lower().replace("_", "-")
    if not sep or kind not in TARGET_KINDS:
        raise ValueError(f"target must be {_ALL_TARGET_FORMS}, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"target {kind}: {value!r} is not a number") from None
    return Target(kind, number)


# --------------------------------------------------------------------------------------------
# Learning a selective classifier from a classifier's predictions and losses
# --------------------------------------------------------------------------------------------
def split_rows(n: int, calibration_fraction: float = 0.3, report_fraction: float = 0.2,
               validation_fraction: float = 0.3, seed: int = 0, min_rows: int = 10) -> dict[str, np.ndarray]:
    """Seeded split of ``range(n)`` into train (``fit`` + ``validation``), ``calibration`` and ``report`` rows.

    ``round(calibration_fraction * n)`` calibration rows, ``round(report_fraction * n)``
    report rows, the rest trains the score; ``validation_fraction`` of the train rows (its
    last share in the permutation) picks C. Each part holds sorted row indices.

    Raises
    ------
    ValueError
        A fraction outside (0, 1), calibration + report fractions >= 1, a negative seed,
        or a part with fewer than ``min_rows`` rows.
    """
    fractions = {"calibration_fraction": calibration_fraction, "report_fraction": report_fraction,
                 "validation_fraction": validation_fraction}
    for name, value in fractions.items():
        if not 0.0 < value < 1.0:
            raise ValueError(f"{name} must lie in (0, 1), got {value:g}")
    if calibration_fraction + report_fraction >= 1.0:
        raise ValueError(f"calibration_fraction + report_fraction = {calibration_fraction + report_fraction:g} "
                         "leaves no rows to train the score: the sum must be below 1")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    n_calibration = int(round(calibration_fraction * n))
    n_report = int(round(report_fraction * n))
    n_train = n - n_calibration - n_report
    n_validation = int(round(validation_fraction * n_train))
    sizes = {"fit": n_train - n_validation, "validation": n_validation,
             "calibration": n_calibration, "report": n_report}
    if any(v < min_rows for v in sizes.values()):
        raise ValueError(f"too few rows ({n}) for the split {sizes}: every part needs at least {min_rows} rows")
    order = np.random.default_rng(seed).permutation(n)
    bounds = np.cumsum([0] + list(sizes.values()))
    return {name: np.sort(order[bounds[k]:bounds[k + 1]]) for k, name in enumerate(sizes)}


def split_ood_rows(is_ood: Any, calibration_fraction: float = 0.3, report_fraction: float = 0.2,
                   validation_fraction: float = 0.3, seed: int = 0, min_rows: int = 10) -> dict[str, np.ndarray]:
    """:func:`split_rows` for a sample mixing in-distribution (ID) and OOD rows (``is_ood`` True).

    OOD rows have no meaningful loss, so they cannot train a score learned from the loss:
    the ID rows are split by :func:`split_rows` (same fractions and seed, on the ID rows
    alone), and the OOD rows only between ``calibration`` and ``report``, in the proportion
    ``calibration_fraction : report_fraction`` (0.3 : 0.2 = 60 % : 40 %), by their own seeded
    permutation. ``fit`` and ``validation`` then hold ID rows only; ``calibration`` and
    ``report`` both. Indices refer to the whole sample and are sorted.

    Raises
    ------
    ValueError
        No ID or no OOD rows, fewer than ``min_rows`` ID rows in a part or OOD rows in the
        calibration or report part, or the errors of :func:`split_rows`.
    """
    is_ood = np.asarray(is_ood, dtype=bool)
    if is_ood.ndim != 1:
        raise ValueError(f"is_ood must be 1-D, got shape {is_ood.shape}")
    id_rows, ood_rows = np.flatnonzero(~is_ood), np.flatnonzero(is_ood)
    if id_rows.size == 0:
        raise ValueError("no ID rows: every row is marked OOD")
    if ood_rows.size == 0:
        raise ValueError("no OOD rows: no row is marked OOD")
    try:
        id_parts = split_rows(id_rows.size, calibration_fraction, report_fraction, validation_fraction, seed,
                              min_rows=min_rows)
    except ValueError as err:
        if str(err).startswith("too few rows"):
            raise ValueError(f"ID rows: {err}") from None
        raise
    n_calibration = int(round(ood_rows.size * calibration_fraction / (calibration_fraction + report_fraction)))
    sizes = {"calibration": n_calibration, "report": ood_rows.size - n_calibration}
    if min(sizes.values()) < min_rows:
        raise ValueError(f"too few OOD rows ({ood_rows.size}) for the split {sizes}: the calibration and the report "
                         f"part each need at least {min_rows} OOD rows")
    order = ood_rows[np.random.default_rng([seed, 1]).permutation(ood_rows.size)]
    ood_parts = {"calibration": order[:n_calibration], "report": order[n_calibration:]}
    parts = {name: id_rows[rows] for name, rows in id_parts.items()}
    for name, rows in ood_parts.items():
        parts[name] = np.sort(np.concatenate([parts[name], rows]))
    return parts


@dataclass(frozen=True)
class SelectiveFit:
    """Result of :func:`fit_selective`.

    Attributes
    ----------
    score : fitted score learner (refitted on the fit + validation rows with ``C``)
    C : float
        Chosen by the validation AuRC.
    validation_aurc : dict of float -> float
        ``C -> AuRC`` on the validation rows.
    selection : SelectionFunction
        Fitted on the calibration rows.
    uncertainty : ndarray of shape (n,)
        The score on every row.
    parts : dict of ndarray
        The row split (:func:`split_rows`).
    """

    score: Any
    C: float
    validation_aurc: dict
    selection: SelectionFunction
    uncertainty: np.ndarray
    parts: dict


def fit_selective(X: Any, y_pred: Any, loss: Any, target: "Target | OODTarget", parts: dict, *,
                  score: str = "sele", n_classes: int | None = None, C_grid: Any = None, seed: int = 0,
                  n_jobs: int = 1, is_ood: Any = None) -> SelectiveFit:
    """Learn an uncertainty score and a selection function from a classifier's predictions and losses.

    The score (a registered score learning from the loss, :func:`rejectopt.scores.get_score`)
    is fitted on ``parts["fit"]`` for each C of ``C_grid``; the C with the smallest AuRC
    on ``parts["validation"]`` is refitted on both parts (Section 5.1 of the paper). The
    selection function for ``target`` is fitted on ``parts["calibration"]``;
    ``parts["report"]`` is not used.

    With an :class:`OODTarget` the rows marked by ``is_ood`` are out-of-distribution: the
    score learns from the ID rows of ``parts["fit"]`` and ``parts["validation"]`` only (OOD
    losses are ignored and may be NaN; :func:`split_ood_rows` puts no OOD row there), and
    the selection function is fitted on all calibration rows by the bounded TPR-FPR or
    precision-recall strategy (:meth:`OODTarget.fit`). The uncertainty is computed for every
    row, OOD rows included (they need a predicted class, as at prediction time).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y_pred : ndarray of shape (n,) of int
        Predicted class indices 0..K-1.
    loss : ndarray of shape (n,)
        The classifier's losses (of the ID rows; OOD rows' may be NaN).
    target : Target or OODTarget
    parts : dict of ndarray
        Output of :func:`split_rows` (or :func:`split_ood_rows` with an :class:`OODTarget`).
    score : str, default="sele"
    n_classes : int or None
    C_grid : sequence of float or None
        None: :data:`rejectopt.scores.SCORE_C_GRID`.
    seed, n_jobs : int
        Passed to the score learner when it accepts ``random_state`` / ``n_jobs``.
    is_ood : array_like of bool, shape (n,), or None
        Needed with an :class:`OODTarget` (and only then): True for OOD rows.

    Raises
    ------
    InfeasibleTargetError
        The target cannot be met on the calibration rows.
    ValueError
        A score that does not learn from the loss, an uncertainty that is not finite, or
        ``is_ood`` missing with an OOD target (given with another target).
    """
    from .scores import SCORE_C_GRID, get_score, select_C  # lazy: rejectopt.scores imports rejectopt.metrics

    info = get_score(score)
    if info.learns_from != "loss":
        raise ValueError(f"score {score!r} learns from {info.learns_from}, not from the loss")
    C_grid = SCORE_C_GRID if C_grid is None else C_grid
    context = {"n_classes": n_classes, "random_state": seed, "n_jobs": n_jobs}
    fit_rows, val_rows = parts["fit"], parts["validation"]
    ood_target = isinstance(target, OODTarget)
    if ood_target:
        if is_ood is None:
            raise ValueError(f"target {target} needs is_ood, the mask of the OOD rows")
        is_ood = np.asarray(is_ood, dtype=bool)
        if is_ood.shape != (len(loss),):
            raise ValueError(f"is_ood has shape {is_ood.shape}, the loss {np.shape(loss)}")
        fit_rows, val_rows = fit_rows[~is_ood[fit_rows]], val_rows[~is_ood[val_rows]]
    elif is_ood is not None:
        raise ValueError(f"is_ood is used only with a TPR-FPR or precision-recall target, not {target}")
    best, val_aurc = select_C(info.make(0.0, **context), X[fit_rows], y_pred[fit_rows], loss[fit_rows],
                              X[val_rows], y_pred[val_rows], loss[val_rows], C_grid=C_grid)
    train_rows = np.concatenate([fit_rows, val_rows])
    learner = info.make(best.C, **context).fit(X[train_rows], y_pred[train_rows], loss[train_rows])
    s = np.asarray(learner.predict(X, y_pred), dtype=float)
    bad = ~np.isfinite(s)
    if bad.any():
        raise ValueError(f"the uncertainty of row index {int(np.flatnonzero(bad)[0])} is {s[bad][0]} "
                         f"({int(bad.sum())} row(s) in all): the features overflow the score")
    cal = parts["calibration"]
    selection = target.fit(loss[cal], is_ood[cal], s[cal]) if ood_target else target.fit(loss[cal], s[cal])
    return SelectiveFit(score=learner, C=float(best.C),
                        validation_aurc={float(c): float(v) for c, v in val_aurc.items()},
                        selection=selection, uncertainty=s, parts=parts)


@dataclass(frozen=True)
class OperatingPoint:
    """Expected coverage and selective risk of a selection function on a sample, with intervals.

    ``selective_risk`` and its interval are NaN when nothing is accepted (undefined).
    """

    coverage: float
    coverage_ci: tuple[float, float]
    coverage_ci_method: str
    selective_risk: float
    selective_risk_ci: tuple[float, float]
    selective_risk_ci_method: str
    n_accepted_expected: float


def operating_point(loss: Any, s: Any, selection: SelectionFunction, confidence: float = 0.95) -> OperatingPoint:
    """Coverage (Wilson interval) and selective risk (:func:`rejectopt.stats.selective_risk_interval`)."""
    loss, s = _validate_loss_and_scores(loss, s)
    prob = selection.acceptance_probability(s)
    risk, coverage = empirical_risk_coverage(loss, s, selection)
    risk_ci, risk_method = selective_risk_interval(loss, prob, confidence)
    return OperatingPoint(
        coverage=coverage,
        coverage_ci=wilson_interval(float(prob.sum()), loss.size, confidence),
        coverage_ci_method=f"Wilson score interval ({confidence:.0%})",
        selective_risk=risk,
        selective_risk_ci=risk_ci,
        selective_risk_ci_method=risk_method,
        n_accepted_expected=float(prob.sum()),
    )
