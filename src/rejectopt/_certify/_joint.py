"""Internal: the release gate, a selective risk and a coverage floor certified together.

"Accept only if the selective risk is at most ``a`` AND the coverage at least ``w``, with
probability at least ``1 - delta``": the coverage floor's order statistic, then the risk's
fixed-sequence test starting just below it, joined by a union bound.

* the coverage: the order-statistic cut ``{s <= s_(k)}`` of :func:`fit_certified_coverage` at
  level ``delta * JOINT_COVERAGE_SHARE``, whose population coverage is >= ``w`` on that event;
* the risk: fixed-sequence testing of "risk >= a" on every row, at level
  ``delta * (1 - JOINT_COVERAGE_SHARE)``, over the cuts of the sorted distinct scores from the
  one just below the coverage cut's score (``{s < s_(k)}``) upwards, stopping at the first
  non-rejection;
* the gate grants the run's largest rejected cut when it contains the coverage cut; otherwise it
  refuses.

Why the run starts one cut *below* the coverage cut, and why no rows are held out to place it:
the Guarantees page proves that the risk run's family-wise error stays within its level although
its start is the tested rows' own order statistic. The proof conditions on the counts of rows
below the population cuts where the risk crosses ``a``; given them, each stretch's rows are
i.i.d. with mean at least ``a``. The cut ``{s < s_(k)}`` is the one whose rows, given ``s_(k)``,
are an i.i.d. sample of that cut's population; the cut at ``s_(k)`` itself also holds the order
statistic's own row, which is not. Learn-then-Test's start rows (:func:`fit_certified_risk`)
placed the run with an error of several points of coverage at a few hundred rows; starting at the
order statistic grants the gate more often in every cell of ``benchmarks/bench_certified_gate.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty
from .._params import format_level
from ..selective import InfeasibleTargetError
from . import _parameters
from ._audit import AUDIT_COLUMNS, AuditTrail, _trail, fixed_sequence_run, fixed_sequence_trail
from ._fits import (
    _certificate_error,
    _check_target_risk,
    _prefix_sums,
    _resolve_loss_bound,
    _resolve_tail,
    _rows_needed,
    fit_certified_coverage,
)
from ._selection import JOINT_METHOD, CertifiedSelection
from ._tails import RISK_TAILS, _prefix_moments, _risk_pvalue, _tail_keywords

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
    tail: str = RISK_TAILS[0],
) -> CertifiedSelection:
    """The largest-coverage selection whose selective risk is <= ``target_risk`` and whose
    coverage is >= ``min_coverage``, both together with probability >= ``confidence``.

    .. versionadded:: 0.8.0
    .. versionchanged:: 0.9.0
       The risk's fixed sequence starts just below the coverage cut, on every row, instead of
       where held-out start rows pointed: ``start_fraction`` and ``random_state`` are gone.

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
    tail : {"auto", "hb", "betting"}, default "auto"
        The risk tests' p-value for losses that are not 0/B (0/B losses keep the exact
        binomial): Hoeffding-Bentkus, betting, or "auto", the smaller of the two doubled (no
        rows are held out to choose between them).

    Returns
    -------
    CertifiedSelection
        ``method`` :data:`JOINT_METHOD`, ``bound`` and ``risk_bound`` the target risk,
        ``coverage_bound`` the floor.

    Raises
    ------
    InfeasibleTargetError
        The risk's run rejects no cut, or stops below the coverage cut; the message says which,
        with both levels. ``best_bound`` is NaN (no single risk advice holds with a floor).
    ValueError
        Bad input, naming it.
    """
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    (confidence, min_coverage) = _parameters.check(
        "fit_certified_gate", confidence=confidence, min_coverage=min_coverage
    )
    confidence, min_coverage = float(confidence), float(min_coverage)
    bound, binary = _resolve_loss_bound(loss, loss_bound, "fit_certified_gate")
    target_risk = _check_target_risk(target_risk, bound)
    tail = _resolve_tail(tail, binary, "fit_certified_gate")
    delta = 1.0 - confidence
    delta_coverage = delta * JOINT_COVERAGE_SHARE
    delta_risk = delta - delta_coverage
    coverage = fit_certified_coverage(loss, s, min_coverage, 1.0 - delta_coverage)
    values, trials, sums = _prefix_sums(loss, s)
    moments = _prefix_moments(loss, s) if tail != "hb" else {}
    pvalues = _risk_pvalue(
        sums, trials, target_risk, bound, binary, **_tail_keywords(tail, moments)
    )
    # the coverage cut's distinct score (the full set where no order statistic certifies w)
    # and where the run starts: the cut just below it (the full set alone where w needs all rows)
    if math.isinf(coverage.threshold):
        cover = first = values.size - 1
    else:
        cover = int(np.searchsorted(values, coverage.threshold))
        first = max(cover - 1, 0)
        if cover == 0 and trials[0] < 2:
            # Below the most confident score there is no cut; its block may start the run only
            # as a tied block of rows (the proof's i.i.d. rows of a population atom), not as the
            # one order statistic whose loss has the boundary's mean.
            raise _certificate_error(
                f"release gate risk<={target_risk:g} and coverage>={min_coverage:g} cannot be "
                f"certified at confidence {format_level(confidence)} on these {loss.size} "
                f"calibration rows: the floor {min_coverage:g} is met by the single most "
                "confident row, and the risk's run must start at a cut below the coverage cut; "
                "ask for a higher floor, or omit min_coverage",
                **_gate_advice(confidence, loss.size, 0),
                audit=coverage.audit,
            )
    run = fixed_sequence_run(pvalues, first, delta_risk)
    end = run[0]
    granted = end >= cover
    risk_trail = fixed_sequence_trail(
        values, trials, sums, pvalues, first, run, delta_risk, delta_risk
    )
    trail = _gate_trail(coverage.audit, risk_trail, delta, granted)
    if not granted:
        raise _refusal(
            target_risk,
            min_coverage,
            confidence,
            loss.size,
            values,
            first,
            end,
            coverage,
            trail,
            _rows_needed(target_risk, delta_risk, bound) if end < first else 0,
        )
    threshold, accept_prob = (
        (math.inf, 1.0) if end == values.size - 1 else (float(values[end + 1]), 0.0)
    )
    return CertifiedSelection(
        threshold,
        accept_prob,
        bound=target_risk,
        confidence=confidence,
        n_calibration=int(loss.size),
        method=JOINT_METHOD,
        risk_bound=target_risk,
        coverage_bound=min_coverage,
        loss_bound=bound,
        audit=trail,
    )


def _refusal(
    target_risk: float,
    min_coverage: float,
    confidence: float,
    n: int,
    values: np.ndarray,
    first: int,
    end: int,
    coverage: CertifiedSelection,
    trail: AuditTrail | None,
    rows_needed: int,
) -> InfeasibleTargetError:
    """The refused gate's error: which part failed, at which level, and what to ask instead."""
    delta = 1.0 - confidence
    delta_coverage = delta * JOINT_COVERAGE_SHARE
    delta_risk = delta - delta_coverage
    head = (
        f"release gate risk<={target_risk:g} and coverage>={min_coverage:g} cannot be "
        f"certified at confidence {format_level(confidence)} on these {n} calibration rows: "
    )
    floor = (
        f"the cut that certifies coverage >= {min_coverage:g} (level {delta_coverage:.3g}, "
        f"threshold {coverage.threshold:.6g})"
    )
    if end < first:
        why = (
            f"the risk test (level {delta_risk:.3g}) certifies no cut: its fixed sequence, "
            f"from the cut just below {floor}, is not rejected at its first cut "
            f"(scores <= {values[first]:.6g})"
        )
    else:
        why = (
            f"the risk test's fixed sequence (level {delta_risk:.3g}) stops at the cut of scores "
            f"<= {values[end]:.6g}, short of {floor}"
        )
    return _certificate_error(
        f"{head}{why}; ask for a higher risk, a lower floor, a lower confidence, or more "
        "calibration rows",
        **_gate_advice(confidence, n, rows_needed),
        audit=trail,
    )


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
