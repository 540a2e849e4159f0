"""Internal: certified selection, a selective risk or coverage guaranteed with probability 1 - delta.

:class:`~rejectopt.targets.Target` with a ``confidence`` fits here; the plug-in targets
(:mod:`rejectopt.selective`) meet their value on the calibration rows only. Every guarantee
is *marginal over the calibration sample* of ``n`` i.i.d. (exchangeable) rows: with probability
at least ``confidence = 1 - delta`` the drawn sample gives a selection function whose
population quantity meets the target. The user guide's "Guarantees" page carries the proofs;
the statements:

* **risk, method "ltt"** (Learn-then-Test, Angelopoulos et al. 2021, fixed-sequence testing):
  the hypotheses are the nested cuts ``{s <= t}`` / ``{s < t}`` ordered from the most
  confident; ``H_t``: the population selective risk of the cut exceeds the target. Each is
  tested with the exact binomial tail (losses in {0, B}: Clopper-Pearson's p-value) or the
  Hoeffding-Bentkus p-value (any loss in [0, B], Bates et al. 2021, Prop. 3), both valid
  conditionally on the number of accepted rows. Fixed-sequence testing must start at a cut
  chosen without the rows it tests: a seeded random ``start_fraction`` of the rows picks the
  start (:func:`_ltt_start`), the others test every cut from there upwards at level
  ``delta * (1 - w)``; the selection is the largest cut of the unbroken run of rejections. The
  full set alone is tested too, at ``delta * w``, ``w`` the start rows' predicted chance that it
  certifies (:func:`_ltt_full_share`); a union bound over the two tests. With fewer than
  ``MIN_START_ROWS`` start rows (``n < 190``) the full set alone is tested, on every row. The
  family-wise error is at most delta (the first cut after the start whose risk exceeds the
  target is a fixed cut, and the run can pass it only by rejecting it).
* **risk, method "sgr"** (Geifman & El-Yaniv 2017): :func:`rejectopt.selective.fit_geifman_el_yaniv`,
  binary search with a union bound over its ``ceil(log2 n)`` steps; 0/B losses only.
* **coverage** (order statistics): the cut at the ``k``-th smallest score, ``k`` the smallest
  count with ``P(Binomial(n, w) >= k) <= delta``, has population coverage >= ``w`` with
  probability >= ``1 - delta``: ``F(s_(k)) < w`` needs ``k`` scores below ``F^-1(w)``.
* **tpr-fpr** (OOD): the TPR cut is the coverage cut of the ID rows at delta / 2; the FPR of that
  cut (fixed given the ID rows, the OOD rows independent) is bounded by Clopper-Pearson at
  delta / 2; a union bound gives both.

Certified selections are deterministic (``accept_prob`` 0 or 1): the randomised boundary of
eq. 25 needs the randomisation of the calibration rows to be part of the tested cut, and the
deterministic cuts already reach the certified maximum up to one tie group.

A certified target is checked here too: :func:`certification_table` lists each threshold's
pointwise bound and p-value, :func:`validate_target` measures how often the target fails when the
user's own rows are the population. :mod:`rejectopt.targets` exports both (the reference documents
them there), and the fits of the three certified kinds.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import lazy_loader as _lazy
import numpy as np
import pandas as pd

from ._checks import as_ood_mask, check_confidence, clopper_pearson
from .selective import (
    InfeasibleTargetError,
    SelectionFunction,
    _validate_loss_and_scores,
    fit_geifman_el_yaniv,
)

#: scipy.stats / scipy.special, imported at their first use (about 0.6 s).
_sps = _lazy.load("scipy.stats", suppress_warning=True)
_special = _lazy.load("scipy.special", suppress_warning=True)

#: Methods of a certified risk target; the first is the default (valid, and covering at least as much as
#: SGR at the same delta in 38 of the 40 cells measured on the guide's "Guarantees" page).
RISK_METHODS = ("ltt", "sgr")

#: Share of the calibration rows that chooses where the fixed-sequence test starts ("ltt").
START_FRACTION = 0.05

#: The standard normal (the start rows' prediction of the full set's test; statistics': no scipy call per target).
_NORMAL = NormalDist()

#: Fewest start rows worth holding out ("ltt"): with fewer (n < 190 at 5 %) the full set alone is tested on every
#: row, since a handful of start rows predicts little and holding them out costs the full set's test its power.
MIN_START_ROWS = 10

#: Least share of delta that either of "ltt"'s two tests (the full set alone, the fixed sequence) keeps.
FULL_SHARE_MIN = 0.02

#: The loss of one error of the project's 0/100 loss (:func:`rejectopt.metrics.per_example_loss`).
ZERO_ONE_BOUND = 100.0


# --------------------------------------------------------------------------------------------
# Tails: p-values and confidence bounds of a mean of losses in [0, B]
# --------------------------------------------------------------------------------------------
def _binomial_pvalue(errors: Any, trials: Any, rate: Any) -> np.ndarray:
    """``P(Binomial(trials, rate) <= errors)``: the exact p-value of ``H0: error rate >= rate``.

    Valid (super-uniform) for any true rate >= ``rate``; 1 where ``trials == 0``. Real-valued
    counts use the regularised incomplete beta ``I_{1-rate}(trials - errors, errors + 1)``.

    Parameters
    ----------
    errors, trials : array_like
        Errors among the accepted rows and their number.
    rate : array_like
        The rate under test, in (0, 1).

    Returns
    -------
    numpy.ndarray
        The p-values, elementwise.
    """
    errors, trials, rate = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (errors, trials, rate))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        p = _special.betainc(np.maximum(trials - errors, 1e-300), errors + 1.0, 1.0 - rate)
    return np.where((trials <= 0) | (errors >= trials), 1.0, p)


def _hoeffding_bentkus_pvalue(mean: Any, trials: Any, rate: Any) -> np.ndarray:
    """Hoeffding-Bentkus p-value of ``H0: E[loss] >= rate`` for losses in [0, 1] (Bates et al. 2021).

    ``min(exp(-n h(min(mean, rate), rate)), e P(Binomial(n, rate) <= ceil(n mean)))`` with
    ``h(a, b) = a log(a/b) + (1-a) log((1-a)/(1-b))`` (Hoeffding 1963; Bentkus 2004); valid for
    any distribution on [0, 1] with mean >= ``rate``. 1 where ``trials == 0``.

    Parameters
    ----------
    mean, trials : array_like
        Sample mean (in [0, 1]) of the accepted losses and their number.
    rate : array_like
        The mean under test, in (0, 1).

    Returns
    -------
    numpy.ndarray
        The p-values, elementwise.
    """
    mean, trials, rate = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (mean, trials, rate))
    )
    a = np.minimum(mean, rate)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = _special.xlogy(a, a / rate) + _special.xlogy(1.0 - a, (1.0 - a) / (1.0 - rate))
        hoeffding = np.exp(-trials * h)
        bentkus = math.e * _binomial_pvalue(
            np.ceil(trials * mean - 1e-9), trials, rate
        )  # real counts too
    p = np.minimum(np.minimum(hoeffding, bentkus), 1.0)
    return np.where(trials <= 0, 1.0, p)


def _risk_pvalue(
    loss_sum: Any, trials: Any, target: float, loss_bound: float, binary: bool
) -> np.ndarray:
    """p-value of ``H0: selective risk >= target`` on cuts with ``trials`` rows and ``loss_sum``.

    Exact binomial for 0/B losses (``binary``), Hoeffding-Bentkus otherwise; losses scaled by B.

    Parameters
    ----------
    loss_sum, trials : array_like
        Sum of the accepted losses (loss units) and the number of accepted rows, per cut.
    target : float
        The target selective risk, in loss units, in (0, B).
    loss_bound : float
        B, the largest loss a prediction can have.
    binary : bool
        Whether every loss is 0 or B.

    Returns
    -------
    numpy.ndarray
        The p-values, per cut.
    """
    loss_sum = np.asarray(loss_sum, dtype=float) / loss_bound
    trials = np.asarray(trials, dtype=float)
    rate = target / loss_bound
    if binary:
        return _binomial_pvalue(np.round(loss_sum), trials, rate)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(trials > 0, loss_sum / np.maximum(trials, 1.0), 0.0)
    return _hoeffding_bentkus_pvalue(mean, trials, rate)


def _risk_upper_bound(
    loss_sum: Any, trials: Any, delta: float, loss_bound: float, binary: bool
) -> np.ndarray:
    """Pointwise ``(1 - delta)`` upper confidence bound of the selective risk of fixed cuts (loss units).

    Clopper-Pearson for 0/B losses, the inversion of the Hoeffding-Bentkus p-value (bisection)
    otherwise; B where nothing is accepted. The dual of :func:`_risk_pvalue`: the p-value at
    ``target`` is <= delta iff the bound is <= ``target``.

    Parameters
    ----------
    loss_sum, trials : array_like
        Sum of the accepted losses (loss units) and the number of accepted rows, per cut.
    delta : float
        1 - confidence.
    loss_bound : float
        B.
    binary : bool
        Whether every loss is 0 or B.

    Returns
    -------
    numpy.ndarray
        The bounds, in loss units.
    """
    x = np.asarray(loss_sum, dtype=float) / loss_bound
    k = np.asarray(trials, dtype=float)
    x, k = np.broadcast_arrays(x, k)
    if binary:
        x = np.round(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            high = np.where(x < k, _sps.beta.isf(delta, x + 1.0, np.maximum(k - x, 1e-300)), 1.0)
        return np.where(k > 0, np.nan_to_num(high, nan=1.0), 1.0) * loss_bound
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, x / np.maximum(k, 1.0), 0.0)
    low, high = np.array(mean, dtype=float), np.ones_like(mean, dtype=float)
    for _ in range(50):  # the p-value decreases in the rate above the mean: bisect for p = delta
        mid = (low + high) / 2
        rejected = _hoeffding_bentkus_pvalue(mean, k, np.clip(mid, 1e-12, 1 - 1e-12)) <= delta
        high = np.where(rejected, mid, high)
        low = np.where(rejected, low, mid)
    return np.where(k > 0, high, 1.0) * loss_bound


# Cached for the reason _coverage_rank is.
@functools.lru_cache(maxsize=1024)
def _coverage_lower_bound(accepted: int, n: int, delta: float) -> float:
    """``(1 - delta)`` lower bound of the population coverage of the cut at the ``accepted``-th smallest score.

    ``P(F(s_(k)) < b) <= P(Binomial(n, b) >= k)``; the bound is the largest ``b`` with that
    tail <= delta, the ``delta`` quantile of Beta(k, n - k + 1) (Clopper-Pearson's lower bound).

    Parameters
    ----------
    accepted : int
        ``k``, the rank of the cut's score among the ``n`` calibration scores.
    n : int
        Number of calibration rows.
    delta : float
        1 - confidence.

    Returns
    -------
    float
        The bound, 0 for ``k == 0``.
    """
    if accepted <= 0:
        return 0.0
    return float(_sps.beta.ppf(delta, accepted, n - accepted + 1))


def _dkw_coverage_lower_bound(accepted: float, n: int, delta: float) -> float:
    """Coverage lower bound valid for a threshold chosen from the same rows: one-sided DKW (Massart 1990).

    ``P(sup_t (F_n(t) - F(t)) > eps) <= exp(-2 n eps^2)``, so ``accepted / n - sqrt(log(1/delta) / (2n))``.

    Parameters
    ----------
    accepted : float
        Calibration rows the cut accepts.
    n : int
        Number of calibration rows.
    delta : float
        1 - confidence.

    Returns
    -------
    float
        The bound, clipped at 0.
    """
    return max(0.0, accepted / n - math.sqrt(math.log(1.0 / delta) / (2.0 * n)))


# --------------------------------------------------------------------------------------------
# The certified selection function
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CertifiedSelection(SelectionFunction):
    """A selection function with its guarantee: what :meth:`rejectopt.targets.Target.fit` returns with a confidence.

    Deterministic (``accept_prob`` 0 or 1). With probability at least ``confidence`` over the
    i.i.d. calibration sample, the population quantity of the target meets ``bound``: selective
    risk <= ``bound`` (a risk target, loss units), coverage >= ``bound`` (a coverage target),
    FPR <= ``bound`` and TPR >= ``coverage_bound`` (a tpr-fpr target).

    Parameters
    ----------
    threshold, accept_prob : float
        As :class:`~rejectopt.selective.SelectionFunction`.
    bound : float
        The certified bound (see above).
    confidence : float
        ``1 - delta``.
    n_calibration : int
        Calibration rows the guarantee rests on (ID and OOD rows for tpr-fpr).
    method : str
        ``"ltt"`` (Learn-then-Test fixed-sequence testing) or ``"sgr"`` for a risk target,
        ``"order-statistic"`` for coverage, ``"order-statistic+clopper-pearson"`` for tpr-fpr.
    risk_bound : float
        ``(1 - delta)`` upper bound of the selective risk (loss units): ``bound`` for a risk
        target; for a coverage target the pointwise bound of the chosen cut's risk; NaN for tpr-fpr.
    coverage_bound : float
        ``(1 - delta)`` lower bound of the coverage (TPR for tpr-fpr): ``bound`` for a coverage
        target; for a risk target the one-sided DKW bound, valid for a data-chosen threshold.
    loss_bound : float
        B, the largest loss a prediction can have, that ``risk_bound`` rests on: both tails
        scale the losses by B (the binomial tail needs losses in {0, B}, Hoeffding-Bentkus in
        [0, B]), so a loss above B voids the risk bound. 100 for the 0/100 loss, K - 1 for the
        MAE on K ordinal labels, a declared ``loss_bound`` otherwise. NaN where no risk bound
        rests on it: a tpr-fpr target, or a coverage target fitted without a known B.

    Examples
    --------
    >>> from rejectopt.targets import Target
    >>> loss = [0] * 90 + [100] * 10
    >>> selection = Target("coverage", 0.5, confidence=0.9).fit(loss, range(100))
    >>> selection.threshold, round(selection.bound, 3), selection.method, selection.loss_bound
    (56.0, 0.501, 'order-statistic', 100.0)
    """

    bound: float = float("nan")
    confidence: float = float("nan")
    n_calibration: int = 0
    method: str = ""
    risk_bound: float = float("nan")
    coverage_bound: float = float("nan")
    loss_bound: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        """The selection alone, as :meth:`SelectionFunction.to_dict` (the guarantee: :attr:`certificate`)."""
        return SelectionFunction(self.threshold, self.accept_prob).to_dict()

    @property
    def certificate(self) -> dict[str, Any]:
        """The guarantee, JSON-able (NaN as None).

        ``{bound, confidence, n_calibration, method, risk_bound, coverage_bound, loss_bound}``;
        ``model.json`` format_version 2 had all but ``loss_bound``.
        """

        def number(value):
            return None if math.isnan(value) else float(value)

        return {
            "bound": number(self.bound),
            "confidence": float(self.confidence),
            "n_calibration": int(self.n_calibration),
            "method": self.method,
            "risk_bound": number(self.risk_bound),
            "coverage_bound": number(self.coverage_bound),
            "loss_bound": number(self.loss_bound),
        }


#: The keys of :attr:`CertifiedSelection.certificate` before ``loss_bound`` (``model.json`` format_version 2).
CERTIFICATE_KEYS_V2 = (
    "bound",
    "confidence",
    "n_calibration",
    "method",
    "risk_bound",
    "coverage_bound",
)
#: The keys of :attr:`CertifiedSelection.certificate` (``model.json`` format_version 3).
CERTIFICATE_KEYS = CERTIFICATE_KEYS_V2 + ("loss_bound",)


def certified_from_dict(
    selection: Any,
    certificate: Any,
    *,
    name: str = "certificate",
    format_version: int | None = None,
) -> CertifiedSelection:
    """Inverse of ``(to_dict(), certificate)``, for untrusted input (``model.json``).

    A certificate of ``model.json`` format_version 2 has no ``loss_bound``; it is read with
    ``loss_bound`` NaN. ``loss_bound`` is a finite number > 0, or null where no risk bound
    rests on it: never for a risk target's method (``"ltt"``, ``"sgr"``), never beside a
    ``risk_bound``.

    Parameters
    ----------
    selection : dict
        ``{"threshold": ..., "accept_prob": ...}``.
    certificate : dict
        :attr:`CertifiedSelection.certificate`.
    name : str, default "certificate"
        Prefix of the field names in the messages.
    format_version : {2, 3} or None, default None
        The ``model.json`` version the certificate comes from: 2 reads the keys without
        ``loss_bound`` (``CERTIFICATE_KEYS_V2``), 3 requires it (``CERTIFICATE_KEYS``);
        None reads either.

    Returns
    -------
    CertifiedSelection
        The certified selection.

    Raises
    ------
    ValueError
        Naming the missing, unknown or malformed field.

    Examples
    --------
    >>> certificate = {"bound": 5.0, "confidence": 0.9, "n_calibration": 750, "method": "ltt",
    ...                "risk_bound": 5.0, "coverage_bound": 0.4}
    >>> certified_from_dict({"threshold": 0.3, "accept_prob": 0.0}, certificate, format_version=2).loss_bound
    nan
    >>> certified_from_dict({"threshold": 0.3, "accept_prob": 0.0}, certificate, format_version=3)
    Traceback (most recent call last):
        ...
    ValueError: certificate.loss_bound is missing: a format_version 3 certificate records B, the largest loss a prediction can have, that its risk bound rests on (null where none does)
    """
    base = SelectionFunction.from_dict(selection, name="selection")
    if format_version is None:
        recorded = isinstance(certificate, dict) and "loss_bound" in certificate
        keys = CERTIFICATE_KEYS if recorded else CERTIFICATE_KEYS_V2
    else:
        keys = CERTIFICATE_KEYS if format_version >= 3 else CERTIFICATE_KEYS_V2
    given = set(certificate) if isinstance(certificate, dict) else None
    if keys is CERTIFICATE_KEYS and given == set(CERTIFICATE_KEYS_V2):
        raise ValueError(
            f"{name}.loss_bound is missing: a format_version 3 certificate records B, the largest loss a "
            "prediction can have, that its risk bound rests on (null where none does)"
        )
    if keys is CERTIFICATE_KEYS_V2 and given == set(CERTIFICATE_KEYS):
        raise ValueError(
            f"{name}.loss_bound is not a field of a format_version {format_version} certificate "
            "(format_version 3 adds it)"
        )
    if given != set(keys):
        raise ValueError(f"{name} must be an object with keys {', '.join(sorted(keys))}")
    values = {}
    for key in ("bound", "risk_bound", "coverage_bound"):
        value = certificate[key]
        if value is None:
            value = float("nan")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name}.{key} must be a number or null, got {value!r}")
        values[key] = float(value)
    confidence = certificate["confidence"]
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not 0 < confidence < 1
    ):
        raise ValueError(f"{name}.confidence must be a number in (0, 1), got {confidence!r}")
    n_calibration = certificate["n_calibration"]
    if isinstance(n_calibration, bool) or not isinstance(n_calibration, int) or n_calibration < 1:
        raise ValueError(f"{name}.n_calibration must be an integer >= 1, got {n_calibration!r}")
    method = certificate["method"]
    if not isinstance(method, str):
        raise ValueError(f"{name}.method must be text, got {method!r}")
    loss_bound = certificate.get("loss_bound")
    if loss_bound is None:
        values["loss_bound"] = float("nan")
        if "loss_bound" in keys and method in RISK_METHODS:
            raise ValueError(
                f"{name}.loss_bound is null but method {method!r} certifies a risk, whose bound rests on "
                "B, the largest loss a prediction can have"
            )
        if "loss_bound" in keys and not math.isnan(values["risk_bound"]):
            raise ValueError(
                f"{name}.loss_bound is null but {name}.risk_bound is {values['risk_bound']:g}: a risk "
                "bound rests on B, the largest loss a prediction can have"
            )
    elif (
        isinstance(loss_bound, bool)
        or not isinstance(loss_bound, (int, float))
        or not math.isfinite(loss_bound)
        or loss_bound <= 0
    ):
        raise ValueError(
            f"{name}.loss_bound must be a finite number > 0 (B, the largest loss a prediction can have) "
            f"or null, got {loss_bound!r}"
        )
    else:
        values["loss_bound"] = float(loss_bound)
    return CertifiedSelection(
        base.threshold,
        base.accept_prob,
        confidence=float(confidence),
        n_calibration=n_calibration,
        method=method,
        **values,
    )


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------
def _resolve_loss_bound(loss: np.ndarray, loss_bound: Any) -> tuple[float, bool]:
    """B (the largest loss by definition) and whether every loss is 0 or B.

    ``None`` means the project's 0/100 loss and is accepted only when every loss is 0 or 100;
    any other loss must declare its bound (MAE on K ordinal labels: K - 1), never the sample's max.

    Parameters
    ----------
    loss : numpy.ndarray
        The calibration losses (validated, >= 0).
    loss_bound : float or None
        The declared bound.

    Returns
    -------
    (float, bool)
        B and whether the exact binomial tail applies.
    """
    if loss_bound is None:
        if not np.all((loss == 0.0) | (loss == ZERO_ONE_BOUND)):
            bad = int(np.flatnonzero((loss != 0.0) & (loss != ZERO_ONE_BOUND))[0])
            raise ValueError(
                f"a certified risk target needs the loss's bound: loss[{bad}] = {loss[bad]:g} is not a "
                "0/100 loss; pass loss_bound (the largest loss a prediction can have by the loss's "
                "definition: 100 for the 0/100 loss, K - 1 for the MAE on K ordinal labels)"
            )
        return ZERO_ONE_BOUND, True
    bound = float(loss_bound)
    if not (math.isfinite(bound) and bound > 0):
        raise ValueError(
            f"loss_bound must be a finite number > 0 (the largest loss a prediction can have), "
            f"got {loss_bound!r}"
        )
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


def _rows_needed(target_risk: float, delta: float, loss_bound: float) -> int:
    """Tested rows without an error needed to certify ``target_risk`` at level ``delta``: ``ceil(log delta / log(1 - r))``.

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


def _infeasible_risk(
    target_risk: float,
    confidence: float,
    method: str,
    n: int,
    n_tested: int,
    rows_needed: int,
    best: float,
    why: str,
) -> InfeasibleTargetError:
    """The error of a risk target the sample cannot certify, with advice that certifies on these rows.

    ``best`` is a target risk the same procedure certifies on the same rows (NaN: none below B);
    where even error-free rows would be too few (``n_tested < rows_needed``), the message says how
    many rows the target needs instead of suggesting a value the rows cannot reach.
    """
    head = (
        f"target risk={target_risk:g} cannot be certified at confidence {confidence:g} on these {n} "
        f"calibration rows (method {method}): "
    )
    if math.isnan(best):
        advice = "no target risk below the loss's bound can be certified on these rows"
    else:
        advice = f"the smallest target risk the method certifies on these rows is {best:.8g}; ask for risk >= {best:.8g}"
    if n_tested < rows_needed:
        total = (
            rows_needed
            if n_tested == n
            else f"about {math.ceil(rows_needed * n / max(n_tested, 1))}"
        )
        text = (
            f"{head}even without an error, risk={target_risk:g} at confidence {confidence:g} needs at least "
            f"{rows_needed} "
            f"tested rows ({total} calibration rows), and {n_tested} are tested; {advice}, a lower "
            "confidence, or more calibration rows"
        )
    else:
        text = f"{head}{why}; {advice}, a lower confidence, or more calibration rows"
    error = InfeasibleTargetError(text)
    error.best_bound = best
    error.confidence = confidence
    error.n_calibration = int(n)
    error.rows_needed = int(rows_needed)
    return error


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

    Returns
    -------
    float
        The score ``a`` of the start cut.
    """
    if loss.size == 0:
        return math.inf
    values, trials, sums = _prefix_sums(loss, s)
    scale = n_test / loss.size
    predicted = _risk_pvalue(sums * scale, trials * scale, target_risk, loss_bound, binary)
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

    @property
    def n_tested(self) -> int:
        return int(self.trials[-1]) if self.trials.size else 0


def _ltt_rows(
    loss: np.ndarray, s: np.ndarray, start_fraction: float, random_state: Any
) -> _LTTRows:
    """Split the rows (seeded): ``round(start_fraction * n)`` start rows (none below ``MIN_START_ROWS``), the rest tested."""
    n = loss.size
    n_start = int(round(start_fraction * n))
    if n_start < MIN_START_ROWS:
        n_start = 0
    order = np.random.default_rng(random_state).permutation(n)
    start_rows, test_rows = order[:n_start], order[n_start:]
    values, trials, sums = _prefix_sums(loss[test_rows], s[test_rows])
    return _LTTRows(loss[start_rows], s[start_rows], values, trials, sums)


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
    start = _ltt_start(
        rows.start_loss, rows.start_s, target_risk, chain_delta, rows.n_tested, loss_bound, binary
    )
    return (
        delta * share,
        chain_delta,
        start,
        int(np.searchsorted(rows.values, start, side="right")) - 1,
    )


def _ltt_certifies(
    rows: _LTTRows, target_risk: float, delta: float, loss_bound: float, binary: bool
) -> bool:
    """Whether Learn-then-Test certifies ``target_risk`` on these rows: the full set's or the start cut's test rejects."""
    if not 0.0 < target_risk < loss_bound or rows.n_tested == 0:
        return False
    full_delta, chain_delta, _, first = _ltt_plan(rows, target_risk, delta, loss_bound, binary)
    at = [-1] if first < 0 else [-1, first]
    p = _risk_pvalue(rows.sums[at], rows.trials[at], target_risk, loss_bound, binary)
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
) -> CertifiedSelection:
    """The full set tested alone at ``delta * w``, else fixed-sequence testing from a start at ``delta * (1 - w)``."""
    delta = 1.0 - confidence
    n = loss.size
    rows = _ltt_rows(loss, s, start_fraction, random_state)
    full_delta, chain_delta, start, first = _ltt_plan(rows, target_risk, delta, loss_bound, binary)
    pvalues = _risk_pvalue(rows.sums, rows.trials, target_risk, loss_bound, binary)
    if pvalues.size and pvalues[-1] <= full_delta:
        threshold, accept_prob = math.inf, 1.0
    elif first < 0 or pvalues[first] > chain_delta:
        best = _smallest_certified(
            lambda a: _ltt_certifies(rows, a, delta, loss_bound, binary), loss_bound
        )
        where = "the full set" if math.isinf(start) else f"threshold {start:.6g}"
        why = (
            f"the full set tested alone (level {full_delta:.3g}) and the fixed-sequence test from its start "
            f"({where}, level {chain_delta:.3g}) both fail"
            if chain_delta > 0
            else f"the full set tested alone (level {full_delta:.3g}) fails"
        )
        raise _infeasible_risk(
            target_risk,
            confidence,
            "ltt",
            n,
            rows.n_tested,
            _rows_needed(target_risk, delta, loss_bound),
            best,
            why,
        )
    else:
        failed = np.flatnonzero(pvalues[first:] > chain_delta)
        if failed.size == 0:
            threshold, accept_prob = math.inf, 1.0
        else:
            threshold, accept_prob = float(rows.values[first + int(failed[0])]), 0.0
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
    )


def _sgr_rows_needed(target_risk: float, delta: float, loss_bound: float) -> int:
    """Smallest ``n`` whose error-free rows pass SGR's test at ``delta / ceil(log2 n)``."""
    n = _rows_needed(target_risk, delta, loss_bound)
    while n < _rows_needed(target_risk, delta / max(1, math.ceil(math.log2(n))), loss_bound):
        n += 1
    return n


def fit_certified_risk(
    loss: Any,
    s: Any,
    target_risk: float,
    confidence: float,
    *,
    loss_bound: Any = None,
    method: str | None = None,
    start_fraction: float = START_FRACTION,
    random_state: Any = 0,
) -> CertifiedSelection:
    """The largest-coverage selection whose population selective risk is <= ``target_risk`` w.p. >= ``confidence``.

    Parameters
    ----------
    loss, s : array_like of shape (n,)
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
        "ltt": share of the rows that chooses the start of the test.
    random_state : int, default 0
        "ltt": seed of the rows chosen for the start.

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
    loss, s = _validate_loss_and_scores(loss, s)
    confidence = check_confidence(confidence)
    method = RISK_METHODS[0] if method is None else method
    if method not in RISK_METHODS:
        raise ValueError(
            f"method must be one of {', '.join(map(repr, RISK_METHODS))}, got {method!r}"
        )
    bound, binary = _resolve_loss_bound(loss, loss_bound)
    target_risk = float(target_risk)
    if not 0.0 < target_risk < bound:
        raise ValueError(
            f"a certified target risk must lie in (0, {bound:g}) (loss units, loss_bound {bound:g}), "
            f"got {target_risk:g}"
        )
    if method == "ltt":
        if not 0.0 <= start_fraction < 1.0:
            raise ValueError(f"start_fraction must lie in [0, 1), got {start_fraction!r}")
        return _fit_ltt(
            loss, s, target_risk, confidence, bound, binary, start_fraction, random_state
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
        )

    def certifies(a):  # SGR's own decision at target a (a binary search: O(n log n) per target)
        try:
            fit_geifman_el_yaniv(loss, s, a, delta, loss_scale=bound)
        except InfeasibleTargetError:
            return False
        return True

    n = loss.size
    needed = _sgr_rows_needed(target_risk, delta, bound)
    raise _infeasible_risk(
        target_risk,
        confidence,
        "sgr",
        n,
        n,
        needed,
        _smallest_certified(certifies, bound),
        "no threshold of the binary search has a bound below the target",
    )


# --------------------------------------------------------------------------------------------
# Coverage targets
# --------------------------------------------------------------------------------------------
# Cached: it depends on (n, w, delta) alone, which a validation or an experiment repeats over hundreds of
# calibration draws of one size, and each call evaluates a binomial tail at all n + 1 ranks.
@functools.lru_cache(maxsize=1024)
def _coverage_rank(n: int, target_coverage: float, delta: float) -> int:
    """Smallest ``k`` with ``P(Binomial(n, w) >= k) <= delta``; ``n + 1`` when no order statistic certifies ``w``."""
    tails = _sps.binom.sf(np.arange(n + 1) - 1, n, target_coverage)  # P(Bin >= k), k = 0..n
    ok = np.flatnonzero(tails <= delta)
    return int(ok[0]) if ok.size else n + 1


def fit_certified_coverage(
    loss: Any, s: Any, target_coverage: float, confidence: float, *, loss_bound: Any = None
) -> CertifiedSelection:
    """The smallest cut whose population coverage is >= ``target_coverage`` w.p. >= ``confidence``.

    Parameters
    ----------
    loss, s : array_like of shape (n,)
        Calibration losses (for the risk bound only) and uncertainty scores.
    target_coverage : float
        ``w`` in (0, 1].
    confidence : float
        1 - delta.
    loss_bound : float or None, default None
        B for the risk bound; None for the 0/100 loss. Another loss without it gets a NaN
        risk bound and a NaN ``loss_bound``.

    Returns
    -------
    CertifiedSelection
        ``(s_(k), 1)`` or, when ``n`` rows cannot certify ``w``, ``(inf, 1)`` (accept all, coverage 1);
        ``loss_bound`` the B its risk bound rests on.
    """
    loss, s = _validate_loss_and_scores(loss, s)
    confidence = check_confidence(confidence)
    delta = 1.0 - confidence
    n = loss.size
    k = _coverage_rank(n, float(target_coverage), delta)
    if k > n:
        threshold, coverage_bound = math.inf, 1.0
    else:
        threshold, coverage_bound = float(np.sort(s)[k - 1]), _coverage_lower_bound(k, n, delta)
    accepted = s <= threshold
    try:
        bound, binary = _resolve_loss_bound(loss, loss_bound)
    except ValueError:  # no B: no risk bound, and nothing rests on B
        bound = risk_bound = float("nan")
    else:
        risk_bound = float(
            _risk_upper_bound(loss[accepted].sum(), accepted.sum(), delta, bound, binary)
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
    )


# --------------------------------------------------------------------------------------------
# OOD: bounded TPR-FPR
# --------------------------------------------------------------------------------------------
def fit_certified_tpr_fpr(
    loss: Any, is_ood: Any, s: Any, tpr_min: float, fpr_max: float, confidence: float
) -> CertifiedSelection:
    """TPR >= ``tpr_min`` and FPR <= ``fpr_max`` with probability >= ``confidence`` (union bound, delta/2 each).

    The cut is the coverage cut of the ID rows at ``tpr_min`` (the smallest certified, so the
    least OOD and, for a proper score, the least risk); its FPR is fixed given the ID rows and
    bounded by Clopper-Pearson on the independent OOD rows.

    Parameters
    ----------
    loss : array_like of shape (n,)
        Ignored but for its length (OOD rows' losses may be NaN).
    is_ood : array_like of bool of shape (n,)
        True for an OOD row.
    s : array_like of shape (n,)
        Uncertainty scores.
    tpr_min, fpr_max : float
        The bounds, in [0, 1].
    confidence : float
        1 - delta.

    Returns
    -------
    CertifiedSelection
        ``bound`` the FPR's upper bound, ``coverage_bound`` the TPR's lower bound; ``risk_bound``
        and ``loss_bound`` NaN (no loss is bounded).

    Raises
    ------
    InfeasibleTargetError
        The FPR's bound exceeds ``fpr_max``; the message gives it.
    """
    confidence = check_confidence(confidence)
    is_ood = as_ood_mask(is_ood)
    s = np.asarray(s, dtype=float)
    if s.shape != is_ood.shape or len(np.asarray(loss)) != s.size:
        raise ValueError(
            f"loss, is_ood and uncertainty must have one length, got {len(np.asarray(loss))}, "
            f"{is_ood.size} and {s.size}"
        )
    if np.isnan(s).any():
        raise ValueError(f"uncertainty contains NaN at index {int(np.flatnonzero(np.isnan(s))[0])}")
    n_id, n_ood = int((~is_ood).sum()), int(is_ood.sum())
    if n_id == 0 or n_ood == 0:
        raise ValueError(
            f"a certified tpr-fpr target needs ID and OOD rows, got {n_id} ID and {n_ood} OOD"
        )
    delta = (1.0 - confidence) / 2
    s_id = np.sort(s[~is_ood])
    if tpr_min <= 0:  # accept nothing: FPR is 0 for every input, no draw can miss fpr <= fpr_max
        return CertifiedSelection(
            -math.inf,
            0.0,
            bound=0.0,
            confidence=confidence,
            n_calibration=int(s.size),
            method="order-statistic+clopper-pearson",
            risk_bound=float("nan"),
            coverage_bound=0.0,
            loss_bound=float("nan"),
        )
    else:
        k = _coverage_rank(n_id, float(tpr_min), delta)
        if k > n_id:
            threshold, accept_prob, tpr_bound = math.inf, 1.0, 1.0
        else:
            threshold, accept_prob, tpr_bound = (
                float(s_id[k - 1]),
                1.0,
                _coverage_lower_bound(k, n_id, delta),
            )
    selection = SelectionFunction(threshold, accept_prob)
    ood_accepted = float(selection.acceptance_probability(s[is_ood]).sum())
    fpr_bound = float(_risk_upper_bound(ood_accepted, n_ood, delta, 1.0, True))
    if fpr_bound > fpr_max:
        error = InfeasibleTargetError(
            f"target tpr={tpr_min:g},fpr={fpr_max:g} cannot be certified at confidence {confidence:g} on these "
            f"{s.size} rows ({n_id} ID, {n_ood} OOD): the threshold certifying TPR >= {tpr_min:g} accepts "
            f"{int(ood_accepted)} OOD rows, whose FPR upper bound ({1 - delta:.1%}) is {fpr_bound:.4g}; ask for "
            f"fpr >= {fpr_bound:.4g}, a lower tpr or confidence, or more rows"
        )
        error.best_bound = fpr_bound
        error.confidence = confidence
        error.n_calibration = int(s.size)
        raise error
    return CertifiedSelection(
        threshold,
        accept_prob,
        bound=fpr_bound,
        confidence=confidence,
        n_calibration=int(s.size),
        method="order-statistic+clopper-pearson",
        risk_bound=float("nan"),
        coverage_bound=tpr_bound,
        loss_bound=float("nan"),
    )


# --------------------------------------------------------------------------------------------
# Checking a certified target: the per-threshold table and the validity on the user's rows
# --------------------------------------------------------------------------------------------
# They take a rejectopt.targets.Target, which sits above this module: they read its kind, value
# and confidence, fit it with its own ``fit``, and make its plug-in twin with ``replace``.
def _certified_target(target: Any, caller: str) -> Any:
    """``target`` if it is a certified risk or coverage target, else ValueError naming ``caller``."""
    if getattr(target, "kind", None) not in ("risk", "coverage"):
        raise ValueError(f"{caller} takes a risk=L or coverage=W Target, got {target!r}")
    if target.confidence is None:
        raise ValueError(
            f"{caller} needs a certified target: give it a confidence, e.g. "
            f"Target({target.kind!r}, {target.value:g}, confidence=0.95)"
        )
    return target


def certification_table(
    loss: Any, uncertainty: Any, target: Any, *, loss_bound: Any = None
) -> pd.DataFrame:
    """Per threshold: rows accepted, empirical risk, upper confidence bound and p-value.

    One row per distinct calibration score ``t``, for the cut accepting ``s <= t``. The bounds
    and p-values are *pointwise* (each as if its threshold had been fixed in advance); the
    certified threshold is :meth:`Target.fit`'s, which handles the choice among thresholds.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (n,)
        Calibration losses and uncertainty scores.
    target : Target
        A risk or coverage target with a confidence (``1 - delta``).
    loss_bound : float or None, default None
        The largest loss by the loss's definition; None for the 0/100 loss.

    Returns
    -------
    pandas.DataFrame
        Columns ``threshold``, ``n_accepted``, ``coverage``, ``empirical_risk``,
        ``upper_bound`` (the risk's ``(1 - delta)`` bound: Clopper-Pearson for 0/B losses,
        Hoeffding-Bentkus otherwise) and ``p_value`` (risk: of "the cut's risk >= target";
        coverage: of "the cut's population coverage < target", from the order statistics).

    Examples
    --------
    >>> from rejectopt.targets import Target
    >>> table = certification_table([0, 0, 0, 100], [0.1, 0.2, 0.3, 0.4], Target("risk", 50, confidence=0.9))
    >>> table[["threshold", "n_accepted", "empirical_risk", "upper_bound", "p_value"]].round(3)
       threshold  n_accepted  empirical_risk  upper_bound  p_value
    0        0.1           1             0.0       90.000    0.500
    1        0.2           2             0.0       68.377    0.250
    2        0.3           3             0.0       53.584    0.125
    3        0.4           4            25.0       67.954    0.312
    """
    target = _certified_target(target, "certification_table")
    loss, s = _validate_loss_and_scores(loss, uncertainty)
    delta = 1.0 - target.confidence
    n = loss.size
    bound, binary = _resolve_loss_bound(loss, loss_bound)
    values, trials, sums = _prefix_sums(loss, s)
    upper = _risk_upper_bound(sums, trials, delta, bound, binary)
    if target.kind == "risk":
        pvalues = (
            _risk_pvalue(sums, trials, target.value, bound, binary)
            if target.value < bound
            else np.ones_like(trials)
        )
    else:  # H0: population coverage of the cut < value; P(Binomial(n, value) >= accepted)
        pvalues = _sps.binom.sf(trials - 1, n, target.value)
    return pd.DataFrame(
        {
            "threshold": values,
            "n_accepted": trials.astype(int),
            "coverage": trials / n,
            "empirical_risk": sums / trials,
            "upper_bound": upper,
            "p_value": pvalues,
        }
    )


def _population_sums(
    loss: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, their counts and loss sums, and the cumulative counts / sums below each (leading 0)."""
    values, inverse = np.unique(s, return_inverse=True)
    counts = np.bincount(inverse, minlength=values.size).astype(float)
    sums = np.bincount(inverse, weights=loss, minlength=values.size)
    return (
        values,
        np.stack([counts, sums]),
        np.concatenate([[0.0], np.cumsum(counts)]),
        np.concatenate([[0.0], np.cumsum(sums)]),
    )


def _evaluate(selection: SelectionFunction, table: tuple) -> tuple[float, float]:
    """Exact expected (coverage, selective risk) of ``selection`` on rows summarised by :func:`_population_sums`."""
    values, group, cum_counts, cum_sums = table
    below = int(np.searchsorted(values, selection.threshold, side="left"))
    mass, total = cum_counts[below], cum_sums[below]
    if below < values.size and values[below] == selection.threshold:
        mass += selection.accept_prob * group[0, below]
        total += selection.accept_prob * group[1, below]
    return mass / cum_counts[-1], (total / mass if mass > 0 else float("nan"))


@dataclass(frozen=True)
class TargetValidity:
    """What :func:`validate_target` measured: per-draw outcomes, their summary, and a figure.

    Parameters
    ----------
    target : Target
        The certified target checked.
    n_rows, n_calibration : int
        Rows taken as the population, and drawn for each calibration sample.
    draws, summary : pandas.DataFrame
        As :func:`validate_target` returns them.
    """

    target: Any
    n_rows: int
    n_calibration: int
    draws: pd.DataFrame
    summary: pd.DataFrame

    @property
    def infeasible_rate(self) -> float:
        """Share of the draws on which the certified target could not be certified (they accept nothing).

        Read it first: a high share means the summary's coverage and risk describe the few draws
        that did certify (the risk) and the zeros of the others (the coverage).
        """
        return float(self.summary.loc["certified", "infeasible_rate"])

    def plot(self, ax: Any = None) -> Any:
        """Histograms of the population risk (risk target) or coverage (coverage target) per method.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default None
            Where to draw; None makes a new figure.

        Returns
        -------
        matplotlib.figure.Figure
            The figure, with the target as a vertical line and the violation rates in the legend.
        """
        # matplotlib: only the figure needs it (0.3 s to import)
        from matplotlib.figure import Figure

        if ax is None:
            ax = Figure(figsize=(6.4, 3.6), layout="constrained").add_subplot()
        column = "population_risk" if self.target.kind == "risk" else "population_coverage"
        for method, rows in self.draws.groupby("method", sort=False):
            row = self.summary.loc[method]
            values = rows[column].dropna()
            ax.hist(
                values,
                bins=30,
                alpha=0.55,
                label=f"{method}: violated {row.violation_rate:.1%} "
                f"[{row.violation_low:.1%}, {row.violation_high:.1%}]",
            )
        ax.axvline(
            self.target.value,
            color="black",
            linestyle="--",
            label=f"target {self.target.kind}="
            f"{self.target.value:g} (delta {1 - self.target.confidence:g})",
        )
        ax.set_xlabel(
            ("selective risk" if self.target.kind == "risk" else "coverage") + " on all rows"
        )
        ax.set_ylabel("calibration draws")
        ax.set_title(
            f"{len(self.draws) // max(self.draws['method'].nunique(), 1)} draws of {self.n_calibration} "
            f"of {self.n_rows} rows",
            fontsize="medium",
        )
        ax.legend(fontsize="small")
        return ax.figure


def _draw_outcome(
    selection: Any, population: tuple, test: tuple
) -> tuple[float, float, float, float]:
    """Population and test (coverage, risk) of a draw's selection; an infeasible draw (None) accepts nothing."""
    if selection is None:
        return 0.0, float("nan"), 0.0, float("nan")
    return (*_evaluate(selection, population), *_evaluate(selection, test))


def validate_target(
    loss: Any,
    uncertainty: Any,
    target: Any,
    *,
    repeats: int = 500,
    calibration_fraction: float = 0.5,
    loss_bound: Any = None,
    method: str | None = None,
    random_state: Any = 0,
    progress: Any = None,
) -> TargetValidity:
    """How often a certified target fails on a user's own rows, beside the plug-in target.

    All ``N`` rows are taken as the population: ``repeats`` times, a calibration sample of
    ``calibration_fraction * N`` rows is drawn without replacement, the certified target and
    its plug-in twin (same kind and value, no confidence) are fitted on it, and the population
    coverage and selective risk of each selection are computed exactly on all ``N`` rows (and on
    the rows left out, the test part). A draw *violates* when the population risk exceeds the
    target (risk) or the population coverage falls below it (coverage); an infeasible draw
    rejects everything and does not violate. The certified violation rate should stay at or
    below delta up to its Clopper-Pearson interval; sampling without replacement only helps.

    Parameters
    ----------
    loss, uncertainty : array_like of shape (N,)
        Losses and uncertainty scores of the user's rows.
    target : Target
        A risk or coverage target with a confidence.
    repeats : int, default 500
        Calibration draws.
    calibration_fraction : float, default 0.5
        Share of the rows in each calibration sample, in (0, 1).
    loss_bound : float or None, default None
        The largest loss by the loss's definition; None for the 0/100 loss.
    method : {"ltt", "sgr"} or None, default None
        The certified risk target's method (:meth:`Target.fit`).
    random_state : int or None, default 0
        Seed of the draws.
    progress : callable or None, default None
        Called as ``progress(done, total)`` after each draw (e.g. to print how far a long check is).

    Returns
    -------
    TargetValidity
        ``draws`` (pandas.DataFrame: ``repeat``, ``method`` ("certified" or "plug-in"),
        ``population_coverage``, ``population_risk``, ``test_coverage``, ``test_risk``,
        ``violated``, ``infeasible``), ``summary`` (per method: ``violations``, ``violation_rate``
        and its 95 % Clopper-Pearson ``violation_low`` / ``violation_high``, ``delta``,
        ``infeasible_rate``, ``mean_coverage``, ``mean_risk``), ``target``, ``n_rows``,
        ``n_calibration``, ``infeasible_rate`` (the certified draws that could not certify), and
        ``plot(ax=None)`` drawing the distributions (a matplotlib Figure).

    Raises
    ------
    ValueError
        Bad input, naming the argument, or the user's row (not a draw's) that is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> from rejectopt.targets import Target
    >>> rng = np.random.default_rng(0)
    >>> u = rng.random(4000)
    >>> loss = 100.0 * (rng.random(4000) < u / 2)  # P(error | u) = u / 2
    >>> check = validate_target(loss, u, Target("risk", 10, confidence=0.9), repeats=50)
    >>> check.summary["violation_rate"].to_dict(), float(check.summary["delta"].iloc[0])
    ({'certified': 0.02, 'plug-in': 0.6}, 0.1)
    """
    target = _certified_target(target, "validate_target")
    loss, s = _validate_loss_and_scores(
        loss, uncertainty
    )  # checked on all rows: a message names the user's row
    if target.kind == "risk":
        _resolve_loss_bound(loss, loss_bound)
    if progress is not None and not callable(progress):
        raise ValueError(
            f"progress must be a callable progress(done, total) or None, got {progress!r}"
        )
    if not 0.0 < float(calibration_fraction) < 1.0:
        raise ValueError(f"calibration_fraction must lie in (0, 1), got {calibration_fraction!r}")
    if int(repeats) != repeats or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    n_rows = loss.size
    n_cal = int(round(float(calibration_fraction) * n_rows))
    if not 2 <= n_cal <= n_rows - 1:
        raise ValueError(
            f"calibration_fraction {calibration_fraction:g} of {n_rows} rows leaves {n_cal} calibration "
            "rows; need at least 2 and one row left out"
        )
    population = _population_sums(loss, s)
    rng = np.random.default_rng(random_state)
    plug_in = replace(target, confidence=None)
    records = []
    for repeat in range(int(repeats)):
        chosen = np.zeros(n_rows, dtype=bool)
        chosen[rng.choice(n_rows, n_cal, replace=False)] = True
        test = _population_sums(loss[~chosen], s[~chosen])
        for name, fit in (
            (
                "certified",
                lambda: target.fit(loss[chosen], s[chosen], loss_bound=loss_bound, method=method),
            ),
            ("plug-in", lambda: plug_in.fit(loss[chosen], s[chosen])),
        ):
            try:
                selection = fit()
            except InfeasibleTargetError:
                selection = None
            coverage, risk, test_coverage, test_risk = _draw_outcome(selection, population, test)
            if target.kind == "risk":
                violated = bool(risk > target.value * (1 + 1e-12))
            else:
                violated = bool(coverage < target.value * (1 - 1e-12))
            records.append(
                (
                    repeat,
                    name,
                    coverage,
                    risk,
                    test_coverage,
                    test_risk,
                    violated,
                    selection is None,
                )
            )
        if progress is not None:
            progress(repeat + 1, int(repeats))
    draws = pd.DataFrame(
        records,
        columns=[
            "repeat",
            "method",
            "population_coverage",
            "population_risk",
            "test_coverage",
            "test_risk",
            "violated",
            "infeasible",
        ],
    )
    summary = draws.groupby("method", sort=False).agg(
        violations=("violated", "sum"),
        violation_rate=("violated", "mean"),
        infeasible_rate=("infeasible", "mean"),
        mean_coverage=("population_coverage", "mean"),
        mean_risk=("population_risk", "mean"),
    )
    violations = summary["violations"].to_numpy(dtype=float)
    summary["violation_low"], summary["violation_high"] = clopper_pearson(violations, repeats, 0.05)
    summary["delta"] = round(1.0 - target.confidence, 12)
    summary = summary[
        [
            "violations",
            "violation_rate",
            "violation_low",
            "violation_high",
            "delta",
            "infeasible_rate",
            "mean_coverage",
            "mean_risk",
        ]
    ]
    return TargetValidity(
        target=target, n_rows=n_rows, n_calibration=n_cal, draws=draws, summary=summary
    )
