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


#: The tails a certified risk of a loss that is not 0/B can rest on; 0/B losses always take the
#: exact binomial, which neither bound beats. Neither bound dominates
#: (``benchmarks/certified_tails_records.csv``): betting wins where the losses' variance is small
#: against that of a 0/B loss of the same mean, Hoeffding-Bentkus where losses at B are common.
#: "auto" lets held-out rows choose (Learn-then-Test's start rows), else takes the better of the
#: two p-values doubled.
RISK_TAILS = ("auto", "hb", "betting")

#: The constant bets the betting p-value mixes, on losses scaled to [0, 1]: geometric from 0.99 (a
#: low loss of small variance: the bet near 1 wins) down to 0.03 (a small gap against a large
#: variance); 1 is the largest bet whose capital stays >= 0 for a loss of B at any rate under
#: test. Eight bets: each more costs the mixture ``log(G)`` of log-capital, and on the graded
#: populations of ``benchmarks/bench_certified_tails.py`` 8 certified more than 10 or 16.
_BETS = 0.99 * (0.03 / 0.99) ** (np.arange(8) / 7.0)


def _betting_pvalue(mean: Any, mean_sq: Any, top: Any, trials: Any, rate: Any) -> np.ndarray:
    """Variance-adaptive p-value of ``H0: E[loss] >= rate`` for losses in [0, 1]: a betting capital.

    The capital of a constant bet ``lam`` against the mean ``r`` (Waudby-Smith & Ramdas 2023,
    "Estimating means of bounded random variables by betting", JRSS-B: the capital process
    ``K_t(r) = prod_i (1 + lam_i (r - X_i))`` of their betting approach, one-sided, with the
    constant bets of their diversified-Kelly mixture) is ``K(r) = prod_i (1 + lam (r - x_i))``.
    Fan, Grama & Liu's (2015) inequality ``log(1 + u) >= u - psi(m) u^2`` for ``u >= -m``,
    ``psi(m) = (-log(1 - m) - m) / m^2``, bounds it from below by sufficient statistics alone:
    ``h(r) = lam S(r) - psi(lam top) lam^2 Q(r)``, ``S = sum (r - x_i)``, ``Q = sum (r - x_i)^2``
    (each ``u_i = lam (r - x_i) >= -lam top``, ``top`` the largest loss). ``h`` is a concave
    quadratic in ``r``; ``H(r) = h(min(r, r*))`` (``r*`` its maximiser) is nondecreasing in ``r``.
    The p-value is ``min(1, 1 / E(r))``, ``E(r) = mean_g exp(H_g(r))`` over the bets of ``_BETS``.

    Validity, for any distribution on [0, 1] with mean ``mu >= rate`` and ``n`` i.i.d. losses
    (a cut fixed in advance, given its number of rows): for ``lam`` in (0, 1], each factor
    ``1 + lam (rate - x_i)`` is >= 0 and has mean ``1 + lam (rate - mu) <= 1``, so in any fixed
    order of the rows ``K_t(rate)`` is a nonnegative supermartingale from 1, and so is the
    mixture ``Kbar_t = mean_g K_t^g(rate)``; Ville's inequality gives
    ``P(sup_t Kbar_t >= 1 / delta) <= delta``. Pathwise, ``exp(H_g(rate)) = exp(h_g(r'))`` for some
    ``r' <= rate``, ``<= K^g(r') <= K^g(rate)`` (the inequality holds row by row for every ``r'``,
    and ``K^g`` increases in ``r``), so ``E(rate) <= Kbar_n`` and ``P(p <= delta) <= delta``.
    ``tests/test_certify_tails.py`` checks it by simulation. The sufficient statistics make it
    one formula per cut (prefix sums over the rows sorted by score), where a predictable bet
    would need the rows of each cut in an order drawn independently of their scores.

    Parameters
    ----------
    mean, mean_sq, top : array_like
        Mean, mean square and largest value of the accepted losses (in [0, 1]).
    trials : array_like
        Their number.
    rate : array_like
        The mean under test, in (0, 1).

    Returns
    -------
    numpy.ndarray
        The p-values, elementwise; nonincreasing in ``rate``; 1 where ``trials == 0``.
    """
    mean, mean_sq, top, trials, rate = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (mean, mean_sq, top, trials, rate))
    )
    lam = _BETS.reshape((-1,) + (1,) * mean.ndim)
    m = lam * np.clip(top, 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        psi = np.where(m > 1e-6, (-np.log1p(-m) - m) / np.maximum(m, 1e-6) ** 2, 0.5 + m / 3.0)
    variance = np.maximum(mean_sq - mean**2, 0.0)
    # h(r) / n = lam (r - mean) - psi lam^2 ((r - mean)^2 + variance): its maximiser r*.
    gap = np.minimum(rate - mean, 1.0 / (2.0 * psi * lam))
    log_capital = trials * (lam * gap - psi * lam**2 * (gap**2 + variance))
    log_mean = _special.logsumexp(log_capital, axis=0) - math.log(_BETS.size)
    p = np.minimum(np.exp(-log_mean), 1.0)
    return np.where(trials <= 0, 1.0, p)


def _risk_pvalue(
    loss_sum: Any,
    trials: Any,
    target: float,
    loss_bound: float,
    binary: bool,
    squares: Any = None,
    top: Any = None,
    both: bool = False,
) -> np.ndarray:
    """p-value of ``H0: selective risk >= target`` on cuts with ``trials`` rows and ``loss_sum``.

    Exact binomial for 0/B losses (``binary``); otherwise the betting p-value
    (:func:`_betting_pvalue`) when the cuts' sums of squared losses and largest losses are given,
    Hoeffding-Bentkus when not, and with ``both`` the smaller of the two doubled (a union bound:
    the better of two valid p-values with no rows held out to choose between them). Losses
    scaled by B.

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
    squares, top : array_like or None, default None
        Sum of the squared accepted losses (loss units squared) and their largest, per cut: the
        betting p-value's statistics; None for Hoeffding-Bentkus.
    both : bool, default False
        With ``squares``: ``min(1, 2 min(p_hb, p_betting))``.

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
    if squares is None:
        return _hoeffding_bentkus_pvalue(mean, trials, rate)
    mean_sq, top = _scaled_moments(squares, top, trials, loss_bound)
    return _tail_pvalue(mean, mean_sq, top, trials, both)(rate)


def _tail_pvalue(mean: Any, mean_sq: Any, top: Any, trials: Any, both: bool) -> Any:
    """The betting p-value of these cuts as a function of the rate, or with ``both`` the union
    bound of it and Hoeffding-Bentkus: each falls as the rate rises, and so does their minimum."""
    if not both:
        return functools.partial(_betting_pvalue, mean, mean_sq, top, trials)

    def pvalue(rate: Any) -> np.ndarray:
        betting = _betting_pvalue(mean, mean_sq, top, trials, rate)
        hb = _hoeffding_bentkus_pvalue(mean, trials, rate)
        return np.minimum(2.0 * np.minimum(betting, hb), 1.0)

    return pvalue


def _scaled_moments(squares: Any, top: Any, trials: Any, loss_bound: float) -> tuple[Any, Any]:
    """Mean square and largest loss of each cut, in units of B (0 where the cut is empty)."""
    trials = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_sq = np.where(
            trials > 0,
            np.asarray(squares, dtype=float) / loss_bound**2 / np.maximum(trials, 1.0),
            0.0,
        )
    return mean_sq, np.asarray(top, dtype=float) / loss_bound


def _risk_upper_bound(
    loss_sum: Any,
    trials: Any,
    delta: float,
    loss_bound: float,
    binary: bool,
    squares: Any = None,
    top: Any = None,
    both: bool = False,
) -> np.ndarray:
    """Pointwise ``(1 - delta)`` upper confidence bound of the selective risk of fixed cuts (loss units).

    Clopper-Pearson for 0/B losses, otherwise the inversion (bisection) of the p-value that
    :func:`_risk_pvalue` takes with the same statistics (betting with ``squares`` and ``top``,
    Hoeffding-Bentkus without); B where nothing is accepted. The dual of :func:`_risk_pvalue`:
    the p-value at ``target`` is <= delta iff the bound is <= ``target`` (both p-values fall
    as the rate under test rises).

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
    squares, top, both : array_like or None, array_like or None, bool
        As :func:`_risk_pvalue` takes them: the betting bound's statistics (None for
        Hoeffding-Bentkus) and the union bound of the two.

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
    if squares is None:
        pvalue = functools.partial(_hoeffding_bentkus_pvalue, mean, k)
    else:
        mean_sq, top = _scaled_moments(squares, top, k, loss_bound)
        pvalue = _tail_pvalue(mean, mean_sq, top, k, both)
    low, high = np.array(mean, dtype=float), np.ones_like(mean, dtype=float)
    for _ in range(50):  # the p-value decreases in the rate above the mean: bisect for p = delta
        mid = (low + high) / 2
        rejected = pvalue(np.clip(mid, 1e-12, 1 - 1e-12)) <= delta
        high = np.where(rejected, mid, high)
        low = np.where(rejected, low, mid)
    return np.where(k > 0, high, 1.0) * loss_bound


def _prefix_moments(loss: np.ndarray, s: np.ndarray) -> dict[str, Any]:
    """Per cut ``{s <= t}`` of the distinct scores ``t``: the sum of squared losses and the largest
    loss it accepts (beside :func:`._fits._prefix_sums`' counts and sums).

    The betting p-value's statistics (:func:`_betting_pvalue`), as keywords of
    :func:`_risk_pvalue` and :func:`_risk_upper_bound`.
    """
    values, inverse = np.unique(s, return_inverse=True)
    squares = np.bincount(inverse, weights=loss * loss, minlength=values.size)
    top = np.zeros(values.size)
    np.maximum.at(top, inverse, loss)
    return {"squares": np.cumsum(squares), "top": np.maximum.accumulate(top)}


def _tail_keywords(tail: str, moments: dict[str, Any]) -> dict[str, Any]:
    """The keywords of :func:`_risk_pvalue` / :func:`_risk_upper_bound` for ``tail`` with no rows
    held out to choose: "auto" is the union bound of the two p-values."""
    if tail == "hb":
        return {}
    return {**moments, "both": tail == "auto"}


def _predicted_pvalues(
    loss: Any, s: Any, target: float, n_test: int, loss_bound: float, binary: bool, betting: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct scores and the p-value each cut of these (start) rows would have on ``n_test`` rows
    of the same losses: counts, sums and squares scaled, the largest loss as it is."""
    values, inverse = np.unique(s, return_inverse=True)
    scale = n_test / loss.size
    trials = np.cumsum(np.bincount(inverse, minlength=values.size)) * scale
    sums = np.cumsum(np.bincount(inverse, weights=loss, minlength=values.size)) * scale
    moments = _prefix_moments(loss, s) if betting else {}
    if moments:
        moments["squares"] = moments["squares"] * scale
    return values, _risk_pvalue(sums, trials, target, loss_bound, binary, **moments)


def _ltt_keywords(rows: Any, target: float, loss_bound: float, at: Any = slice(None)) -> dict:
    """The keywords of :func:`_risk_pvalue` for the tested cuts ``at`` of Learn-then-Test's rows.

    "auto" with start rows: betting if they predict a smaller p-value from it than from
    Hoeffding-Bentkus at their best cut, a choice made on the start rows alone, which the tested
    rows are independent of (each tested p-value stays valid given it, as the start of the
    sequence does); without start rows, the union bound (:func:`_tail_keywords`).
    """
    moments = {name: value[at] for name, value in rows.moments.items()}
    if rows.tail != "auto" or rows.start_loss.size == 0:
        return _tail_keywords(rows.tail, moments) if rows.tail != "betting" else moments
    predicted = [
        _predicted_pvalues(
            rows.start_loss, rows.start_s, target, rows.n_tested, loss_bound, False, b
        )
        for b in (True, False)
    ]
    return moments if predicted[0][1].min() <= predicted[1][1].min() else {}


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
