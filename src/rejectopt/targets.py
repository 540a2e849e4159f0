"""What a selective classifier is fitted for: the rejection model and its parameter.

:class:`Target`: one of the three rejection models of Franc, Prusa & Voracek (2023, Sec. 2);
:class:`OODTarget`: one of :mod:`rejectopt.ood`'s. :func:`parse_target` reads the CLI's text,
and the dict a target's ``to_dict`` writes to the model file. A plug-in target fits with the
strategies of :mod:`rejectopt.selective` and :mod:`rejectopt.ood`, a certified one (with a
confidence) with the certification's (``rejectopt._certify``); none of them knows of targets
but the certification's checks of a certified target on the user's rows,
:func:`certification_table` and :func:`validate_target`, and its per-group fit,
:func:`fit_certified_groups`, which are read from here.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._certify import (
    AuditTrail,
    CertifiedSelection,
    GroupSelection,
    certification_table,
    fit_certified_coverage,
    fit_certified_gate,
    fit_certified_groups,
    fit_certified_risk,
    fit_certified_tpr_fpr,
    validate_target,
)
from ._checks import check_confidence
from ._params import Interval, format_level, validate_params
from .ood import fit_bounded_precision_recall, fit_bounded_tpr_fpr
from .ood._metrics import operating_points
from .ood._validation import CONSTRAINT_TOL
from .selective import (
    InfeasibleTargetError,
    SelectionFunction,
    fit_bounded_abstention,
    fit_bounded_improvement,
    fit_cost_based,
)

__all__ = [
    "Target",
    "OODTarget",
    "parse_target",
    "CertifiedSelection",
    "AuditTrail",
    "GroupSelection",
    "certification_table",
    "fit_certified_groups",
    "validate_target",
]


def _normal_kind(kind: Any) -> Any:
    """A kind as written (``Reject_Cost``) in its one spelling (``reject-cost``); a non-text kind as it is."""
    return kind.strip().lower().replace("_", "-") if isinstance(kind, str) else kind


#: The value each kind of :class:`Target` allows, declared once (``validate_params``).
_TARGET_VALUES = {
    "coverage": Interval(0, 1, closed="right"),
    "risk": Interval(0, None, label="a finite number > 0 (loss units)"),
    "reject-cost": Interval(0, None, closed="left"),
}


#: A release gate's coverage floor (1 is refused apart, with its own advice).
_GATE_FLOOR = {"min_coverage": Interval(0, 1)}


@dataclass(frozen=True, repr=False)
class Target:
    """What a selection function is fitted for: a plug-in target or, with a confidence, a certified one.

    Parameters
    ----------
    kind : {"coverage", "risk", "reject-cost"}
        Bounded abstention (:func:`fit_bounded_abstention`), bounded improvement
        (:func:`fit_bounded_improvement`) or the cost-based model (:func:`fit_cost_based`:
        minimise risk + value * rejection rate). Read in any case, ``_`` for ``-``
        (``"Reject_Cost"``), and stored as one of :attr:`KINDS`.
    value : float
        Coverage in (0, 1], selective risk > 0 in loss units (percent for the 0/100 loss), or
        reject cost >= 0; stored as a float.
    confidence : float or None, default None
        None: the plug-in target, met on the calibration rows. ``1 - delta`` in (0, 1): a
        certified target, met by the *population* with probability >= ``confidence`` over an
        i.i.d. calibration sample (the user guide's "Guarantees"); :meth:`fit` then returns a
        :class:`CertifiedSelection`. The reject-cost model has no certified form.

        .. versionchanged:: 0.4.0
           Text, a bool, NaN, 0 and 1 are refused.
    min_coverage : float or None, default None
        A certified risk target's coverage floor in (0, 1): the release gate "risk <= value AND
        coverage >= min_coverage", both together with probability >= ``confidence``
        (:func:`rejectopt._certify.fit_certified_gate`). Written ``risk=A,min_coverage=W``
        before the confidence in text.

        .. versionadded:: 0.8.0

    Attributes
    ----------
    KINDS : tuple of str
        The kinds: ``("coverage", "risk", "reject-cost")``.

    Raises
    ------
    ValueError
        An unknown kind, a value that is not a number or out of the kind's range, or a
        confidence outside (0, 1) or with ``reject-cost``.

    Examples
    --------
    >>> target = Target("coverage", 0.75)
    >>> str(target)
    'coverage=0.75'
    >>> target.fit(loss=[0, 0, 1, 0, 1, 1], uncertainty=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    SelectionFunction(threshold=0.5, accept_prob=0.5)
    >>> Target("coverage", 1.5)
    Traceback (most recent call last):
        ...
    rejectopt.exceptions.InvalidParameterError: target: coverage must be a number in (0, 1], got 1.5
    """

    KINDS: ClassVar[tuple[str, ...]] = ("coverage", "risk", "reject-cost")

    kind: str
    value: float
    confidence: float | None = None
    min_coverage: float | None = None

    def __post_init__(self) -> None:
        kind = _normal_kind(self.kind)
        if kind not in self.KINDS:
            raise ValueError(
                f"target kind must be one of {', '.join(map(repr, self.KINDS))}, got {self.kind!r}"
            )
        object.__setattr__(self, "kind", kind)
        try:
            number = float(self.value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"target {self.kind}: {reprlib.repr(self.value)} is not a number"
            ) from None
        validate_params("target", {self.kind: number}, _TARGET_VALUES)
        object.__setattr__(self, "value", number)
        if self.confidence is not None:
            if self.kind == "reject-cost":
                raise ValueError(
                    "target reject-cost has no certified form (no guarantee is defined for the "
                    "cost-based model): drop the confidence, or certify risk=L or coverage=W"
                )
            object.__setattr__(self, "confidence", check_confidence(self.confidence))
        if self.min_coverage is not None:
            if self.kind != "risk" or self.confidence is None:
                raise ValueError(
                    "target min_coverage is the floor of a certified risk target (a release "
                    "gate): give it with risk=A and a confidence, e.g. "
                    "Target('risk', 5, confidence=0.9, min_coverage=0.5)"
                )
            if self.min_coverage == 1:
                raise ValueError(
                    "target min_coverage=1 leaves the full set only, whose risk is the target "
                    f"with no floor: use Target('risk', {self.value:g}, confidence="
                    f"{format_level(self.confidence)})"
                )
            validate_params("target", {"min_coverage": self.min_coverage}, _GATE_FLOOR)
            object.__setattr__(self, "min_coverage", float(self.min_coverage))

    def fit(
        self,
        loss: Any,
        uncertainty: Any,
        *,
        loss_bound: Any = None,
        method: str | None = None,
        tail: str | None = None,
    ) -> SelectionFunction:
        """Fit the selection function on calibration ``loss`` and ``uncertainty``.

        Plug-in (no confidence): eqs. 15-16 / 22-24 / Chow's rule on the rows. Certified: risk
        by Learn-then-Test fixed-sequence testing (``method="ltt"``, the default) or SGR
        (``"sgr"``, 0/B losses), coverage by order statistics; deterministic thresholds.

        Parameters
        ----------
        loss, uncertainty : array_like of shape (n,)
            Calibration losses and uncertainty scores.
        loss_bound : float or None, default None
            Certified risk only: the largest loss a prediction can have by the loss's definition
            (100 for the 0/100 loss, K - 1 for the MAE on K ordinal labels). None accepts 0/100
            losses only.
        method : {"ltt", "sgr"} or None, default None
            Certified risk only; None is "ltt".
        tail : {"auto", "hb", "betting"} or None, default None
            Certified only, a loss that is not 0/B: the tail bound of the risk, Hoeffding-Bentkus
            ("hb") or the variance-adaptive betting bound ("betting"); None is "auto", the
            betting bound. 0/B losses keep the exact binomial tail.

        Returns
        -------
        SelectionFunction or CertifiedSelection
            The latter with a confidence: ``bound``, ``confidence``, ``n_calibration``, ``method``.

        Raises
        ------
        InfeasibleTargetError
            A risk target the rows cannot meet (certified: ``best_bound`` is a target risk the
            same method certifies on the same rows, ``rows_needed`` the tested rows an error-free
            sample needs), or a tpr-fpr FPR bound above the target.
        """
        tails: dict[str, Any] = {} if tail is None else {"tail": tail}
        if self.min_coverage is not None:
            if method not in (None, "ltt"):
                raise ValueError(
                    f"method {method!r}: a release gate's risk is certified by 'ltt' only"
                )
            assert self.confidence is not None  # __post_init__: a floor comes with a confidence
            return fit_certified_gate(
                loss,
                uncertainty,
                self.value,
                self.min_coverage,
                self.confidence,
                loss_bound=loss_bound,
                **tails,
            )
        if self.confidence is not None:
            if self.kind == "coverage":
                return fit_certified_coverage(
                    loss, uncertainty, self.value, self.confidence, loss_bound=loss_bound, **tails
                )
            return fit_certified_risk(
                loss,
                uncertainty,
                self.value,
                self.confidence,
                loss_bound=loss_bound,
                method=method,
                **tails,
            )
        if method is not None:
            raise ValueError(
                f"method {method!r} applies to a certified risk target only: give the target a confidence"
            )
        if tail is not None:
            raise ValueError(
                f"tail {tail!r} applies to a certified target only: give the target a confidence"
            )
        if self.kind == "coverage":
            return fit_bounded_abstention(loss, uncertainty, self.value)
        if self.kind == "risk":
            return fit_bounded_improvement(loss, uncertainty, self.value)
        return fit_cost_based(loss, uncertainty, self.value)

    def __str__(self) -> str:
        text = f"{self.kind}={self.value:g}"
        if self.min_coverage is not None:
            text += f",min_coverage={self.min_coverage:g}"
        return (
            text
            if self.confidence is None
            else f"{text},confidence={format_level(self.confidence)}"
        )

    def __repr__(self) -> str:
        extra = "" if self.confidence is None else f", confidence={self.confidence!r}"
        if self.min_coverage is not None:
            extra += f", min_coverage={self.min_coverage!r}"
        return f"Target(kind={self.kind!r}, value={self.value!r}{extra})"

    def to_dict(self) -> dict[str, Any]:
        """The target as ``model.json`` and ``report.json`` hold it; :func:`parse_target` reads it back.

        Returns
        -------
        dict
            ``{"kind": ..., "value": ...}``, with ``"confidence"`` for a certified target; JSON-able.
        """
        data = _with_confidence({"kind": self.kind, "value": self.value}, self.confidence)
        if self.min_coverage is not None:
            data["min_coverage"] = self.min_coverage
        return data


def _with_confidence(data: dict[str, Any], confidence: float | None) -> dict[str, Any]:
    """``data`` with ``"confidence"`` when the target is certified (``to_dict`` of both target classes)."""
    if confidence is not None:
        data["confidence"] = confidence
    return data


#: Target kinds of the OOD rejection models (Franc, Prusa & Paplham): bounded TPR-FPR (Theorem 3)
#: and bounded precision-recall (Theorem 5), each with its two bounds in text order.
_OOD_TARGET_KINDS = {"tpr-fpr": ("tpr", "fpr"), "precision-recall": ("precision", "recall")}
_OOD_TARGET_FORMS = "tpr=T,fpr=F or precision=P,recall=R"
_ALL_TARGET_FORMS = f"coverage=W, risk=L, reject-cost=E, {_OOD_TARGET_FORMS}"


@dataclass(frozen=True, repr=False)
class OODTarget:
    """A target of a reject option model with out-of-distribution (OOD) inputs.

    Parameters
    ----------
    kind : {"tpr-fpr", "precision-recall"}
        :func:`rejectopt.ood.fit_bounded_tpr_fpr` (smallest selective risk of accepted ID
        inputs s.t. TPR = ID share accepted >= ``bounds[0]``, FPR = OOD share accepted
        <= ``bounds[1]``) or :func:`rejectopt.ood.fit_bounded_precision_recall` (ID share of
        the accepted >= ``bounds[0]``, with the sample's OOD share as prior; recall = TPR >=
        ``bounds[1]``).
    bounds : tuple of (float, float)
        ``(tpr, fpr)`` or ``(precision, recall)``, each in [0, 1]; stored as floats.
    confidence : float or None, default None
        None: the bounds hold on the calibration rows. ``1 - delta``: tpr-fpr only, both bounds
        hold for the population with probability >= ``confidence`` (:class:`CertifiedSelection`).

        .. versionchanged:: 0.4.0
           Text, a bool, NaN, 0 and 1 are refused.

    Attributes
    ----------
    KINDS : tuple of str
        The kinds: ``("tpr-fpr", "precision-recall")``.

    Raises
    ------
    ValueError
        An unknown kind, not two bounds, a bound that is not a number in [0, 1], or a
        confidence outside (0, 1) or with precision-recall.

    Examples
    --------
    Five ID rows and five OOD rows; the OOD row of uncertainty 0.35 cannot be told from the ID
    ones:

    >>> import numpy as np
    >>> is_ood = np.array([False] * 5 + [True] * 5)
    >>> uncertainty = np.array([0.1, 0.2, 0.3, 0.4, 0.9, 0.5, 0.6, 0.7, 0.8, 0.35])
    >>> target = OODTarget("tpr-fpr", (0.8, 0.2))
    >>> str(target), target.as_dict()
    ('tpr=0.8,fpr=0.2', {'tpr': 0.8, 'fpr': 0.2})
    >>> target.fit(np.zeros(10), is_ood, uncertainty)
    SelectionFunction(threshold=0.4, accept_prob=1.0)
    >>> target.attainable(is_ood, uncertainty)
    {'fpr_at_tpr': 0.2, 'tpr_at_fpr': 0.8}
    """

    KINDS: ClassVar[tuple[str, ...]] = tuple(_OOD_TARGET_KINDS)

    kind: str
    bounds: tuple
    confidence: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in _OOD_TARGET_KINDS:
            raise ValueError(f"target must be {_OOD_TARGET_FORMS}, got kind {self.kind!r}")
        bounds = tuple(self.bounds)
        if len(bounds) != 2:
            raise ValueError(
                f"target {self.kind} needs two bounds ({', '.join(self.names)}), got {len(bounds)}"
            )
        rate = Interval(0, 1, closed="both")
        validate_params("target", dict(zip(self.names, bounds)), dict.fromkeys(self.names, rate))
        object.__setattr__(self, "bounds", tuple(float(value) for value in bounds))
        if self.confidence is not None:
            if self.kind != "tpr-fpr":
                raise ValueError(
                    "target precision-recall has no certified form (the precision's prior is the "
                    "sample's OOD share): drop the confidence, or certify tpr=T,fpr=F"
                )
            object.__setattr__(self, "confidence", check_confidence(self.confidence))

    def __repr__(self) -> str:
        extra = "" if self.confidence is None else f", confidence={self.confidence!r}"
        return f"OODTarget(kind={self.kind!r}, bounds={self.bounds!r}{extra})"

    @property
    def names(self) -> tuple[str, str]:
        """``("tpr", "fpr")`` or ``("precision", "recall")``."""
        return _OOD_TARGET_KINDS[self.kind]

    def as_dict(self) -> dict[str, float]:
        """``{"tpr": 0.8, "fpr": 0.2}`` or ``{"precision": 0.9, "recall": 0.7}``."""
        return dict(zip(self.names, self.bounds))

    def __str__(self) -> str:
        text = ",".join(f"{name}={value:g}" for name, value in self.as_dict().items())
        return (
            text
            if self.confidence is None
            else f"{text},confidence={format_level(self.confidence)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The target as ``model.json`` and ``report.json`` hold it; :func:`parse_target` reads it back.

        Returns
        -------
        dict
            ``{"kind": ..., "value": {"tpr": T, "fpr": F}}`` (or precision and recall), with
            ``"confidence"`` for a certified target; JSON-able.
        """
        return _with_confidence({"kind": self.kind, "value": self.as_dict()}, self.confidence)

    def met(self, rates: dict) -> dict[str, bool]:
        """Whether each bound holds for ``rates`` (keyed by :attr:`names`); NaN does not.

        FPR is an upper bound, the others lower; tolerance ``CONSTRAINT_TOL``, as the strategies.
        """
        out = {}
        for name, bound in self.as_dict().items():
            value = float(rates[name])
            out[name] = bool(
                value <= bound + CONSTRAINT_TOL
                if name == "fpr"
                else value >= bound - CONSTRAINT_TOL
            )
        return out

    def fit(self, loss: Any, is_ood: Any, uncertainty: Any) -> SelectionFunction:
        """Fit the optimal selection function on calibration rows (Theorem 3 or 5 of the OOD paper).

        OOD rows' ``loss`` is ignored (may be NaN); the bounds hold for the expected rates, or
        with a confidence for the population (a :class:`CertifiedSelection`, ``bound`` the FPR's
        upper bound, ``coverage_bound`` the TPR's lower bound).

        Raises
        ------
        InfeasibleTargetError
            No threshold meets both bounds while accepting an ID input (the paper's "unable");
            the message says what the rows allow (:meth:`attainable`).
        ValueError
            Bad input (no ID or no OOD rows, NaN, lengths), from :mod:`rejectopt.ood`.
        """
        if self.confidence is not None:
            tpr_min, fpr_max = self.bounds
            return fit_certified_tpr_fpr(
                loss, is_ood, uncertainty, tpr_min, fpr_max, self.confidence
            )
        fit = fit_bounded_tpr_fpr if self.kind == "tpr-fpr" else fit_bounded_precision_recall
        try:
            return fit(loss, is_ood, uncertainty, *self.bounds)
        except InfeasibleTargetError:
            pass  # described below with what the rows allow; bad input (a plain ValueError) propagates
        is_ood = np.asarray(is_ood).astype(bool)  # valid: the strategy checked it
        attainable = self.attainable(is_ood, uncertainty)
        raise InfeasibleTargetError(
            f"target {self} is infeasible on these {is_ood.size} rows "
            f"({int((~is_ood).sum())} ID, {int(is_ood.sum())} OOD): "
            f"{self.describe_attainable(attainable)}; the strategy is unable"
        )

    def attainable(self, is_ood: Any, uncertainty: Any) -> dict[str, float]:
        """What the rows allow for each bound, given the other, with randomised thresholds.

        ``fpr_at_tpr`` / ``tpr_at_fpr``, or ``precision_at_recall`` (NaN if nothing is
        accepted) / ``recall_at_precision`` (0 if unreachable). The ROC points are interpolated:
        rates are linear in a tie group's acceptance probability.
        """

        is_ood = np.asarray(is_ood, dtype=bool)
        points = operating_points(np.zeros(is_ood.size), is_ood, uncertainty)
        n_id, n_ood = int((~is_ood).sum()), int(is_ood.sum())
        tpr, fpr = points.tpr, points.fpr
        if self.kind == "tpr-fpr":
            tpr_min, fpr_max = self.bounds
            return {
                "fpr_at_tpr": _fpr_at_tpr(tpr, fpr, tpr_min),
                "tpr_at_fpr": _tpr_at_fpr(tpr, fpr, fpr_max),
            }
        precision_min, recall_min = self.bounds
        A, F = tpr * n_id, fpr * n_ood
        candidates = [A[1:][tpr[1:] >= recall_min], F[1:][tpr[1:] >= recall_min]]
        if recall_min > 0:
            candidates = [
                np.append(candidates[0], recall_min * n_id),
                np.append(candidates[1], _fpr_at_tpr(tpr, fpr, recall_min) * n_ood),
            ]
        accepted = candidates[0] + candidates[1]
        with np.errstate(invalid="ignore", divide="ignore"):
            precisions = np.where(accepted > 0, candidates[0] / accepted, np.nan)
        best_precision = (
            float(np.nanmax(precisions)) if np.isfinite(precisions).any() else float("nan")
        )
        # largest A on each segment between consecutive points with (1 - p) A - p F >= 0 (linear in tau)
        g = (1.0 - precision_min) * A - precision_min * F
        g0, g1 = g[:-1], g[1:]
        tol = 1e-12 * max(n_id, n_ood)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(g1 >= -tol, 1.0, np.where(g0 >= -tol, g0 / (g0 - g1), np.nan))
        reach = A[:-1] + t * (A[1:] - A[:-1])
        best_recall = float(np.nanmax(reach)) / n_id if np.isfinite(reach).any() else 0.0
        return {"precision_at_recall": best_precision, "recall_at_precision": best_recall}

    def describe_attainable(self, attainable: dict) -> str:
        """One phrase: what the rows allow for this target, as the error of an infeasible one says it.

        Parameters
        ----------
        attainable : dict of str to float
            :meth:`attainable` of the rows.

        Returns
        -------
        str
            E.g. ``at TPR >= 0.8 the smallest attainable FPR is 0.2, at FPR <= 0.2 the largest
            attainable TPR is 0.8``.
        """

        def fmt(value):
            return "nothing" if math.isnan(value) else f"{value:.4g}"

        if self.kind == "tpr-fpr":
            tpr_min, fpr_max = self.bounds
            return (
                f"at TPR >= {tpr_min:g} the smallest attainable FPR is {fmt(attainable['fpr_at_tpr'])}, "
                f"at FPR <= {fpr_max:g} the largest attainable TPR is {fmt(attainable['tpr_at_fpr'])}"
            )
        precision_min, recall_min = self.bounds
        return (
            f"at recall >= {recall_min:g} the largest attainable precision is "
            f"{fmt(attainable['precision_at_recall'])}, at precision >= {precision_min:g} the largest "
            f"attainable recall is {fmt(attainable['recall_at_precision'])}"
        )


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
    for kind, names in _OOD_TARGET_KINDS.items():
        if set(names) == set(values):
            return OODTarget(kind, tuple(values[name] for name in names))
        if set(values) < set(names):
            missing = (set(names) - set(values)).pop()
            raise ValueError(
                f"target {text!r} needs {missing} as well: {','.join(f'{n}=...' for n in names)}"
            )
    raise ValueError(
        f"target must be {_OOD_TARGET_FORMS}, got {text!r} (the bounds of two models mixed)"
    )


def _target_of_dict(data: dict) -> Target | OODTarget:
    """The target of a ``to_dict()`` dict (``model.json``'s ``target``), for untrusted input: ValueError naming the
    malformed part."""
    if set(data) not in (
        {"kind", "value"},
        {"kind", "value", "confidence"},
        {"kind", "value", "confidence", "min_coverage"},
    ):
        raise ValueError(
            "target must be an object with keys kind and value (and optionally confidence, "
            "then min_coverage)"
        )
    floor = data.get("min_coverage")
    if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float))):
        raise ValueError(
            f"target.min_coverage must be a number in (0, 1), got {reprlib.repr(floor)}"
        )
    kind, value = data["kind"], data["value"]
    confidence = data.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, (int, float))
    ):
        raise ValueError(
            f"target.confidence must be a number in (0, 1), got {reprlib.repr(confidence)}"
        )
    if not isinstance(kind, str):
        raise ValueError("target must hold a kind (text) and a value")
    if kind in OODTarget.KINDS:
        names = _OOD_TARGET_KINDS[kind]
        if not isinstance(value, dict) or set(value) != set(names):
            raise ValueError(
                f"target.value of kind {kind} must be an object with keys {' and '.join(names)}"
            )
        return OODTarget(kind, tuple(value[name] for name in names), confidence)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("target must hold a kind (text) and a value (number)")
    return Target(kind, value, confidence, floor)


def _is_gate(parts: list[str]) -> bool:
    """Whether a target's comma-separated parts are ``risk=A,min_coverage=W`` (a release gate)."""
    return len(parts) == 2 and parts[1].partition("=")[0].strip().lower() == "min_coverage"


def _parse_gate(text: str, parts: list[str], confidence: float | None) -> Target:
    """``risk=A,min_coverage=W`` of a ``--target`` with its ``confidence`` (None: refused by
    :class:`Target`, which names what a floor needs)."""
    head = parse_target(parts[0])
    value = parts[1].partition("=")[2].strip()
    try:
        floor = float(value)
    except ValueError:
        raise ValueError(f"target min_coverage: {value!r} is not a number") from None
    if not isinstance(head, Target) or head.kind != "risk":
        raise ValueError(
            f"target {text!r}: min_coverage is the floor of a risk target, e.g. "
            "risk=5,min_coverage=0.5,confidence=0.9"
        )
    return Target("risk", head.value, confidence, floor)


def parse_target(spec: str | dict) -> Target | OODTarget:
    """Read a target as the CLI's ``--target`` or a model file writes it: a :class:`Target` or an :class:`OODTarget`.

    .. versionchanged:: 0.4.0
       A target string giving ``confidence=`` twice is refused.

    Parameters
    ----------
    spec : str or dict
        Text as ``--target``: ``coverage=0.8``, ``risk=5``, ``reject-cost=10`` (or
        ``reject_cost``); ``tpr=0.8,fpr=0.2`` or ``precision=0.9,recall=0.7`` (either order);
        any of them may end in ``,confidence=C`` (a certified target, as ``str`` writes it).
        Or the dict of the target's ``to_dict()`` (``model.json``'s ``target``), ``value`` a
        number or, for the OOD kinds, ``{"tpr": T, "fpr": F}`` / ``{"precision": P, "recall": R}``.

    Returns
    -------
    Target or OODTarget
        The target.

    Raises
    ------
    ValueError
        Unknown kind, missing or repeated bound or confidence, non-number or out-of-range value,
        or a malformed dict; the message starts with ``target``.

    Examples
    --------
    >>> parse_target("coverage=0.8"), parse_target("reject_cost=10")
    (Target(kind='coverage', value=0.8), Target(kind='reject-cost', value=10.0))
    >>> parse_target("recall=0.7,precision=0.9")
    OODTarget(kind='precision-recall', bounds=(0.9, 0.7))
    >>> parse_target("coverage=2")
    Traceback (most recent call last):
        ...
    rejectopt.exceptions.InvalidParameterError: target: coverage must be a number in (0, 1], got 2.0
    >>> parse_target({"kind": "risk", "value": 5, "confidence": 0.9}) == Target("risk", 5, confidence=0.9)
    True
    """
    if isinstance(spec, dict):
        return _target_of_dict(spec)
    text = str(spec)
    parts = text.split(",")
    confidence = None
    if sum(part.partition("=")[0].strip().lower() == "confidence" for part in parts) > 1:
        raise ValueError(
            f"target {text!r} gives confidence more than once: give it once, e.g. risk=5,confidence=0.95"
        )
    if len(parts) > 1 and parts[-1].partition("=")[0].strip().lower() == "confidence":
        value = parts.pop().partition("=")[2].strip()
        try:
            confidence = float(value)
        except ValueError:
            raise ValueError(f"target confidence: {value!r} is not a number") from None
        check_confidence(confidence)
        if _is_gate(parts):
            return _parse_gate(text, parts, confidence)
        target = parse_target(",".join(parts))
        if isinstance(target, OODTarget):
            return OODTarget(target.kind, target.bounds, confidence)
        return Target(target.kind, target.value, confidence)
    if _is_gate(parts):
        return _parse_gate(text, parts, None)
    first = parts[0].partition("=")[0].strip().lower()
    if len(parts) > 1 or first in ("tpr", "fpr", "precision", "recall"):
        return _parse_ood_target(text, parts)
    kind, sep, value = text.partition("=")
    kind = _normal_kind(kind)
    if not sep or kind not in Target.KINDS:
        raise ValueError(f"target must be {_ALL_TARGET_FORMS}, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"target {kind}: {value!r} is not a number") from None
    return Target(kind, number)
