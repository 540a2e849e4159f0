"""Internal: the release gate, a selective risk and a coverage floor certified together.

"Accept only if the selective risk is at most ``a`` AND the coverage at least ``w``, with
probability at least ``1 - delta``": two certified fits joined by a union bound.

* the risk: Learn-then-Test (:func:`fit_certified_risk`, method "ltt") at level
  ``delta * (1 - JOINT_COVERAGE_SHARE)``; every cut of its run of rejections has risk <= ``a``
  on that event (its family-wise error);
* the coverage: the order-statistic cut of :func:`fit_certified_coverage` at level
  ``delta * JOINT_COVERAGE_SHARE``, whose population coverage is >= ``w`` on that event;
* the gate grants the risk fit's cut when it contains the coverage cut: on the intersection of
  the two events (probability >= ``1 - delta``, a union bound) its risk is <= ``a`` and its
  coverage >= that of the coverage cut >= ``w``. Otherwise it refuses.

Why not one intersection-union test per cut (the joint null "risk >= a or coverage < w" in one
fixed sequence, at the whole of delta, with no union bound): the sequence must start at a cut
chosen without the tested rows, and it fails at once where that start covers less than ``w``;
a floor leaves a narrow window of good cuts, which the start rows (5 % of the rows) place with
an error of several points of coverage. Here the risk run may start anywhere below the window:
the floor is checked on the cut it ends at.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty
from .._params import format_level
from ..selective import InfeasibleTargetError
from . import _parameters
from ._audit import AUDIT_COLUMNS, AuditTrail, _trail
from ._fits import (
    START_FRACTION,
    _certificate_error,
    fit_certified_coverage,
    fit_certified_risk,
)
from ._selection import JOINT_METHOD, CertifiedSelection
from ._tails import RISK_TAILS

__all__ = ["JOINT_COVERAGE_SHARE", "fit_certified_gate", "gate_statement"]

#: Share of delta the gate spends on the coverage floor (the rest tests the risk). Chosen by
#: measurement, the grant rate over the 32 cells of ``benchmarks/bench_certified_gate.py``
#: (record ``benchmarks/certified_gate_records.csv``; the Guarantees page gives the figures).
JOINT_COVERAGE_SHARE = 0.1


def fit_certified_gate(
    loss: Any,
    uncertainty: Any,
    target_risk: float,
    min_coverage: float,
    confidence: float,
    *,
    loss_bound: Any = None,
    start_fraction: float = START_FRACTION,
    random_state: Any = 0,
    tail: str = RISK_TAILS[0],
) -> CertifiedSelection:
    """The largest-coverage selection whose selective risk is <= ``target_risk`` and whose
    coverage is >= ``min_coverage``, both together with probability >= ``confidence``.

    .. versionadded:: 0.8.0

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses in [0, B] and uncertainty scores.
    target_risk : float
        The risk bound ``a`` in loss units, in (0, B).
    min_coverage : float
        The coverage floor ``w``, in (0, 1).
    confidence : float
        1 - delta, in (0, 1).
    loss_bound : float or None, default None
        B by the loss's definition; None for the 0/100 loss.
    start_fraction, random_state, tail
        The risk fit's (:func:`fit_certified_risk`, method "ltt").

    Returns
    -------
    CertifiedSelection
        ``method`` :data:`JOINT_METHOD`, ``bound`` and ``risk_bound`` the target risk,
        ``coverage_bound`` the floor.

    Raises
    ------
    InfeasibleTargetError
        The risk fit certifies no cut, or its largest cut does not contain the coverage cut; the
        message says which, with both levels. ``best_bound`` is NaN (no single risk advice
        holds with a floor).
    ValueError
        Bad input, naming it.
    """
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    (confidence, min_coverage) = _parameters.check(
        "fit_certified_gate", confidence=confidence, min_coverage=min_coverage
    )
    confidence, min_coverage = float(confidence), float(min_coverage)
    delta = 1.0 - confidence
    delta_coverage = delta * JOINT_COVERAGE_SHARE
    delta_risk = delta - delta_coverage
    head = (
        f"release gate risk<={float(target_risk):g} and coverage>={min_coverage:g} cannot be "
        f"certified at confidence {format_level(confidence)} on these {loss.size} calibration "
        "rows: "
    )
    coverage = fit_certified_coverage(loss, s, min_coverage, 1.0 - delta_coverage)
    try:
        risk = fit_certified_risk(
            loss,
            s,
            target_risk,
            1.0 - delta_risk,
            loss_bound=loss_bound,
            method="ltt",
            start_fraction=start_fraction,
            random_state=random_state,
            tail=tail,
        )
    except InfeasibleTargetError as err:
        raise _certificate_error(
            f"{head}the risk test (level {delta_risk:.3g}) certifies no cut: {err}",
            **_gate_advice(confidence, loss.size, getattr(err, "rows_needed", 0)),
            audit=_gate_trail(coverage.audit, getattr(err, "audit", None), delta, False),
        ) from None
    granted = _contains(risk, coverage)
    trail = _gate_trail(coverage.audit, risk.audit, delta, granted)
    if not granted:
        accepted = float(risk.acceptance_probability(s).mean())
        raise _certificate_error(
            f"{head}the largest cut whose risk is certified (level {delta_risk:.3g}) accepts "
            f"{accepted:.4g} of the rows, short of the cut that certifies coverage >= "
            f"{min_coverage:g} (level {delta_coverage:.3g}, threshold {coverage.threshold:.6g}); "
            "ask for a higher risk, a lower floor, a lower confidence, or more calibration rows",
            **_gate_advice(confidence, loss.size, 0),
            audit=trail,
        )
    return CertifiedSelection(
        risk.threshold,
        risk.accept_prob,
        bound=risk.bound,
        confidence=confidence,
        n_calibration=int(loss.size),
        method=JOINT_METHOD,
        risk_bound=risk.risk_bound,
        coverage_bound=min_coverage,
        loss_bound=risk.loss_bound,
        audit=trail,
    )


def _contains(risk: CertifiedSelection, coverage: CertifiedSelection) -> bool:
    """Whether the risk fit's cut holds every row the coverage cut accepts.

    The coverage cut accepts ``s <= t_w`` (``accept_prob`` 1, or every row at ``inf``); the risk
    cut ``s < t`` (``accept_prob`` 0) or every row (``inf``).
    """
    if math.isinf(risk.threshold):
        return True
    if math.isinf(coverage.threshold):
        return False
    return bool(coverage.threshold < risk.threshold)


def _gate_advice(confidence: float, n: int, rows_needed: int) -> dict[str, Any]:
    """A refused gate's attributes of a certified target (:func:`._fits._certificate_error`):
    ``best_bound`` NaN, since no single risk is advice once a floor comes with it."""
    return {
        "best_bound": float("nan"),
        "rows_needed": int(rows_needed),
        "confidence": confidence,
        "n_calibration": int(n),
    }


def _gate_trail(
    coverage: AuditTrail | None, risk: AuditTrail | None, delta: float, granted: bool
) -> AuditTrail | None:
    """The gate's trail: the coverage cut's order statistic (its level the coverage share),
    then the risk fit's tests; its stop is the risk fit's cut, and it certifies only where that
    cut contains the coverage cut."""
    parts = [trail for trail in (coverage, risk) if trail is not None]
    if not parts:
        return None
    columns = {
        name: np.concatenate([trail.columns[name] for trail in parts]) for name in AUDIT_COLUMNS[1:]
    }
    reasons = "; ".join(
        f"{label}: {trail.reason}"
        for label, trail in (("coverage", coverage), ("risk", risk))
        if trail is not None
    )
    verdict = "granted" if granted else "refused"
    reason = f"{reasons}; gate {verdict} (the risk's cut {'contains' if granted else 'misses'} the coverage cut)"
    n_tested = risk.n_tested if risk is not None else coverage.n_tested  # type: ignore[union-attr]
    return _trail(JOINT_METHOD, delta, reason, n_tested, granted, **columns)


def gate_statement(certificate: dict, unit: str) -> str:
    """A release gate's guarantee as one sentence: the gate theorem of the Guarantees page.

    ``select``'s ``report.md`` and :attr:`rejectopt.SelectiveClassifier.report_` both state it
    from here (read from :mod:`rejectopt.model`, which re-exports it): the risk bound and the
    coverage floor hold *together*, at the one level ``confidence`` (a union bound).
    ``certificate`` is the gate's
    :attr:`~rejectopt.targets.CertifiedSelection.certificate`, ``unit`` the risk's (``"%"`` for
    the 0/100 loss, ``"MAE"``).

    .. versionadded:: 0.8.0
    """
    return (
        f"With probability at least {format_level(certificate['confidence'])} over the draw of "
        f"the {certificate['n_calibration']} calibration rows, the population's selective risk is "
        f"at most {certificate['risk_bound']:.4g} {unit} and its coverage at least "
        f"{certificate['coverage_bound']:.4g}, together (the release gate: a union bound)."
    )
