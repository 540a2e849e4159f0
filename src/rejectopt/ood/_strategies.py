"""Optimal OOD selective functions fitted on validation data (Sec. 2 and 3 of [1]).

By Theorems 1, 3 and 5 of [1] the cost-based, bounded TPR-FPR and bounded precision-recall
models share one optimal selective function (eq. 12): accept if ``s(x) = r(x) + mu g(x) <
lambda``, reject if ``>``, accept with probability ``tau`` at ``=``; ``r`` is the classifier's
conditional risk, ``g = p_O / p_I``. ``lambda``, ``tau`` (and ``mu`` for the double score) are
fitted with the sample estimators of Sec. 3.2-3.3.

Conventions as :mod:`rejectopt.ood._metrics`; also ``tau`` is one acceptance probability for the
whole boundary tie group (as :class:`rejectopt.selective.SelectionFunction`): Theorem 7's
per-input ``tau(x)`` needs ``p_O / p_I`` apart from the score. Rates of a randomised rule are
exact *expected* rates over the randomisation.

The cost-based model's score and single-score fit are in :mod:`rejectopt.ood._cost`, imported
here for the double score's cost-based fit (and its former names).

[1] is the OOD paper cited in :mod:`rejectopt.ood._metrics` (arXiv:2307.05199).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..selective import InfeasibleTargetError, SelectionFunction
from . import _parameters, _sweep
from ._cost import (
    _best_cost,
    _check_costs,
    cost_based_score,
    fit_cost_based,
    fit_cost_based_ood,
)
from ._metrics import empirical_rates
from ._validation import as_finite_1d, check_lengths, validate

__all__ = [
    "SelectionFunction",
    "DoubleScoreSelection",
    "cost_based_score",
    "fit_cost_based",
    "fit_cost_based_ood",
    "fit_bounded_tpr_fpr",
    "fit_bounded_precision_recall",
    "fit_double_score_cost_based",
    "fit_double_score_tpr_fpr",
    "fit_double_score_precision_recall",
    "double_score_risk_at_tpr_fpr",
    "double_score_risk_at_precision_recall",
]


# --------------------------------------------------------------------------------------------
# Bounded TPR-FPR (Theorem 3) and bounded precision-recall (Theorem 5)
# --------------------------------------------------------------------------------------------
def _single_selection(sw: _sweep.Sweep, best: _sweep.Best, what: str) -> SelectionFunction:
    if not best.feasible[0]:
        raise InfeasibleTargetError(
            f"infeasible {what}: no threshold on this validation sample accepts an ID sample "
            "while meeting both constraints"
        )
    return SelectionFunction(
        threshold=float(sw.values[0, best.position[0]]), accept_prob=float(best.tau[0])
    )


def fit_bounded_tpr_fpr(
    loss: Any,
    is_ood: Any,
    uncertainty: Any,
    tpr_min: float,
    fpr_max: float,
    *,
    randomize: bool = True,
) -> SelectionFunction:
    """Optimal selective function of the bounded TPR-FPR model on one score (Theorem 3, eq. 9).

    Minimises the expected empirical selective risk s.t. expected TPR >= ``tpr_min`` and FPR
    <= ``fpr_max`` (problem (13)) over the rules "accept ``s < lambda``, with probability ``tau``
    at ``s = lambda``". Per boundary tie group the constraints are linear and the risk monotone
    in ``tau``, so an end of the feasible ``tau`` interval is optimal. With ``uncertainty = r +
    mu g`` this is eq. (9)'s optimal strategy for that ``mu``.

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        Validation sample.
    tpr_min, fpr_max : float in [0, 1]
        phi_min and rho_max of Definition 2.
    randomize : bool, default True
        False restricts to deterministic thresholds (``tau = 1``), the family Q of B.2.

    Returns
    -------
    SelectionFunction
        ``threshold = lambda``, ``accept_prob = tau``.

    Raises
    ------
    ValueError
        Bad input, or :class:`rejectopt.exceptions.InfeasibleTargetError` if infeasible here.

    Examples
    --------
    TPR >= 0.375 needs 1.5 of the 4 ID samples: the second (at 0.2) is accepted with probability
    1/2 (up to the constraint tolerance), before the OOD sample at 0.3:

    >>> loss, is_ood = [0, 1, float("nan"), 0, 1], [False, False, True, False, False]
    >>> rule = fit_bounded_tpr_fpr(loss, is_ood, [0.1, 0.2, 0.3, 0.4, 0.5], tpr_min=0.375, fpr_max=0.0)
    >>> rule.threshold, round(rule.accept_prob, 4)
    (0.2, 0.5)
    """
    tpr_min, fpr_max = _parameters.check("fit_bounded_tpr_fpr", tpr_min=tpr_min, fpr_max=fpr_max)
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    sw = _sweep.sweep(u, is_ood, loss)
    best = _sweep.best_constrained(
        sw, _sweep.tpr_fpr_constraints(sw.n_id, sw.n_ood, tpr_min, fpr_max), randomize=randomize
    )
    return _single_selection(sw, best, f"tpr_min={tpr_min!r}, fpr_max={fpr_max!r}")


def fit_bounded_precision_recall(
    loss: Any,
    is_ood: Any,
    uncertainty: Any,
    precision_min: float,
    recall_min: float,
    *,
    ood_prior: float | None = None,
    randomize: bool = True,
) -> SelectionFunction:
    """Optimal selective function of the bounded precision-recall model (Theorem 5, eq. 11).

    As :func:`fit_bounded_tpr_fpr` with the constraints of problem (14): expected recall
    >= ``recall_min`` and precision ``(1 - pi) phi / ((1 - pi) phi + pi rho) >= precision_min``
    (linear in ``tau`` once multiplied out).

    Parameters
    ----------
    loss, is_ood, uncertainty : array_like, shape (n,)
        As in :func:`fit_bounded_tpr_fpr`.
    precision_min, recall_min : float in [0, 1]
        kappa_min and phi_min of Definition 3.
    ood_prior : float in (0, 1), optional
        pi; default the sample share of OOD.
    randomize : bool, default True
        False restricts to deterministic thresholds.

    Returns
    -------
    SelectionFunction
        As :func:`fit_bounded_tpr_fpr`, which also raises as this does.

    Examples
    --------
    >>> loss, is_ood = [1, 0, float("nan"), 0], [False, False, True, False]
    >>> rule = fit_bounded_precision_recall(loss, is_ood, [0.4, 0.1, 0.3, 0.2], precision_min=0.7,
    ...                                     recall_min=0.8)
    >>> rule.threshold, round(rule.accept_prob, 4)
    (0.4, 0.4)
    """
    precision_min, recall_min, ood_prior = _parameters.check(
        "fit_bounded_precision_recall",
        precision_min=precision_min,
        recall_min=recall_min,
        ood_prior=ood_prior,
    )
    loss, is_ood, u = validate(loss, is_ood, uncertainty)
    sw = _sweep.sweep(u, is_ood, loss)
    cons = _sweep.precision_recall_constraints(
        sw.n_id, sw.n_ood, precision_min, recall_min, ood_prior
    )
    best = _sweep.best_constrained(sw, cons, randomize=randomize)
    return _single_selection(
        sw, best, f"precision_min={precision_min!r}, recall_min={recall_min!r}"
    )


# --------------------------------------------------------------------------------------------
# Double-score selective function (Sec. 2.4, B.2)
# --------------------------------------------------------------------------------------------
def _as_score_array(values: Any, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(
            f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(arr).ravel())[0])}"
        )
    return arr


@dataclass(frozen=True)
class DoubleScoreSelection:
    """Double-score selective function ``s_r + mu s_g`` with randomised ties (eq. 12, B.2).

    Accept when ``weight_r * s_r + weight_g * s_g < threshold``, with probability ``accept_prob``
    at equality. For ``weight_r > 0`` this is Sec. 2.4's ``s_r + mu s_g <= lambda``, ``mu =
    weight_g / weight_r``, ``lambda = threshold / weight_r``; the weights are B.2's ``(cos a,
    sin a)``, divided by the scores' validation standard deviations if standardised.

    Parameters
    ----------
    weight_r, weight_g : float
        Weights of the misclassification score ``s_r`` and of the OOD score ``s_g``.
    threshold : float
        lambda' (may be +-inf, never NaN).
    accept_prob : float in [0, 1]
        tau at exact ties.

    Examples
    --------
    >>> rule = DoubleScoreSelection(weight_r=1.0, weight_g=0.5, threshold=0.75, accept_prob=0.5)
    >>> rule.mu, rule.score([0.25, 0.5], [0.5, 1.0]), rule.acceptance_probability([0.25, 0.5], [0.5, 1.0])
    (0.5, array([0.5, 1. ]), array([1., 0.]))
    """

    weight_r: float
    weight_g: float
    threshold: float
    accept_prob: float

    def __post_init__(self) -> None:
        w_r, w_g = float(self.weight_r), float(self.weight_g)
        threshold, accept_prob = float(self.threshold), float(self.accept_prob)
        if not (math.isfinite(w_r) and math.isfinite(w_g)) or (w_r == 0 and w_g == 0):
            raise ValueError(
                f"DoubleScoreSelection: weights must be finite and not both 0, got {(w_r, w_g)!r}"
            )
        if math.isnan(threshold):
            raise ValueError("DoubleScoreSelection: threshold must not be NaN")
        if not 0.0 <= accept_prob <= 1.0:
            raise ValueError(
                f"DoubleScoreSelection: accept_prob must lie in [0, 1], got {self.accept_prob!r}"
            )
        for name, value in (
            ("weight_r", w_r),
            ("weight_g", w_g),
            ("threshold", threshold),
            ("accept_prob", accept_prob),
        ):
            object.__setattr__(self, name, value)

    @property
    def mu(self) -> float:
        """Multiplier ``mu = weight_g / weight_r`` of eq. (12) (``+-inf`` when ``weight_r == 0``)."""
        if self.weight_r == 0:
            return math.copysign(math.inf, self.weight_g)
        return self.weight_g / self.weight_r

    def score(self, s_r: Any, s_g: Any) -> np.ndarray:
        """Combined score ``weight_r * s_r + weight_g * s_g``."""
        s_r = _as_score_array(s_r, "s_r")
        s_g = _as_score_array(s_g, "s_g")
        if s_r.shape != s_g.shape:
            raise ValueError(
                f"length mismatch: s_r has shape {s_r.shape}, s_g has shape {s_g.shape}"
            )
        return self.weight_r * s_r + self.weight_g * s_g

    @property
    def selection(self) -> SelectionFunction:
        """The randomised threshold rule on the combined score (the one home of accept / tie logic)."""
        return SelectionFunction(self.threshold, self.accept_prob)

    def acceptance_probability(self, s_r: Any, s_g: Any) -> np.ndarray:
        """Probability ``c(x)`` of accepting each input: 1, ``accept_prob`` or 0 (eq. 12)."""
        return self.selection.acceptance_probability(self.score(s_r, s_g))

    def accept(self, s_r: Any, s_g: Any, random_state: Any = None) -> np.ndarray:
        """Draw accept/reject decisions; randomises only at exact ties.

        Parameters
        ----------
        s_r, s_g : array_like of float
            The two uncertainty scores.
        random_state : None, int or numpy.random.Generator
            Seed or generator for the draws at ties.

        Returns
        -------
        numpy.ndarray of bool
        """
        return self.selection.accept(self.score(s_r, s_g), random_state)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: the two weights and :meth:`SelectionFunction.to_dict` of the threshold rule."""
        return {"weight_r": self.weight_r, "weight_g": self.weight_g, **self.selection.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DoubleScoreSelection:
        """Inverse of :meth:`to_dict`; rejects missing, unknown or malformed fields.

        Raises
        ------
        ValueError
            Naming the offending field.
        """
        if not isinstance(data, dict):
            raise ValueError(
                f"DoubleScoreSelection.from_dict needs a dict, got {type(data).__name__}"
            )
        weights = {}
        for key in ("weight_r", "weight_g"):
            if key not in data:
                raise ValueError(f"DoubleScoreSelection.from_dict: missing keys {[key]}")
            value = data[key]
            if isinstance(value, bool) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                raise ValueError(f"DoubleScoreSelection.{key} must be a number, got {value!r}")
            weights[key] = float(value)
        rest = {k: v for k, v in data.items() if k not in weights}
        selection = SelectionFunction.from_dict(rest, name="DoubleScoreSelection")
        return cls(**weights, threshold=selection.threshold, accept_prob=selection.accept_prob)


#: Elements of one batch of combined scores (rows x samples) evaluated at once.
_CHUNK_ELEMENTS = 1_000_000


def _critical_angles(
    p_r: np.ndarray, p_g: np.ndarray, lo: float, hi: float, max_pairs: int
) -> np.ndarray:
    """Angles in [lo, hi] at which two distinct points swap order along (cos a, sin a), plus
    ``lo``, ``hi`` and the midpoints between consecutive ones (one angle per distinct ordering)."""
    pts = np.unique(np.column_stack([p_r, p_g]), axis=0)
    m = pts.shape[0]
    n_pairs = m * (m - 1) // 2
    if n_pairs > max_pairs:
        raise ValueError(
            f"angles='exact' needs {n_pairs} pairs of distinct score points (> {max_pairs}); "
            "use an integer number of grid angles instead"
        )
    i, j = np.triu_indices(m, k=1)
    d = pts[i] - pts[j]
    base = np.arctan2(-d[:, 0], d[:, 1])  # cos(a) d_r + sin(a) d_g = 0
    cand = np.concatenate([base, base + np.pi, base - np.pi, base + 2 * np.pi])
    cand = np.unique(cand[(cand >= lo) & (cand <= hi)])
    cand = np.unique(np.concatenate([[lo, hi], cand]))
    mids = (cand[1:] + cand[:-1]) / 2.0
    return np.concatenate([cand, mids])


def _angles(
    spec: Any,
    angle_range: tuple[float, float],
    p_r: np.ndarray,
    p_g: np.ndarray,
    n: int,
    max_work: float,
) -> np.ndarray:
    lo, hi = (float(a) for a in angle_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi and hi - lo <= 2 * np.pi + 1e-12):
        raise ValueError(
            f"angle_range must be (lo, hi) with lo <= hi <= lo + 2 pi, got {angle_range!r}"
        )
    if isinstance(spec, str):
        if spec != "exact":
            raise ValueError(f"angles must be an int, an array of angles or 'exact', got {spec!r}")
        angles = _critical_angles(p_r, p_g, lo, hi, max_pairs=int(max_work // max(n, 1)))
        if angles.size * n > max_work:
            raise ValueError(
                f"angles='exact' needs {angles.size} orderings x {n} samples (> {max_work:g}); "
                "use an integer number of grid angles instead"
            )
        return angles
    if np.ndim(spec) == 0:
        count = int(spec)
        if count < 1:
            raise ValueError(f"angles must be >= 1, got {spec!r}")
        return np.linspace(lo, hi, count) if count > 1 else np.array([lo])
    angles = np.asarray(spec, dtype=float).ravel()
    if angles.size == 0 or not np.isfinite(angles).all():
        raise ValueError("angles must be a non-empty array of finite angles")
    return angles


def _double_search(
    loss: Any,
    is_ood: Any,
    s_r: Any,
    s_g: Any,
    *,
    angles: Any,
    angle_range: tuple[float, float],
    standardize: bool,
    max_exact_work: float,
    solve_rows,
):
    """Evaluate every angle in vectorised chunks; ``solve_rows(sw) -> (value, pos, tau)``."""
    loss, is_ood, s_r = validate(loss, is_ood, s_r, uncertainty_name="s_r")
    s_g = as_finite_1d(s_g, "s_g")
    check_lengths(s_r=s_r, s_g=s_g)
    if standardize:
        scale_r = float(np.std(s_r)) or 1.0
        scale_g = float(np.std(s_g)) or 1.0
    else:
        scale_r = scale_g = 1.0
    n = s_r.size
    a = _angles(angles, angle_range, s_r / scale_r, s_g / scale_g, n, max_exact_work)
    w_r = np.cos(a) / scale_r
    w_g = np.sin(a) / scale_g
    chunk = max(1, _CHUNK_ELEMENTS // n)
    best: tuple[float, DoubleScoreSelection | None] = (np.inf, None)
    for start in range(0, a.size, chunk):
        sl = slice(start, start + chunk)
        scores = w_r[sl, None] * s_r[None, :] + w_g[sl, None] * s_g[None, :]
        sw = _sweep.sweep(scores, is_ood, loss)
        value, position, tau = solve_rows(sw)
        row = int(np.argmin(value))
        if value[row] < best[0]:
            # position -1 (cost model, accept nothing): the smallest score with tau = 0
            thr = float(sw.values[row, max(int(position[row]), 0)])
            best = (
                float(value[row]),
                DoubleScoreSelection(
                    weight_r=float(w_r[sl][row]),
                    weight_g=float(w_g[sl][row]),
                    threshold=thr,
                    accept_prob=float(tau[row]),
                ),
            )
    return best


_DOUBLE_DOC_PARAMS = """
    angles : int, array of float or "exact", default 181
        Angles ``a`` of the directions ``(cos a, sin a)`` tried (B.2): an int gives that many
        equidistant angles over ``angle_range`` (181 over the default quarter circle is the
        paper's step of 0.5 degree, d = 360 over [0, pi]); ``"exact"`` tries one angle per
        distinct ordering of the validation sample (every angle where two distinct points
        swap, and the midpoints between them), which is exact but O(m^2) in the number
        ``m`` of distinct score pairs and refused beyond ``max_exact_work``.
    angle_range : (float, float), default (0, pi/2)
        ``(0, pi/2)`` means ``mu = tan(a)`` in ``[0, +inf]`` (both scores "larger = more
        uncertain", ``a = pi/2`` is ``s_g`` alone, ``a = 0`` is ``s_r`` alone);
        ``(0, pi)`` is the paper's range; ``(0, 2 pi)`` every linear rule.
    standardize : bool, default True
        Divide each score by its validation standard deviation before forming the angle grid
        (the stored weights refer to the raw scores). The set of rules over the quarter
        circle is the same; only the grid's resolution is spread more evenly.
    max_exact_work : float, default 5e7
        Bound on ``orderings x n`` for ``angles="exact"``."""


def _double_params_doc(func):
    """Fill the ``{double_params}`` placeholder of a double-score docstring."""
    func.__doc__ = func.__doc__.replace("    {double_params}", _DOUBLE_DOC_PARAMS.strip("\n"))
    return func


def _double_defaults(kwargs: dict) -> dict:
    return {
        "angles": kwargs.pop("angles", 181),
        "angle_range": kwargs.pop("angle_range", (0.0, np.pi / 2)),
        "standardize": kwargs.pop("standardize", True),
        "max_exact_work": kwargs.pop("max_exact_work", 5e7),
    }


def _check_no_extra(kwargs: dict, func: str) -> None:
    if kwargs:
        raise TypeError(f"{func}() got unexpected keyword arguments {sorted(kwargs)}")


@_double_params_doc
def fit_double_score_tpr_fpr(
    loss: Any,
    is_ood: Any,
    s_r: Any,
    s_g: Any,
    tpr_min: float,
    fpr_max: float,
    *,
    randomize: bool = True,
    **kwargs: Any,
) -> DoubleScoreSelection:
    """Double-score rule ``s_r + mu s_g <= lambda`` tuned for the bounded TPR-FPR model.

    Problem (13) over B.2's double-score family: per angle, threshold and ``tau`` as in
    :func:`fit_bounded_tpr_fpr` (one sweep per angle, vectorised in chunks); the angle of least
    risk wins (ties: the first).

    Parameters
    ----------
    loss, is_ood : array_like, shape (n,)
        Validation losses (ignored for OOD) and OOD indicator.
    s_r, s_g : array_like, shape (n,)
        Misclassification and OOD uncertainty (larger = reject first; Sec. 2.4).
    tpr_min, fpr_max : float in [0, 1]
        phi_min, rho_max.
    randomize : bool, default True
        Randomised boundary (eq. 9); False for deterministic thresholds only.
    **kwargs
        The options of the angle search below; any other keyword raises TypeError.
    {double_params}

    Returns
    -------
    DoubleScoreSelection
        The rule of the best angle, with its threshold and ``tau``.

    Raises
    ------
    ValueError
        Bad input, or ``InfeasibleTargetError`` if no angle and threshold is feasible.

    Examples
    --------
    ``s_r`` alone accepts the OOD sample at 0.1, ``s_g`` alone the error at 0.1; together they
    accept the two correct ID samples only:

    >>> loss, is_ood = [0, 1, float("nan"), float("nan"), 0], [False, False, True, True, False]
    >>> s_r, s_g = [0.1, 0.9, 0.1, 0.2, 0.3], [0.1, 0.1, 0.9, 0.8, 0.2]
    >>> fit_double_score_tpr_fpr(loss, is_ood, s_r, s_g, 0.6, 0.0).acceptance_probability(s_r, s_g)
    array([1., 0., 0., 0., 1.])
    """
    tpr_min, fpr_max = _parameters.check(
        "fit_double_score_tpr_fpr", tpr_min=tpr_min, fpr_max=fpr_max
    )
    opts = _double_defaults(kwargs)
    _check_no_extra(kwargs, "fit_double_score_tpr_fpr")

    def solve(sw):
        b = _sweep.best_constrained(
            sw, _sweep.tpr_fpr_constraints(sw.n_id, sw.n_ood, tpr_min, fpr_max), randomize=randomize
        )
        return b.risk, b.position, b.tau

    value, selection = _double_search(loss, is_ood, s_r, s_g, solve_rows=solve, **opts)
    if selection is None:
        raise InfeasibleTargetError(
            f"infeasible tpr_min={tpr_min!r}, fpr_max={fpr_max!r} for every angle tried"
        )
    return selection


@_double_params_doc
def fit_double_score_precision_recall(
    loss: Any,
    is_ood: Any,
    s_r: Any,
    s_g: Any,
    precision_min: float,
    recall_min: float,
    *,
    ood_prior: float | None = None,
    randomize: bool = True,
    **kwargs: Any,
) -> DoubleScoreSelection:
    """Double-score rule tuned for the bounded precision-recall model, problem (14).

    As :func:`fit_double_score_tpr_fpr` with the constraints of
    :func:`fit_bounded_precision_recall` (Theorem 5, eq. 11).

    Parameters
    ----------
    loss, is_ood, s_r, s_g : array_like, shape (n,)
        As in :func:`fit_double_score_tpr_fpr`.
    precision_min, recall_min : float in [0, 1]
        kappa_min, phi_min.
    ood_prior : float in (0, 1), optional
        pi in the precision; default the sample share of OOD.
    randomize : bool, default True
        Randomised boundary (eq. 11); False for deterministic thresholds only.
    **kwargs
        Angle-search options, as listed below; others raise TypeError.
    {double_params}

    Returns
    -------
    DoubleScoreSelection
        As :func:`fit_double_score_tpr_fpr`.

    Raises
    ------
    ValueError
        As :func:`fit_double_score_tpr_fpr` (``InfeasibleTargetError`` when infeasible).

    Examples
    --------
    >>> loss = [1, 0, 0, float("nan"), float("nan"), 0]
    >>> is_ood = [False, False, False, True, True, False]
    >>> s_r, s_g = [0.8, 0.2, 0.1, 0.3, 0.2, 0.4], [0.3, 0.2, 0.1, 0.7, 0.9, 0.2]
    >>> rule = fit_double_score_precision_recall(loss, is_ood, s_r, s_g, precision_min=0.9, recall_min=0.7)
    >>> rule.acceptance_probability(s_r, s_g)
    array([0., 1., 1., 0., 0., 1.])
    """
    precision_min, recall_min, ood_prior = _parameters.check(
        "fit_double_score_precision_recall",
        precision_min=precision_min,
        recall_min=recall_min,
        ood_prior=ood_prior,
    )
    opts = _double_defaults(kwargs)
    _check_no_extra(kwargs, "fit_double_score_precision_recall")

    def solve(sw):
        cons = _sweep.precision_recall_constraints(
            sw.n_id, sw.n_ood, precision_min, recall_min, ood_prior
        )
        b = _sweep.best_constrained(sw, cons, randomize=randomize)
        return b.risk, b.position, b.tau

    value, selection = _double_search(loss, is_ood, s_r, s_g, solve_rows=solve, **opts)
    if selection is None:
        raise InfeasibleTargetError(
            f"infeasible precision_min={precision_min!r}, recall_min={recall_min!r} for every angle tried"
        )
    return selection


@_double_params_doc
def fit_double_score_cost_based(
    loss: Any,
    is_ood: Any,
    s_r: Any,
    s_g: Any,
    *,
    reject_cost_id: float,
    accept_cost_ood: float,
    reject_cost_ood: float,
    ood_prior: float | None = None,
    **kwargs: Any,
) -> DoubleScoreSelection:
    """Double-score rule minimising the empirical cost-based risk (Definition 1, Theorem 1).

    For true ``s_r = r_B``, ``s_g = g`` the optimum is ``mu = (eps2 - eps3) pi / (1 - pi)``,
    ``lambda = eps1`` (eq. 5); here both are tuned as :func:`fit_cost_based_ood` over B.2's angles
    (deterministic: the risk is linear in the boundary's acceptance probability).

    Parameters
    ----------
    loss, is_ood, s_r, s_g : array_like, shape (n,)
        As in :func:`fit_double_score_tpr_fpr`.
    reject_cost_id, accept_cost_ood, reject_cost_ood : float
        eps1 >= 0, eps2 > eps3 >= 0 of the loss (3).
    ood_prior : float in (0, 1), optional
        pi; default the sample share of OOD.
    **kwargs
        Options of the angle search (below); an unknown keyword raises TypeError.
    {double_params}

    Returns
    -------
    DoubleScoreSelection
        The rule of the best angle; ``accept_prob`` is 1, or 0 when it rejects everything seen.

    Examples
    --------
    >>> s_r, s_g = [0.2, 0.1, 0.9, 0.3], [0.1, 0.9, 0.2, 0.3]
    >>> rule = fit_double_score_cost_based([0, float("nan"), 1, 0], [False, True, False, False], s_r, s_g,
    ...                                    reject_cost_id=0.5, accept_cost_ood=1.0, reject_cost_ood=0.0)
    >>> rule.acceptance_probability(s_r, s_g)
    array([1., 0., 0., 1.])
    """
    eps = _check_costs(
        "fit_double_score_cost_based", reject_cost_id, accept_cost_ood, reject_cost_ood
    )
    (ood_prior,) = _parameters.check("fit_double_score_cost_based", ood_prior=ood_prior)
    opts = _double_defaults(kwargs)
    _check_no_extra(kwargs, "fit_double_score_cost_based")

    def solve(sw):
        value, position = _best_cost(sw, eps, ood_prior)
        tau = np.where(position < 0, 0.0, 1.0)
        return value, position, tau

    _, selection = _double_search(loss, is_ood, s_r, s_g, solve_rows=solve, **opts)
    return selection


def double_score_risk_at_tpr_fpr(
    loss: Any, is_ood: Any, s_r: Any, s_g: Any, tpr_min: float, fpr_max: float, **kwargs: Any
) -> float:
    """Evaluation metric of problem (13) for a double-score method (Table 1, method D).

    Least selective risk of the deterministic double-score family here (``randomize=False``).

    Parameters
    ----------
    loss, is_ood, s_r, s_g : array_like, shape (n,)
        As in :func:`fit_double_score_tpr_fpr`.
    tpr_min, fpr_max : float in [0, 1]
        The bounds phi_min and rho_max of problem (13).
    **kwargs
        Angle-search options of :func:`fit_double_score_tpr_fpr`.

    Returns
    -------
    float
        NaN when no angle is feasible ("unable").
    """
    try:
        sel = fit_double_score_tpr_fpr(
            loss, is_ood, s_r, s_g, tpr_min, fpr_max, randomize=False, **kwargs
        )
    except InfeasibleTargetError:
        return float("nan")
    return _risk_of(sel, loss, is_ood, s_r, s_g)


def double_score_risk_at_precision_recall(
    loss: Any,
    is_ood: Any,
    s_r: Any,
    s_g: Any,
    precision_min: float,
    recall_min: float,
    *,
    ood_prior: float | None = None,
    **kwargs: Any,
) -> float:
    """Evaluation metric of problem (14) for a double-score method (Table 1, method D).

    As :func:`double_score_risk_at_tpr_fpr`, with the constraints of
    :func:`fit_double_score_precision_recall`.

    Parameters
    ----------
    loss, is_ood, s_r, s_g : array_like, shape (n,)
        As in :func:`fit_double_score_tpr_fpr`.
    precision_min, recall_min, ood_prior : float
        As in :func:`fit_double_score_precision_recall`.
    **kwargs
        Angle-search options, as in :func:`double_score_risk_at_tpr_fpr`.

    Returns
    -------
    float
        The smallest selective risk, NaN when infeasible ("unable").
    """
    try:
        sel = fit_double_score_precision_recall(
            loss,
            is_ood,
            s_r,
            s_g,
            precision_min,
            recall_min,
            ood_prior=ood_prior,
            randomize=False,
            **kwargs,
        )
    except InfeasibleTargetError:
        return float("nan")
    return _risk_of(sel, loss, is_ood, s_r, s_g)


def _risk_of(sel: DoubleScoreSelection, loss: Any, is_ood: Any, s_r: Any, s_g: Any) -> float:
    return empirical_rates(loss, is_ood, sel.acceptance_probability(s_r, s_g))["selective_risk"]
