"""The cost-based OOD model (Definition 1, Theorem 1 of [1]): its score and its fitted threshold.

The loss (3) prices a rejected ID row (eps1), an accepted OOD row (eps2) and a rejected OOD row
(eps3); the optimal rule thresholds ``s_C`` of eq. (5) at eps1. Conventions as
:mod:`rejectopt.ood._strategies`; [1] is the OOD paper cited in :mod:`rejectopt.ood._metrics`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..selective import SelectionFunction
from . import _parameters, _sweep
from ._validation import as_finite_1d, validate


def _check_costs(
    owner: str, reject_cost_id: float, accept_cost_ood: float, reject_cost_ood: float
) -> tuple[float, float, float]:
    """The three costs as floats (:mod:`._parameters`), the OOD acceptance the dearer one."""
    out = _parameters.check(
        owner,
        reject_cost_id=reject_cost_id,
        accept_cost_ood=accept_cost_ood,
        reject_cost_ood=reject_cost_ood,
    )
    if not out[1] > out[2]:
        raise ValueError(
            f"accept_cost_ood (eps2={out[1]!r}) must exceed reject_cost_ood (eps3={out[2]!r}), "
            "as assumed for the loss (3)"
        )
    return out[0], out[1], out[2]


def cost_based_score(
    cond_risk: Any,
    likelihood_ratio: Any,
    *,
    accept_cost_ood: float,
    reject_cost_ood: float,
    ood_prior: float,
) -> np.ndarray:
    """Score ``s_C(x) = r_B(x) + (eps2 - eps3) pi / (1 - pi) g(x)`` of Theorem 1, eq. (5).

    The optimum accepts iff ``s_C(x) <= eps1`` (randomisation at equality is arbitrary):
    ``SelectionFunction(threshold=eps1, accept_prob=1.0)`` on this score.

    Parameters
    ----------
    cond_risk : array_like, shape (n,)
        Conditional risk ``r_B(x)`` of the (Bayes) classifier.
    likelihood_ratio : array_like, shape (n,)
        ``g(x) = p_O(x) / p_I(x)`` (``+inf`` allowed where ``p_I(x) = 0``).
    accept_cost_ood, reject_cost_ood : float
        eps2 > eps3 >= 0 of the loss (3).
    ood_prior : float in (0, 1)
        pi of the mixture (1).

    Returns
    -------
    numpy.ndarray of float, shape (n,)
        ``s_C(x)``; ``+inf`` where ``g(x)`` is.
    """
    _, eps2, eps3 = _check_costs("cost_based_score", 0.0, accept_cost_ood, reject_cost_ood)
    (pi,) = _parameters.check("cost_based_score", ood_prior=ood_prior)
    if pi is None:
        raise ValueError("ood_prior must be given for the cost-based score")
    r = as_finite_1d(cond_risk, "cond_risk")
    g = np.asarray(likelihood_ratio, dtype=float)
    if g.shape != r.shape:
        raise ValueError(
            f"length mismatch: cond_risk has {r.shape}, likelihood_ratio has {g.shape}"
        )
    if np.isnan(g).any() or (g < 0).any():
        raise ValueError("likelihood_ratio must be >= 0 and not NaN")
    return r + (eps2 - eps3) * pi / (1.0 - pi) * g


def _cost_weights(n_id: int, n_ood: int, ood_prior: float | None) -> tuple[float, float]:
    if ood_prior is None:
        n = n_id + n_ood
        return 1.0 / n, 1.0 / n
    return (1.0 - ood_prior) / n_id, ood_prior / n_ood


def _best_cost(
    sw: _sweep.Sweep, eps: tuple[float, float, float], ood_prior: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: minimal empirical risk of the loss (3) over deterministic cuts and its position.

    Position ``-1`` means "accept nothing". The risk is linear in the acceptance probability
    of the boundary group, so a deterministic cut is optimal (the remark after Theorem 1).
    Ties go to the larger coverage.
    """
    eps1, eps2, eps3 = eps
    wA, wF = _cost_weights(sw.n_id, sw.n_ood, ood_prior)
    risk = wA * (sw.L + eps1 * (sw.n_id - sw.A)) + wF * (eps2 * sw.F + eps3 * (sw.n_ood - sw.F))
    risk = np.where(sw.last, risk, np.inf)
    nothing = wA * eps1 * sw.n_id + wF * eps3 * sw.n_ood
    k, n = risk.shape
    full = np.concatenate([np.full((k, 1), nothing), risk], axis=1)
    row_min = full.min(axis=1)
    slack = 1e-12 * np.maximum(1.0, np.abs(row_min))
    near = full <= (row_min + slack)[:, None]
    position = n - np.argmax(near[:, ::-1], axis=1)  # last near-optimal column of `full`
    return row_min, position - 1


def fit_cost_based_ood(
    loss: Any,
    is_ood: Any,
    uncertainty: Any,
    *,
    reject_cost_id: float,
    accept_cost_ood: float,
    reject_cost_ood: float,
    ood_prior: float | None = None,
) -> SelectionFunction:
    """Threshold minimising the empirical risk of the cost-based OOD model (Definition 1).

    Minimises over all thresholds of :func:`rejectopt.ood.operating_points` the loss (3)
    averaged over the mixture (1): accepting ``uncertainty <= t`` costs
    ``(1 - pi)/n_I (sum_{ID acc} l_i + eps1 #ID rej) + pi/n_O (eps2 #OOD acc + eps3 #OOD rej)``.
    For ``s_C`` of eq. (5) with the true ``r_B``, ``g`` the minimiser is ``eps1`` (Theorem 1).

    .. versionchanged:: 0.6.0
       Renamed from ``fit_cost_based``, the name of :func:`rejectopt.selective.fit_cost_based`
       (the cost-based model without OOD rows, another signature); the old name works for one
       more release, with a FutureWarning.

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        Validation sample (see :func:`rejectopt.ood.operating_points`).
    reject_cost_id, accept_cost_ood, reject_cost_ood : float
        eps1 >= 0, eps2 > eps3 >= 0 of the loss (3).
    ood_prior : float in (0, 1), optional
        pi; default the sample share of OOD.

    Returns
    -------
    SelectionFunction
        ``(u_j, 1.0)`` accepting the ``j`` least uncertain tie groups, or ``(u_1, 0.0)``
        rejecting all; ties in risk go to the largest coverage.

    Examples
    --------
    An OOD sample at 0.2 stops the threshold while accepting it costs more than rejecting:

    >>> loss, is_ood, uncertainty = [0, float("nan"), 0, 1], [False, True, False, False], [0.1, 0.2, 0.3, 0.4]
    >>> [fit_cost_based_ood(loss, is_ood, uncertainty, reject_cost_id=0.5, accept_cost_ood=cost,
    ...                     reject_cost_ood=0.0).threshold for cost in (1.0, 0.2)]
    [0.1, 0.3]
    """
    eps = _check_costs("fit_cost_based_ood", reject_cost_id, accept_cost_ood, reject_cost_ood)
    (ood_prior,) = _parameters.check("fit_cost_based_ood", ood_prior=ood_prior)
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    sw = _sweep.sweep(u, is_ood, loss)
    _, position = _best_cost(sw, eps, ood_prior)
    if position[0] < 0:
        return SelectionFunction(threshold=float(sw.values[0, 0]), accept_prob=0.0)
    return SelectionFunction(threshold=float(sw.values[0, position[0]]), accept_prob=1.0)


#: The former names already warned about in this process (one FutureWarning each, not one per call).
_WARNED: set[str] = set()


def fit_cost_based(loss: Any, is_ood: Any, uncertainty: Any, **costs: Any) -> SelectionFunction:
    """:func:`fit_cost_based_ood` under its former name, for one more release.

    .. versionchanged:: 0.6.0
       Renamed :func:`fit_cost_based_ood`: :func:`rejectopt.selective.fit_cost_based` has the
       same name and another signature. This alias warns once (FutureWarning) and is removed in
       the next release.

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        As :func:`fit_cost_based_ood`.
    **costs : float
        ``reject_cost_id``, ``accept_cost_ood``, ``reject_cost_ood`` and ``ood_prior``, as
        :func:`fit_cost_based_ood`.

    Returns
    -------
    SelectionFunction
        :func:`fit_cost_based_ood`'s.
    """
    if "fit_cost_based" not in _WARNED:
        _WARNED.add("fit_cost_based")
        warnings.warn(
            "rejectopt.ood.fit_cost_based is renamed rejectopt.ood.fit_cost_based_ood in 0.6.0; "
            "the old name is removed in the next release",
            FutureWarning,
            stacklevel=2,
        )
    return fit_cost_based_ood(loss, is_ood, uncertainty, **costs)
