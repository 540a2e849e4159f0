"""Internal: the audit trail of a certified fit, what the procedure tested, in which order, at which level.

A certificate (:class:`~rejectopt._certify.CertifiedSelection`) states the guarantee; the trail
states how the sample earned it: each cut the procedure tested, in the order it tested them, with
its rows, its p-value (or the bound the step compared), the level that test spent and whether the
null "this cut misses the target" was rejected, and why the procedure stopped. The certified cut
is the trail's last rejected cut, as a selection function (``threshold``, ``accept_prob``) equal
to the fit's own.

The columns are kept as arrays the fit already holds (a fixed-sequence run can test thousands of
cuts, and :func:`rejectopt.targets.validate_target` fits hundreds of times): :attr:`AuditTrail.rows`
and :meth:`AuditTrail.to_records` build the rows only when asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import lazy_loader as _lazy
import numpy as np

from ._tails import _binomial_pvalue, _SGRSearch

#: scipy.stats, imported at its first use (heavy to import:
#: ``benchmarks/import_costs_records.csv``).
_sps = _lazy.load("scipy.stats", suppress_warning=True)

#: Stages whose tests share one level, spent once however many cuts they test: the full set's
#: single test, a fixed-sequence run (it stops at its first non-rejection, so the family-wise
#: error is the level of one test) and the order statistic (its rank depends on n, w and delta
#: alone). Any other stage (SGR's binary search) spends its level at every row (a union bound).
SHARED_LEVEL_STAGES = ("full set", "fixed sequence", "order statistic")

#: The columns of a trail's row, in :meth:`AuditTrail.to_records`'s order.
AUDIT_COLUMNS = (
    "step",
    "stage",
    "threshold",
    "accept_prob",
    "accepted",
    "risk",
    "coverage",
    "pvalue",
    "bound",
    "level",
    "rejected",
)


@dataclass(frozen=True)
class AuditRow:
    """One test of a certified fit's procedure (a row of :class:`AuditTrail`).

    Parameters
    ----------
    step : int
        Its place in the order of testing, from 1.
    stage : str
        The part of the procedure: ``"full set"`` and ``"fixed sequence"`` (Learn-then-Test, and a
        release gate's risk run),
        ``"binary search"`` (SGR), ``"order statistic"`` (coverage, a tpr-fpr target's TPR),
        ``"fpr bound"`` (a tpr-fpr target's FPR, on the OOD rows).
    threshold, accept_prob : float
        The cut, as the selection function that applies it (accept ``s < threshold``, and
        ``s == threshold`` with probability ``accept_prob``): the certified cut's are the fit's.
    accepted : int
        Rows the cut accepts among the rows the test used.
    risk : float
        Their mean loss (loss units), NaN where none is accepted.
    coverage : float
        ``accepted`` over the rows the test used (Learn-then-Test's tested rows, else all).
    pvalue : float
        The p-value of "the cut misses the target" (risk: ``P(risk estimate this low | risk >=
        target)``; coverage: ``P(Binomial(n, w) >= rank)``).
    bound : float
        The confidence bound the step compared with the target: SGR's upper bound of the risk
        (loss units), the order statistic's lower bound of the coverage; NaN where the p-value
        alone decides (Learn-then-Test).
    level : float
        The level of this test (the share of delta it is compared with).
    rejected : bool
        Whether the null was rejected: the cut is certified as far as this test goes. Where a
        bound decides (SGR, the FPR), the bound against the target, as the fit decides.
    """

    step: int
    stage: str
    threshold: float
    accept_prob: float
    accepted: int
    risk: float
    coverage: float
    pvalue: float
    bound: float
    level: float
    rejected: bool


def _json_number(value: float) -> Any:
    """A float for JSON: NaN as None, an infinite threshold as ``"inf"`` / ``"-inf"`` (as ``model.json``)."""
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


@dataclass(frozen=True, eq=False)
class AuditTrail:
    """What a certified fit tested, in order, at which level, and why it stopped.

    Reached as ``CertifiedSelection.audit`` (``SelectiveClassifier.selection_.audit``); a target
    the sample cannot certify raises an :class:`~rejectopt.exceptions.InfeasibleTargetError`
    whose ``audit`` is the trail that failed (risk and tpr-fpr targets). A coverage target's
    trail keeps the certified rank and the rank below it: the ranks above it are rejected a
    fortiori (their p-values are smaller and depend on ``n``, ``w`` and delta alone, not on the
    sample).

    Parameters
    ----------
    method : str
        The certificate's method (``"ltt"``, ``"sgr"``, ``"order-statistic"``,
        ``"order-statistic+clopper-pearson"``).
    delta : float
        ``1 - confidence``, the level the whole procedure may spend.
    reason : str
        Why the procedure stopped where it did.
    n_tested : int
        Rows the tests used (Learn-then-Test holds its start rows out; a tpr-fpr target's ID
        rows, its FPR test's ``coverage`` being over the OOD rows).
    columns : dict of str to numpy.ndarray
        One array per name of :data:`AUDIT_COLUMNS` but ``step``, one entry per test, in order.
    certified : bool, default True
        Whether the procedure certified its target: False where the last test that decides
        failed after earlier ones passed (a tpr-fpr target whose FPR bound is above the target).

    Examples
    --------
    >>> from rejectopt.targets import Target
    >>> selection = Target("coverage", 0.5, confidence=0.9).fit([0] * 100, range(100))
    >>> [(row.threshold, row.rejected) for row in selection.audit.rows]
    [(56.0, True), (55.0, False)]
    >>> selection.audit.reason  # doctest: +ELLIPSIS
    'order statistic: rank 57 is the smallest ...'
    """

    method: str
    delta: float
    reason: str
    n_tested: int
    columns: dict[str, np.ndarray]
    certified: bool = True

    def __len__(self) -> int:
        return int(self.columns["level"].size)

    def _row(self, i: int) -> AuditRow:
        c = self.columns
        return AuditRow(
            step=i + 1,
            stage=str(c["stage"][i]),
            threshold=float(c["threshold"][i]),
            accept_prob=float(c["accept_prob"][i]),
            accepted=int(c["accepted"][i]),
            risk=float(c["risk"][i]),
            coverage=float(c["coverage"][i]),
            pvalue=float(c["pvalue"][i]),
            bound=float(c["bound"][i]),
            level=float(c["level"][i]),
            rejected=bool(c["rejected"][i]),
        )

    @property
    def rows(self) -> tuple[AuditRow, ...]:
        """The tests, in the order the procedure made them."""
        return tuple(self._row(i) for i in range(len(self)))

    @property
    def stop(self) -> AuditRow | None:
        """The last rejected test, whose cut is the certified one; None where nothing was certified."""
        rejected = np.flatnonzero(self.columns["rejected"])
        return self._row(int(rejected[-1])) if rejected.size and self.certified else None

    @property
    def spent(self) -> float:
        """The share of delta the procedure spends: a stage of :data:`SHARED_LEVEL_STAGES` once, any other per test."""
        stage, level = self.columns["stage"], self.columns["level"]
        total = float(level[~np.isin(stage, SHARED_LEVEL_STAGES)].sum())
        for name in SHARED_LEVEL_STAGES:
            if np.any(stage == name):
                total += float(level[stage == name][0])
        return total

    def to_records(self) -> list[dict[str, Any]]:
        """The rows as JSON-able dicts (keys :data:`AUDIT_COLUMNS`; NaN as None, infinities as text)."""
        return [
            {
                "step": row.step,
                "stage": row.stage,
                "threshold": _json_number(row.threshold),
                "accept_prob": row.accept_prob,
                "accepted": row.accepted,
                "risk": _json_number(row.risk),
                "coverage": row.coverage,
                "pvalue": _json_number(row.pvalue),
                "bound": _json_number(row.bound),
                "level": row.level,
                "rejected": row.rejected,
            }
            for row in self.rows
        ]

    def summary(self) -> str:
        """One sentence: how many cuts were tested, at which level, and where the procedure stopped."""
        stop = self.stop
        where = (
            "nothing is certified"
            if stop is None
            else f"the certified cut is test {stop.step} (threshold {stop.threshold:.6g}, "
            f"{stop.accepted} rows accepted, a share {stop.coverage:.4g} of those it tested)"
        )
        return (
            f"{len(self)} cuts tested (method {self.method}), spending {self.spent:.4g} of "
            f"delta = {self.delta:.4g}; {where}: {self.reason}."
        )


def _trail(
    method: str,
    delta: float,
    reason: str,
    n_tested: int,
    certified: bool = True,
    **columns: Any,
) -> AuditTrail:
    """An :class:`AuditTrail` of read-only column arrays (a frozen record of frozen columns)."""
    arrays = {}
    size = np.asarray(columns["threshold"]).size
    for name in AUDIT_COLUMNS[1:]:
        array = np.array(np.broadcast_to(columns[name], (size,)))
        array.flags.writeable = False
        arrays[name] = array
    return AuditTrail(method, float(delta), reason, int(n_tested), arrays, certified)


def _mean_loss(sums: np.ndarray, trials: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(trials > 0, sums / np.maximum(trials, 1.0), np.nan)


def fixed_sequence_run(pvalues: np.ndarray, first: int, level: float) -> tuple[int, int, str]:
    """A fixed-sequence run over the cuts from ``first`` upwards, each at ``level``: its last
    rejected cut (``first - 1`` where none is), the last cut it tested, and why it stopped."""
    failed = np.flatnonzero(pvalues[first:] > level)
    if failed.size == 0:
        last = pvalues.size - 1
        return last, last, "all cuts of the fixed sequence rejected, up to the full set"
    stop = first + int(failed[0])
    if stop == first:
        return stop - 1, stop, "the fixed sequence's first cut is not rejected"
    return (
        stop - 1,
        stop,
        "first non-rejection in the fixed sequence; the cut before it is certified",
    )


def _cut_columns(
    values: np.ndarray,
    trials: np.ndarray,
    sums: np.ndarray,
    pvalues: np.ndarray,
    idx: np.ndarray,
    n_tested: int,
) -> dict[str, Any]:
    """The trail's columns of the tested cuts ``idx`` of ``{s <= values[j]}``, each recorded as the
    fit returns it: ``(values[j + 1], 0)``, the last cut ``(inf, 1)``."""
    above = np.append(values[1:], np.inf)[idx]
    return {
        "threshold": above,
        "accept_prob": np.where(np.isinf(above), 1.0, 0.0),
        "accepted": trials[idx].astype(np.int64),
        "risk": _mean_loss(sums[idx], trials[idx]),
        "coverage": trials[idx] / max(n_tested, 1),
        "pvalue": pvalues[idx],
        "bound": np.nan,
    }


def ltt_trail(
    values: np.ndarray,
    trials: np.ndarray,
    sums: np.ndarray,
    pvalues: np.ndarray,
    plan: tuple[float, float, float, int],
    delta: float,
) -> AuditTrail:
    """Learn-then-Test's trail from the p-values its loop computed (no test is redone).

    ``values``, ``trials``, ``sums``: the tested rows' cuts ``{s <= values[j]}``; ``plan``:
    ``(full set's level, chain's level, start threshold, first cut)``. The cut ``j`` of the run is
    recorded as the fit returns it: ``(values[j + 1], 0)``, the last cut ``(inf, 1)``.
    """
    full_delta, chain_delta, _, first = plan
    n_tested = int(trials[-1])
    last = values.size - 1
    full_rejected = bool(pvalues[-1] <= full_delta)
    at = [last]
    stage, level = ["full set"], [full_delta]
    if full_rejected:
        reason = "the full set tested alone is rejected, so every row is accepted"
    elif first < 0:
        reason = (
            "the full set tested alone is not rejected; it is the one test (no start rows, or "
            "their start is the full set)"
        )
    else:
        _, tested, reason = fixed_sequence_run(pvalues, first, chain_delta)
        at += range(first, tested + 1)
        stage += ["fixed sequence"] * (tested + 1 - first)
        level += [chain_delta] * (tested + 1 - first)
    idx = np.asarray(at)
    levels = np.asarray(level, dtype=float)
    return _trail(
        "ltt",
        delta,
        reason,
        n_tested,
        stage=np.asarray(stage),
        level=levels,
        rejected=pvalues[idx] <= levels,
        **_cut_columns(values, trials, sums, pvalues, idx, n_tested),
    )


def fixed_sequence_trail(
    values: np.ndarray,
    trials: np.ndarray,
    sums: np.ndarray,
    pvalues: np.ndarray,
    first: int,
    run: tuple[int, int, str],
    level: float,
    delta: float,
) -> AuditTrail:
    """A fixed-sequence run's trail on every row (the release gate's risk): from cut ``first`` to
    the last it tested, each at ``level``; ``run`` is :func:`fixed_sequence_run`'s."""
    end, tested, reason = run
    idx = np.arange(first, tested + 1)
    return _trail(
        "fixed-sequence",
        delta,
        reason,
        int(trials[-1]),
        end >= first,
        stage="fixed sequence",
        level=level,
        rejected=pvalues[idx] <= level,
        **_cut_columns(values, trials, sums, pvalues, idx, int(trials[-1])),
    )


def sgr_trail(
    loss: np.ndarray, s: np.ndarray, target_risk: float, delta: float, loss_bound: float
) -> AuditTrail:
    """SGR's trail: every step of its binary search, the bounds as :class:`._tails._SGRSearch` computes them.

    The search's thresholds grow with every step that meets the target, so its last rejection is
    the largest-coverage cut below the target, the one the fit returns.
    """
    search = _SGRSearch(loss, s, delta, loss_bound)
    target = target_risk / loss_bound
    low, high, picked = 0, s.size, []
    bounds, last_met = [], 0
    for step in range(search.n_steps):
        mid = (low + high + 1) // 2
        bounds.append(search._bound(mid))
        picked.append(search.s_sorted[mid - 1])
        if bounds[-1] < target:
            low, last_met = mid, step + 1
        else:
            high = mid
    theta = np.asarray(picked, dtype=float)
    accepted = np.searchsorted(search.s_sorted, theta, side="right").astype(np.int64)
    errors = np.searchsorted(search.error_s_sorted, theta, side="right").astype(float)
    bound = np.asarray(bounds)
    reason = (
        f"SGR bound met at iteration {last_met} of the search's {search.n_steps}; its cut is certified"
        if last_met
        else f"no step of the search's {search.n_steps} has a bound below the target"
    )
    return _trail(
        "sgr",
        delta,
        reason,
        s.size,
        stage="binary search",
        threshold=theta,
        accept_prob=1.0,
        accepted=accepted,
        risk=_mean_loss(errors * loss_bound, accepted.astype(float)),
        coverage=accepted / s.size,
        pvalue=_binomial_pvalue(errors, accepted, target),
        bound=bound * loss_bound,
        level=search.delta_step,
        rejected=bound < target,
    )


def coverage_trail(
    loss: np.ndarray | None,
    s: np.ndarray,
    s_sorted: np.ndarray,
    k: int,
    target_coverage: float,
    delta: float,
) -> AuditTrail:
    """The order statistic's trail: the certified rank ``k`` (or the full set) and the rank below it.

    ``P(Binomial(n, w) >= rank)`` grows as the rank falls, so the ranks are a fixed sequence from
    the top: ``k`` is its last rejection, ``k - 1`` its first non-rejection (none at rank 1).
    ``s_sorted`` is ``s`` sorted, as the fit sorted it; ``loss`` None: no risk (NaN).
    """
    n = s_sorted.size
    ranks = np.asarray([r for r in (k, k - 1) if 1 <= r <= n], dtype=int)
    thresholds = [float(v) for v in s_sorted[ranks - 1]]
    # one vectorised call each: scipy's per-call overhead, not the two ranks, is the cost
    pvalues = [float(v) for v in _sps.binom.sf(ranks - 1, n, target_coverage)]
    bounds = [float(v) for v in _sps.beta.ppf(delta, ranks, n - ranks + 1)]
    if k > n:  # the full set's coverage is 1 >= w in every population: a null no sample keeps
        thresholds, pvalues, bounds = [math.inf, *thresholds], [0.0, *pvalues], [1.0, *bounds]
        reason = (
            f"no order statistic of {n} rows certifies coverage {target_coverage:g}: the full set"
        )
    else:
        reason = (
            f"order statistic: rank {k} is the smallest with P(Binomial({n}, "
            f"{target_coverage:g}) >= rank) <= delta"
        )
    cut = np.asarray(thresholds)
    accepted = np.searchsorted(s_sorted, cut, side="right").astype(np.int64)
    sums = np.array([np.nan if loss is None else loss[s <= t].sum() for t in thresholds])
    p = np.asarray(pvalues)
    return _trail(
        "order-statistic",
        delta,
        reason,
        n,
        stage="order statistic",
        threshold=cut,
        accept_prob=1.0,
        accepted=accepted,
        risk=_mean_loss(sums, accepted.astype(float)),
        coverage=accepted / n,
        pvalue=p,
        bound=np.asarray(bounds),
        level=delta,
        rejected=p <= delta,
    )


def tpr_fpr_trail(
    s_id: np.ndarray,
    k: int,
    tpr_min: float,
    delta: float,
    fpr: tuple[float, int, float, float],
) -> AuditTrail:
    """A tpr-fpr target's trail: the ID rows' order statistic at ``delta``, then the FPR's test at ``delta``.

    ``s_id``: the ID rows' scores, sorted; ``delta`` is each half of the union bound; ``fpr``:
    ``(OOD rows accepted, OOD rows, fpr_max, its Clopper-Pearson bound)`` at the chosen cut.
    """
    ood_accepted, n_ood, fpr_max, fpr_bound = fpr
    tpr = coverage_trail(None, s_id, s_id, k, tpr_min, delta)
    stop = tpr.stop
    assert stop is not None  # the order statistic always certifies a cut (the full set at worst)
    rejected = fpr_bound <= fpr_max
    fpr_row: dict[str, Any] = {
        "stage": "fpr bound",
        "threshold": stop.threshold,
        "accept_prob": stop.accept_prob,
        "accepted": int(ood_accepted),
        "risk": np.nan,
        "coverage": ood_accepted / n_ood,
        "pvalue": float(_binomial_pvalue(ood_accepted, n_ood, fpr_max)),
        "bound": fpr_bound,
        "level": delta,
        "rejected": rejected,
    }
    columns = {name: np.append(tpr.columns[name], value) for name, value in fpr_row.items()}
    verdict = "at most" if rejected else "above"
    reason = f"TPR: {tpr.reason}; FPR: its bound {fpr_bound:.4g} is {verdict} fpr {fpr_max:g}"
    return _trail(
        "order-statistic+clopper-pearson", 2 * delta, reason, s_id.size, rejected, **columns
    )


def accept_nothing_trail(n_ood: int, delta: float) -> AuditTrail:
    """The trail of ``tpr <= 0``: the cut accepting nothing, whose FPR is 0 in every population (no test)."""
    return _trail(
        "order-statistic+clopper-pearson",
        2 * delta,
        "tpr <= 0: the cut accepting nothing, whose FPR is 0 in every population, without a test",
        n_ood,
        stage="fpr bound",
        threshold=np.array([-np.inf]),
        accept_prob=0.0,
        accepted=0,
        risk=np.nan,
        coverage=0.0,
        pvalue=0.0,
        bound=0.0,
        level=0.0,
        rejected=True,
    )
