"""Internal: the tails, p-values and confidence bounds of a mean of losses in [0, B], and of a coverage.

Each is valid for a cut fixed in advance; the certified fits (:mod:`._fits`) make the choice among
cuts valid (fixed-sequence testing, a union bound, order statistics).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import lazy_loader as _lazy
import numpy as np

#: scipy.stats / scipy.special, imported at their first use (heavy to import:
#: ``benchmarks/import_costs_records.csv``).
_sps = _lazy.load("scipy.stats", suppress_warning=True)
_special = _lazy.load("scipy.special", suppress_warning=True)


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


# Cached: it depends on (n, w, delta) alone, which a validation or an experiment repeats over hundreds of
# calibration draws of one size, and each call evaluates a binomial tail at all n + 1 ranks.
@functools.lru_cache(maxsize=1024)
def _coverage_rank(n: int, target_coverage: float, delta: float) -> int:
    """Smallest ``k`` with ``P(Binomial(n, w) >= k) <= delta``; ``n + 1`` when no order statistic certifies ``w``."""
    tails = _sps.binom.sf(np.arange(n + 1) - 1, n, target_coverage)  # P(Bin >= k), k = 0..n
    ok = np.flatnonzero(tails <= delta)
    return int(ok[0]) if ok.size else n + 1


class _SGRSearch:
    """SGR's decision at any target on fixed rows, sorted once: the advice's search asks it often.

    The binary search's thresholds and their Clopper-Pearson bounds do not depend on the target,
    only the path through them does; each bound is computed once (as
    :func:`rejectopt.selective.fit_geifman_el_yaniv` computes it, the ``1 - delta / k`` quantile
    of Beta(e + 1, m - e)), so a decision costs ``ceil(log2 n)`` comparisons, not a sort.
    0/B losses only (SGR's own restriction).
    """

    def __init__(self, loss: np.ndarray, s: np.ndarray, delta: float, loss_bound: float) -> None:
        # A threshold accepts its ties, so its rows and errors are counts of scores <= it: two
        # sorts of the scores (all, and the errors' own; the losses are 0 or B), not an argsort.
        self.s_sorted = np.sort(s)
        self.error_s_sorted = np.sort(s[loss > 0.0])
        self.n_steps = max(1, math.ceil(math.log2(s.size)))
        self.delta_step = delta / self.n_steps
        self.loss_bound = loss_bound
        self.bounds: dict[int, float] = {}

    def _bound(self, mid: int) -> float:
        if mid not in self.bounds:
            theta = self.s_sorted[mid - 1]
            accepted = int(np.searchsorted(self.s_sorted, theta, side="right"))
            errors = int(np.searchsorted(self.error_s_sorted, theta, side="right"))
            self.bounds[mid] = (
                1.0
                if errors >= accepted
                else float(_sps.beta.ppf(1.0 - self.delta_step, errors + 1, accepted - errors))
            )
        return self.bounds[mid]

    def certifies(self, target_risk: float) -> bool:
        """Whether some threshold of SGR's search at ``target_risk`` has a bound below it."""
        target = target_risk / self.loss_bound
        low, high, found = 0, self.s_sorted.size, False
        for _ in range(self.n_steps):
            mid = (low + high + 1) // 2
            if self._bound(mid) < target:
                low, found = mid, True
            else:
                high = mid
        return found
