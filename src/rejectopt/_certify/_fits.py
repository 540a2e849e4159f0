"""Internal: the certified fits, a selective risk, a coverage or a TPR-FPR pair guaranteed w.p. 1 - delta.

The statements and their proofs: :mod:`rejectopt._certify` and the user guide's "Guarantees" page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from .._checks import as_loss_and_uncertainty, renamed_argument
from .._params import format_level
from ..selective import (
    InfeasibleTargetError,
    SelectionFunction,
    fit_geifman_el_yaniv,
)
from . import _parameters
from ._audit import (
    coverage_trail,
    fixed_sequence_run,
    ltt_trail,
    sgr_trail,
)
from ._selection import RISK_METHODS, ZERO_ONE_BOUND, CertifiedSelection
from ._tails import (
    RISK_TAILS,
    _coverage_lower_bound,
    _coverage_rank,
    _dkw_coverage_lower_bound,
    _ltt_keywords,
    _predicted_pvalues,
    _prefix_moments,
    _risk_pvalue,
    _risk_upper_bound,
    _SGRSearch,
    _tail_keywords,
)

#: Share of the calibration rows that chooses where the fixed-sequence test starts ("ltt").
START_FRACTION = 0.05

#: The standard normal (the start rows' prediction of the full set's test; statistics': no scipy call per target).
_NORMAL = NormalDist()

#: Fewest start rows worth holding out ("ltt"): with fewer (n < 190 at 5 %) the full set alone is tested on every
#: row, since a handful of start rows predicts little and holding them out costs the full set's test its power.
MIN_START_ROWS = 10

#: Least share of delta that either of "ltt"'s two tests (the full set alone, the fixed sequence) keeps.
FULL_SHARE_MIN = 0.02


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------
def _resolve_loss_bound(
    loss: np.ndarray, loss_bound: Any, owner: str, needs: str = "a certified risk target"
) -> tuple[float, bool]:
    """B (the largest loss by definition) and whether every loss is 0 or B.

    ``None`` means the project's 0/100 loss and is accepted only when every loss is 0 or 100;
    any other loss must declare its bound (MAE on K ordinal labels: K - 1), never the sample's max.

    Parameters
    ----------
    loss : numpy.ndarray
        The calibration losses (validated, >= 0).
    loss_bound : float or None
        The declared bound.
    owner : str
        The public function whose ``loss_bound`` it is, named in a refusal (:mod:`._parameters`).
    needs : str, default "a certified risk target"
        What needs B, as the refusal of a loss without it says.

    Returns
    -------
    (float, bool)
        B and whether the exact binomial tail applies.
    """
    if loss_bound is None:
        if not np.all((loss == 0.0) | (loss == ZERO_ONE_BOUND)):
            bad = int(np.flatnonzero((loss != 0.0) & (loss != ZERO_ONE_BOUND))[0])
            raise ValueError(
                f"{needs} needs the loss's bound: loss[{bad}] = {loss[bad]:g} is not a "
                "0/100 loss; pass loss_bound (the largest loss a prediction can have by the loss's "
                "definition: 100 for the 0/100 loss, K - 1 for the MAE on K ordinal labels)"
            )
        return ZERO_ONE_BOUND, True
    (bound,) = _parameters.check(owner, loss_bound=loss_bound)
    bound = float(bound)
    if loss.size and float(loss.max()) > bound:
        i = int(np.argmax(loss))
        raise ValueError(
            f"loss[{i}] = {loss[i]:g} exceeds loss_bound {bound:g}: the bound must be the largest "
            "loss a prediction can have"
        )
    return bound, bool(np.all((loss == 0.0) | (loss == bound)))


# --------------------------------------------------------------------------------------------
# Cuts: prefixes of the sorted distinct scores
# --------------------------------------------------------------------------------------------
def _prefix_sums(loss: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores and, per cut ``{s <= values[j]}``, the rows and loss sum it accepts."""
    values, inverse = np.unique(s, return_inverse=True)
    counts = np.bincount(inverse, minlength=values.size).astype(float)
    sums = np.bincount(inverse, weights=loss, minlength=values.size)
    return values, np.cumsum(counts), np.cumsum(sums)


def _check_target_risk(target_risk: Any, bound: float) -> float:
    """A certified risk target as a float, checked to lie in (0, B): 0 and B need no certificate."""
    target_risk = float(target_risk)
    if not 0.0 < target_risk < bound:
        raise ValueError(
            f"a certified target risk must lie in (0, {bound:g}) (loss units, loss_bound {bound:g}), "
            f"got {target_risk:g}"
        )
    return target_risk


def _resolve_tail(tail: Any, binary: bool, owner: str) -> str:
    """The tail of the cuts' tests, checked: "hb" for 0/B losses, which keep the exact binomial."""
    (tail,) = _parameters.check(owner, tail=tail)
    return "hb" if binary else str(tail)


def _rows_needed(target_risk: float, delta: float, loss_bound: float) -> int:
    """Error-free tested rows needed to certify ``target_risk`` at ``delta``: ``ceil(log delta / log(1 - r))``.

    With ``m`` rows and no error both p-values are ``(1 - r)^m`` (``r`` the target over B), and
    more errors only raise them, so fewer tested rows certify nothing at that target.
    """
    rate = target_risk / loss_bound
    return int(math.ceil(math.log(delta) / math.log1p(-rate) - 1e-9))


def _round_up(value: float, digits: int) -> float:
    """``value`` rounded up to ``digits`` significant digits (advice is printed; rounding down could fail)."""
    if not (math.isfinite(value) and value > 0):
        return value
    rounded = float(f"{value:.{digits - 1}e}")
    if rounded < value:
        step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
        rounded = float(f"{rounded + step:.{digits - 1}e}")
    return rounded


def _smallest_certified(certifies: Any, loss_bound: float) -> float:
    """A small target risk that ``certifies`` (a decision of the procedure on fixed rows), or NaN if none below B.

    Bisection keeps its upper end a target that certifies, so the answer certifies when asked for
    even where the decision is not monotone in the target (Learn-then-Test's start depends on it);
    the answer is then rounded up to the fewest significant digits (4, 6, 8) that still certify.
    """
    high = loss_bound * (1.0 - 1e-9)
    if not certifies(high):
        return float("nan")
    low = 0.0
    for _ in range(34):  # B / 2**34: far below the 8 significant digits the advice is printed with
        mid = (low + high) / 2
        if mid <= 0.0:
            break
        if certifies(mid):
            high = mid
        else:
            low = mid
    for digits in (4, 6, 8):
        nice = _round_up(high, digits)
        if nice < loss_bound and certifies(nice):
            return nice
    return high


def _percent(delta: float) -> str:
    """The level ``1 - delta`` in percent, to one decimal unless that would read as 100 % (a
    ``delta`` below 5e-4; below 2**-54, ``1 - delta`` is 1 as a float): then as ``1 - delta``."""
    text = f"{1.0 - delta:.1%}"
    return f"1 - {delta:g}" if text == "100.0%" else text


def _certificate_error(text: str, **advice: Any) -> InfeasibleTargetError:
    """An :class:`InfeasibleTargetError` carrying the advice of a certified target as attributes.

    ``best_bound``, ``rows_needed``, ``confidence``, ``n_calibration``: the attributes that
    :class:`~rejectopt.exceptions.InfeasibleTargetError` documents for a certified target, set on
    the instance because the class declares none (the plug-in targets raise it without them).
    """
    error = InfeasibleTargetError(text)
    for name, value in advice.items():
        setattr(error, name, value)
    return error


class _RiskRefusal(InfeasibleTargetError):
    """A refused risk target whose advice (``best_bound``, the message naming it) is computed when read.

    The advice is a bisection of fits on the same rows: a caller that only catches the refusal (a
    validation's draws) pays for one fit. Message and attributes are those of an eagerly built
    :class:`InfeasibleTargetError`, and it pickles as one."""

    # Shown as the class users catch (tracebacks, repr): the laziness is no part of the API.
    __module__ = InfeasibleTargetError.__module__
    __qualname__ = InfeasibleTargetError.__qualname__

    def __init__(self, advise: Any, render: Any, **attributes: Any) -> None:
        super().__init__()
        self._advise, self._render = advise, render
        self._best: float | None = None
        self.__dict__.update(attributes)

    @property
    def best_bound(self) -> float:
        if self._best is None:
            self._best = float(self._advise())
        return self._best

    @property
    def args(self) -> tuple[str]:  # type: ignore[override]  # derived from the advice, never set
        return (self._render(self.best_bound),)

    def __str__(self) -> str:
        return self.args[0]

    def __repr__(self) -> str:
        return f"{InfeasibleTargetError.__name__}({self.args[0]!r})"

    def __reduce__(self) -> tuple:
        state = {name: value for name, value in vars(self).items() if not name.startswith("_")}
        return InfeasibleTargetError, self.args, {**state, "best_bound": self.best_bound}


def _infeasible_risk(
    target_risk: float,
    confidence: float,
    method: str,
    n: int,
    n_tested: int,
    rows_needed: int,
    advise: Any,
    why: str,
    calibration_needed: int,
) -> InfeasibleTargetError:
    """The error of a risk target the sample cannot certify, with advice that certifies on these rows.

    ``advise()`` gives a target risk the same procedure certifies on the same rows (NaN: none
    below B), called only when the advice is read; where even error-free rows would be too few
    (``n_tested < rows_needed``), the message says how many rows the target needs instead of
    suggesting a value the rows cannot reach: ``calibration_needed`` is the fewest calibration
    rows that, error-free, certify it (the smallest such sample: one row fewer does not).
    """
    head = (
        f"target risk={target_risk:g} cannot be certified at confidence {format_level(confidence)} on these {n} "
        f"calibration rows (method {method}): "
    )

    def render(best: float) -> str:
        if math.isnan(best):
            advice = "no target risk below the loss's bound can be certified on these rows"
        else:
            advice = (
                f"the smallest target risk the method certifies on these rows is {best:.8g}; "
                f"ask for risk >= {best:.8g}"
            )
        if n_tested < rows_needed:
            return (
                f"{head}even without an error, risk={target_risk:g} at confidence "
                f"{format_level(confidence)} needs at least {rows_needed} "
                f"tested rows ({calibration_needed} calibration rows), and {n_tested} are tested; "
                f"{advice}, a lower confidence, or more calibration rows"
            )
        return f"{head}{why}; {advice}, a lower confidence, or more calibration rows"

    return _RiskRefusal(
        advise,
        render,
        confidence=confidence,
        n_calibration=int(n),
        rows_needed=int(rows_needed),
    )


# --------------------------------------------------------------------------------------------
# Risk targets
# --------------------------------------------------------------------------------------------
def _ltt_start(
    loss: np.ndarray,
    s: np.ndarray,
    target_risk: float,
    delta: float,
    n_test: int,
    loss_bound: float,
    binary: bool,
    betting: bool = False,
) -> float:
    """Where fixed-sequence testing starts, chosen on the start rows only.

    Each cut ``{s <= a}`` of the start rows gets the p-value it would have on ``n_test`` rows
    of the same risk. The start is the *earliest* cut whose predicted p-value reaches the
    geometric mean of delta and the smallest one: the cut with the smallest predicted p-value
    lies where the start rows were luckiest, and the tested rows often fail there (the winner's
    curse), while the run of rejections climbs from an earlier start anyway. ``+inf`` (the full
    set, a cut fixed in advance) without start rows.

    Parameters
    ----------
    loss, s : numpy.ndarray
        The start rows' losses and scores.
    target_risk, delta : float
        The target and 1 - confidence.
    n_test : int
        Rows the test will use.
    loss_bound : float
        B.
    binary : bool
        Whether every loss is 0 or B.
    betting : bool, default False
        Whether the tested cuts take the betting p-value (Hoeffding-Bentkus when not).

    Returns
    -------
    float
        The score ``a`` of the start cut.
    """
    if loss.size == 0:
        return math.inf
    values, predicted = _predicted_pvalues(
        loss, s, target_risk, n_test, loss_bound, binary, betting
    )
    best = float(predicted.min())
    level = max(math.sqrt(max(best, 1e-300) * delta), best)
    j = int(np.flatnonzero(predicted <= level)[0])
    return math.inf if j == values.size - 1 else float(values[j])


@dataclass(frozen=True)
class _LTTRows:
    """One sample split for Learn-then-Test: the start rows, and the tested rows' cuts (sorted once)."""

    start_loss: np.ndarray
    start_s: np.ndarray
    values: np.ndarray
    trials: np.ndarray
    sums: np.ndarray
    #: The tested cuts' betting statistics (empty for "hb") and the tail (:func:`_resolve_tail`).
    moments: dict[str, Any] = field(default_factory=dict)
    tail: str = "hb"

    @property
    def n_tested(self) -> int:
        return int(self.trials[-1]) if self.trials.size else 0


def _ltt_rows(
    loss: np.ndarray, s: np.ndarray, start_fraction: float, random_state: Any, tail: str = "hb"
) -> _LTTRows:
    """Split the rows (seeded): ``round(start_fraction * n)`` start rows, the rest tested.

    No start rows below ``MIN_START_ROWS``: the full set is then tested alone, on every row.
    ``tail`` other than "hb": the tested cuts carry the betting p-value's statistics.
    """
    n = loss.size
    n_start = int(round(start_fraction * n))
    if n_start < MIN_START_ROWS:
        n_start = 0
    order = np.random.default_rng(random_state).permutation(n)
    start_rows, test_rows = order[:n_start], order[n_start:]
    values, trials, sums = _prefix_sums(loss[test_rows], s[test_rows])
    moments = _prefix_moments(loss[test_rows], s[test_rows]) if tail != "hb" else {}
    return _LTTRows(loss[start_rows], s[start_rows], values, trials, sums, moments, tail)


def _ltt_full_share(rows: _LTTRows, target_risk: float, delta: float, loss_bound: float) -> float:
    """Share of delta that tests the full set alone, chosen on the start rows only (1 without start rows).

    The start rows' predicted probability that the tested rows reject "the full set's risk >=
    target" at level delta: their mean loss (shrunk by one prior row at the target, so that a
    handful of start rows predicts an even chance) against the test's normal critical
    value, its variance that of the tested rows plus the start rows' own. Clipped to
    [:data:`FULL_SHARE_MIN`, 1 - :data:`FULL_SHARE_MIN`]: a flat risk, where the full set is
    the best cut, keeps almost all of delta for it; a risk that falls with the score leaves
    almost all of it to the fixed-sequence test from the start.
    """
    m = rows.start_loss.size
    if m == 0:
        return 1.0
    n_test = max(rows.n_tested, 1)
    rate = target_risk / loss_bound
    mean = (float(rows.start_loss.sum()) / loss_bound + rate) / (
        m + 1.0
    )  # one prior row at the target
    spread = math.sqrt(mean * (1 - mean) * (1.0 / n_test + 1.0 / (m + 2.0)))
    critical = rate - _NORMAL.inv_cdf(1.0 - delta) * math.sqrt(rate * (1 - rate) / n_test)
    share = _NORMAL.cdf((critical - mean) / spread)
    return min(max(share, FULL_SHARE_MIN), 1.0 - FULL_SHARE_MIN)


def _ltt_plan(
    rows: _LTTRows, target_risk: float, delta: float, loss_bound: float, binary: bool
) -> tuple[float, float, float, int]:
    """The two tests of a target: (full set's level, chain's level, chain's start threshold, its first cut)."""
    share = _ltt_full_share(rows, target_risk, delta, loss_bound)
    chain_delta = delta * (1.0 - share)
    if chain_delta <= 0.0:
        return delta, 0.0, math.inf, -1
    bet = bool(_ltt_keywords(rows, target_risk, loss_bound, []))  # the start's p-values as tested
    start_rows = (rows.start_loss, rows.start_s)
    start = _ltt_start(
        *start_rows, target_risk, chain_delta, rows.n_tested, loss_bound, binary, bet
    )
    first = int(np.searchsorted(rows.values, start, side="right")) - 1
    if first == rows.values.size - 1:
        # The chain would start at the full set: the same hypothesis as the full set's own test,
        # fixed by the start rows alone, so it is tested once, at the whole of delta.
        return delta, 0.0, math.inf, -1
    return delta * share, chain_delta, start, first


def _ltt_certifies(
    rows: _LTTRows, target_risk: float, delta: float, loss_bound: float, binary: bool
) -> bool:
    """Whether Learn-then-Test certifies ``target_risk`` here: the full set's or the start cut's test rejects."""
    if not 0.0 < target_risk < loss_bound or rows.n_tested == 0:
        return False
    full_delta, chain_delta, _, first = _ltt_plan(rows, target_risk, delta, loss_bound, binary)
    at = [-1] if first < 0 else [-1, first]
    keywords = _ltt_keywords(rows, target_risk, loss_bound, at)
    p = _risk_pvalue(rows.sums[at], rows.trials[at], target_risk, loss_bound, binary, **keywords)
    return bool(p[0] <= full_delta or (first >= 0 and p[1] <= chain_delta))


def _fit_ltt(
    loss: np.ndarray,
    s: np.ndarray,
    target_risk: float,
    confidence: float,
    loss_bound: float,
    binary: bool,
    start_fraction: float,
    random_state: Any,
    tail: str = "hb",
) -> CertifiedSelection:
    """The full set tested alone at ``delta * w``, else fixed-sequence testing from a start at ``delta * (1 - w)``."""
    delta = 1.0 - confidence
    n = loss.size
    rows = _ltt_rows(loss, s, start_fraction, random_state, tail)
    plan = _ltt_plan(rows, target_risk, delta, loss_bound, binary)
    full_delta, chain_delta, start, first = plan
    keywords = _ltt_keywords(rows, target_risk, loss_bound)
    pvalues = _risk_pvalue(rows.sums, rows.trials, target_risk, loss_bound, binary, **keywords)
    audit = ltt_trail(rows.values, rows.trials, rows.sums, pvalues, plan, delta)
    if pvalues.size and pvalues[-1] <= full_delta:
        threshold, accept_prob = math.inf, 1.0
    elif first < 0 or pvalues[first] > chain_delta:

        def advise() -> float:
            return _smallest_certified(
                lambda a: _ltt_certifies(rows, a, delta, loss_bound, binary), loss_bound
            )

        where = "the full set" if math.isinf(start) else f"threshold {start:.6g}"
        why = (
            f"the full set tested alone (level {full_delta:.3g}) and the fixed-sequence test from its start "
            f"({where}, level {chain_delta:.3g}) both fail"
            if chain_delta > 0
            else f"the full set tested alone (level {full_delta:.3g}) fails"
        )
        error = _infeasible_risk(
            target_risk,
            confidence,
            "ltt",
            n,
            rows.n_tested,
            _rows_needed(target_risk, delta, loss_bound),
            advise,
            why,
            _ltt_calibration_rows(_rows_needed(target_risk, delta, loss_bound), start_fraction),
        )
        error.audit = audit  # type: ignore[attr-defined]  # the trail that failed
        raise error
    else:
        end = fixed_sequence_run(pvalues, first, chain_delta)[0]
        if end == rows.values.size - 1:
            threshold, accept_prob = math.inf, 1.0
        else:
            threshold, accept_prob = float(rows.values[end + 1]), 0.0
    selection = SelectionFunction(threshold, accept_prob)
    accepted = float(selection.acceptance_probability(s).sum())
    return CertifiedSelection(
        threshold,
        accept_prob,
        bound=float(target_risk),
        confidence=confidence,
        n_calibration=n,
        method="ltt",
        risk_bound=float(target_risk),
        coverage_bound=_dkw_coverage_lower_bound(accepted, n, delta),
        loss_bound=loss_bound,
        audit=audit,
    )


def _sgr_rows_needed(target_risk: float, delta: float, loss_bound: float) -> int:
    """Fewest rows ``n`` whose error-free sample SGR certifies: ``(n + 1) // 2 >= needed(n)``.

    SGR's search first tests the cut of the ``(n + 1) // 2`` least uncertain rows, at
    ``delta / ceil(log2 n)``; without errors it certifies iff that cut passes (a failure moves the
    search to smaller cuts, whose bounds are larger), so those rows must reach
    ``needed(n) = _rows_needed(target, delta / ceil(log2 n))``. ``needed`` never falls as ``n``
    grows; from below the answer ``n*`` each step ``n <- 2 needed(n) - 1`` stays at or below
    ``2 needed(n*) - 1 <= n*`` and rises, so the iteration reaches ``n*`` in a few steps.
    """

    def enough(n: int) -> int:
        steps = max(1, math.ceil(math.log2(n)))
        return 2 * _rows_needed(target_risk, delta / steps, loss_bound) - 1

    n = max(1, 2 * _rows_needed(target_risk, delta, loss_bound) - 1)
    while n < enough(n):
        n = enough(n)
    return n


def _ltt_calibration_rows(rows_needed: int, start_fraction: float) -> int:
    """Fewest calibration rows whose split leaves ``rows_needed`` tested rows ("ltt").

    Error-free, those rows certify: the start rows then predict that only the full set can
    pass, so it is tested alone at delta (:func:`_ltt_plan`), on ``rows_needed`` rows. A sample
    below ``MIN_START_ROWS / start_fraction`` rows has no start rows, so the answer is not
    monotone there: 185 rows may test 185 and 190 rows test 180.
    """

    def tested(n: int) -> int:
        n_start = int(round(start_fraction * n))
        return n - (n_start if n_start >= MIN_START_ROWS else 0)

    if tested(rows_needed) >= rows_needed:
        return rows_needed
    # Past it every sample has start rows, and n - round(f n) >= m needs n >= (m - 0.5) / (1 - f).
    n = max(rows_needed + 1, int((rows_needed - 0.5) / (1.0 - start_fraction)))
    while tested(n) < rows_needed:
        n += 1
    return n


@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_certified_risk(
    loss: Any,
    uncertainty: Any,
    target_risk: float,
    confidence: float,
    *,
    loss_bound: Any = None,
    method: str | None = None,
    start_fraction: float = START_FRACTION,
    random_state: Any = 0,
    tail: str = RISK_TAILS[0],
) -> CertifiedSelection:
    """The largest-coverage selection whose population selective risk is <= ``target_risk`` w.p. >= ``confidence``.

    .. versionchanged:: 0.4.0
       Learn-then-Test also tests the full set alone (delta split between the two tests) and,
       below 190 rows, tests the full set only: a target the whole set certifies is no longer
       refused, and the selection on a given sample can differ from 0.3.0's.

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty``; ``s=`` works for one more release, with a FutureWarning.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses in [0, B] and uncertainty scores.
    target_risk : float
        Target selective risk in loss units, in (0, B).
    confidence : float
        1 - delta, in (0, 1).
    loss_bound : float or None, default None
        B by the loss's definition; None for the 0/100 loss (every loss 0 or 100).
    method : {"ltt", "sgr"} or None, default None
        None: ``RISK_METHODS[0]``.
    start_fraction : float, default START_FRACTION
        "ltt": share of the rows that chooses the start of the test, in [0, 1). "sgr" ignores
        it (its search uses every row) but refuses a value outside [0, 1) all the same.
    random_state : int, default 0
        "ltt": seed of the rows chosen for the start. "sgr" draws nothing and ignores it, but
        refuses what is no seed.
    tail : {"auto", "hb", "betting"}, default "auto"
        "ltt", a loss that is not 0/B: the p-value of each cut's test, Hoeffding-Bentkus
        ("hb") or the variance-adaptive betting p-value ("betting"). "auto": the start rows
        choose the one they predict smaller; without start rows (``n < 190``), the smaller of
        the two doubled. 0/B losses keep the exact binomial tail whatever it says; "sgr" (0/B
        only) ignores it.

    Returns
    -------
    CertifiedSelection
        The selection and its guarantee; ``loss_bound`` the B it rests on (100 for the 0/100 loss).

    Raises
    ------
    InfeasibleTargetError
        The sample cannot certify the target; ``best_bound`` is a target risk the same method
        certifies on the same rows (NaN if none below B), ``rows_needed`` the tested rows that
        even an error-free sample needs for ``target_risk``.
    ValueError
        Bad input, naming it.
    """
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    confidence, method = _parameters.check(
        "fit_certified_risk", confidence=confidence, method=method
    )
    confidence, method = float(confidence), RISK_METHODS[0] if method is None else method
    bound, binary = _resolve_loss_bound(loss, loss_bound, "fit_certified_risk")
    target_risk = _check_target_risk(target_risk, bound)
    # Checked for either method: "sgr" ignores them (its search uses every row and draws
    # nothing), but a value no method could use is a slip either way.
    _parameters.check(
        "fit_certified_risk", start_fraction=start_fraction, random_state=random_state
    )
    tail = _resolve_tail(tail, binary, "fit_certified_risk")
    if method == "ltt":
        return _fit_ltt(
            loss, s, target_risk, confidence, bound, binary, start_fraction, random_state, tail
        )
    if not binary:
        raise ValueError(
            f"method 'sgr' bounds 0/B losses only (Clopper-Pearson); these losses are not all 0 or "
            f"{bound:g}: use method 'ltt'"
        )
    delta = 1.0 - confidence
    try:
        selection, risk_bound = fit_geifman_el_yaniv(loss, s, target_risk, delta, loss_scale=bound)
    except InfeasibleTargetError:
        pass
    else:
        accepted = float(selection.acceptance_probability(s).sum())
        return CertifiedSelection(
            selection.threshold,
            selection.accept_prob,
            bound=risk_bound,
            confidence=confidence,
            n_calibration=loss.size,
            method="sgr",
            risk_bound=risk_bound,
            coverage_bound=_dkw_coverage_lower_bound(accepted, loss.size, delta),
            loss_bound=bound,
            audit=sgr_trail(loss, s, target_risk, delta, bound),
        )

    n = loss.size
    needed = _sgr_rows_needed(target_risk, delta, bound)
    error = _infeasible_risk(
        target_risk,
        confidence,
        "sgr",
        n,
        n,
        needed,
        lambda: _smallest_certified(_SGRSearch(loss, s, delta, bound).certifies, bound),
        "no threshold of the binary search has a bound below the target",
        needed,
    )
    error.audit = sgr_trail(loss, s, target_risk, delta, bound)  # type: ignore[attr-defined]
    raise error


# --------------------------------------------------------------------------------------------
# Coverage targets
# --------------------------------------------------------------------------------------------


@renamed_argument("s", "uncertainty", since="0.6.0")
def fit_certified_coverage(
    loss: Any,
    uncertainty: Any,
    target_coverage: float,
    confidence: float,
    *,
    loss_bound: Any = None,
    tail: str = RISK_TAILS[0],
) -> CertifiedSelection:
    """The smallest cut whose population coverage is >= ``target_coverage`` w.p. >= ``confidence``.

    .. versionchanged:: 0.6.0
       ``s`` is renamed ``uncertainty``; ``s=`` works for one more release, with a FutureWarning.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses (for the risk bound only) and uncertainty scores.
    target_coverage : float
        ``w`` in (0, 1].
    confidence : float
        1 - delta.
    loss_bound : float or None, default None
        B for the risk bound; None for the 0/100 loss. Another loss without it gets a NaN
        risk bound and a NaN ``loss_bound``.
    tail : {"auto", "hb", "betting"}, default "auto"
        The risk bound of a loss that is not 0/B, as :func:`fit_certified_risk` takes it
        ("auto": no rows are held out, so the bound of the two p-values' union bound).

    Returns
    -------
    CertifiedSelection
        ``(s_(k), 1)`` or, when ``n`` rows cannot certify ``w``, ``(inf, 1)`` (accept all, coverage 1);
        ``loss_bound`` the B its risk bound rests on.
    """
    loss, s = as_loss_and_uncertainty(loss, uncertainty, exact_order=False)
    confidence, target_coverage = _parameters.check(
        "fit_certified_coverage", confidence=confidence, target_coverage=target_coverage
    )
    confidence = float(confidence)
    delta = 1.0 - confidence
    n = loss.size
    k = _coverage_rank(n, float(target_coverage), delta)
    s_sorted = np.sort(s)
    if k > n:
        threshold, coverage_bound = math.inf, 1.0
    else:
        threshold, coverage_bound = float(s_sorted[k - 1]), _coverage_lower_bound(k, n, delta)
    accepted = s <= threshold
    _parameters.check("fit_certified_coverage", tail=tail)
    try:
        bound, binary = _resolve_loss_bound(loss, loss_bound, "fit_certified_coverage")
    except ValueError:  # no B: no risk bound, and nothing rests on B
        bound = risk_bound = float("nan")
    else:
        kept = loss[accepted]
        moments = _tail_keywords(
            _resolve_tail(tail, binary, "fit_certified_coverage"),
            {"squares": float((kept * kept).sum()), "top": float(kept.max(initial=0.0))},
        )
        risk_bound = float(
            _risk_upper_bound(kept.sum(), accepted.sum(), delta, bound, binary, **moments)
        )
    return CertifiedSelection(
        threshold,
        1.0,
        bound=coverage_bound,
        confidence=confidence,
        n_calibration=n,
        method="order-statistic",
        risk_bound=risk_bound,
        coverage_bound=coverage_bound,
        loss_bound=bound,
        audit=coverage_trail(loss, s, s_sorted, k, float(target_coverage), delta),
    )
