"""The variance-adaptive betting tail of a graded certified risk: validity, duality, power, plumbing.

The populations are known by construction (their means are set), so a p-value's level is checked
by simulation: at a mean just above the rate under test, the rejection rate at delta must stay
within delta + 3 binomial standard deviations of the draws.
"""

import math

import numpy as np
import pytest

from rejectopt._certify import fit_certified_coverage, fit_certified_risk
from rejectopt._certify._fits import _prefix_moments, _prefix_sums
from rejectopt._certify._tails import (
    _BETS,
    _betting_pvalue,
    _hoeffding_bentkus_pvalue,
    _risk_pvalue,
    _risk_upper_bound,
)
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import Target

DRAWS = 4000


def _bernoulli(rng, shape):
    return (rng.random(shape) < 0.3).astype(float)  # mean 0.3


def _beta(rng, shape):
    return rng.beta(0.6, 1.4, shape)  # mean 0.3


def _three_point(rng, shape):
    return rng.choice([0.0, 0.25, 1.0], p=[0.5, 0.4, 0.1], size=shape)  # mean 0.2


POPULATIONS = [(_bernoulli, 0.3), (_beta, 0.3), (_three_point, 0.2)]


def _pvalues(x, rate, both=False):
    """Each draw's (row's) p-value through the public-facing wrapper, losses in units of B = 4."""
    n = x.shape[1]
    loss = 4.0 * x
    return _risk_pvalue(
        loss.sum(1), n, 4.0 * rate, 4.0, False, (loss**2).sum(1), loss.max(1), both=both
    )


@pytest.mark.parametrize("population, mean", POPULATIONS, ids=["bernoulli", "beta", "three-point"])
@pytest.mark.parametrize("n", [25, 400])
@pytest.mark.parametrize("both", [False, True], ids=["betting", "union"])
def test_betting_pvalue_is_valid_at_a_mean_just_above_the_rate(population, mean, n, both):
    rng = np.random.default_rng(n + int(100 * mean))
    x = population(rng, (DRAWS, n))
    rate = mean - 0.005  # H0 (mean >= rate) holds, barely
    p = _pvalues(x, rate, both)
    for delta in (0.05, 0.2):
        # A rate above delta + 3 sigma would be a level violation, not chance (sigma of DRAWS draws).
        limit = delta + 3.0 * math.sqrt(delta * (1 - delta) / DRAWS)
        assert np.mean(p <= delta) <= limit, (delta, np.mean(p <= delta))


def test_betting_pvalue_is_below_the_exact_mixture_of_constant_bets():
    # The validity argument: exp(H_g) <= prod (1 + lam_g (r - x_i)) row by row, so the p-value is at
    # least 1 / the mixture capital, an e-value under H0.
    rng = np.random.default_rng(3)
    for population, _ in POPULATIONS:
        x = population(rng, (200, 60))
        for rate in (0.1, 0.3, 0.6):
            capital = np.prod(1.0 + _BETS[:, None, None] * (rate - x[None]), axis=2).mean(0)
            p = _betting_pvalue(x.mean(1), (x**2).mean(1), x.max(1), 60, rate)
            assert np.all(p >= np.minimum(1.0 / capital, 1.0) * (1 - 1e-9))


def test_betting_pvalue_falls_with_the_rate_and_inverts_to_the_upper_bound():
    rng = np.random.default_rng(4)
    rates = np.linspace(0.01, 0.99, 197)
    for population, _ in POPULATIONS:
        x = population(rng, (40, 80))
        p = _betting_pvalue(
            x.mean(1)[:, None], (x**2).mean(1)[:, None], x.max(1)[:, None], 80, rates
        )
        assert np.all(np.diff(p, axis=1) <= 1e-12)
        loss = 4.0 * x
        for both in (False, True):
            keywords = {"squares": (loss**2).sum(1), "top": loss.max(1), "both": both}
            bound = _risk_upper_bound(loss.sum(1), 80, 0.1, 4.0, False, **keywords)
            for target in (0.5, 1.0, 1.5, 2.5):
                p = _risk_pvalue(loss.sum(1), 80, target, 4.0, False, **keywords)
                # duality up to the bisection's resolution (B / 2**50)
                assert np.array_equal(p <= 0.1, bound <= target + 1e-9)


def test_betting_pvalue_known_answers():
    # No row: 1. Losses all 0 at rate r: S = n r, Q = n r^2, psi = 1/2 (no loss above 0), and the
    # maximiser caps the gap at 1 / lam (r <= 1 / lam for every bet here).
    assert _betting_pvalue(0.3, 0.1, 0.5, 0, 0.5) == 1.0
    n, r = 30, 0.2
    capital = np.mean(np.exp(n * (_BETS * r - 0.5 * _BETS**2 * r**2)))
    assert _betting_pvalue(0.0, 0.0, 0.0, n, r) == pytest.approx(1.0 / capital, rel=1e-12)


def test_betting_certifies_more_than_hoeffding_bentkus_on_a_low_variance_graded_loss():
    # An ordinal MAE on 10 labels (B = 9) of a good model: errors of 0, 1, 2 with mean 0.35. At n = 300
    # and a target of 0.6 the betting test rejects in almost every draw and Hoeffding-Bentkus in under
    # a third (0.97 and 0.28 on this seed); the margin 0.5 leaves room for any seed.
    rng = np.random.default_rng(5)
    x = rng.choice([0.0, 1.0, 2.0], p=[0.7, 0.25, 0.05], size=(1000, 300)) / 9.0
    betting = _betting_pvalue(x.mean(1), (x**2).mean(1), x.max(1), 300, 0.6 / 9)
    hb = _hoeffding_bentkus_pvalue(x.mean(1), 300, 0.6 / 9)
    assert np.mean(betting <= 0.05) > np.mean(hb <= 0.05) + 0.5


def test_prefix_moments_match_each_cut():
    rng = np.random.default_rng(6)
    s = rng.integers(0, 20, 200).astype(float)  # ties
    loss = rng.integers(0, 5, 200).astype(float)
    values, trials, _ = _prefix_sums(loss, s)
    moments = _prefix_moments(loss, s)
    for j, v in enumerate(values):
        kept = loss[s <= v]
        assert trials[j] == kept.size
        assert moments["squares"][j] == pytest.approx((kept**2).sum())
        assert moments["top"][j] == kept.max()


def _mae_population(rng, n):
    """MAE on 10 labels (B = 9), Binomial(3, 0.1 + 0.3 u) given the score u: the risk of {u <= t}
    is 0.3 + 0.45 t (known), so a target of 0.7 is met by every cut up to t = 8 / 9."""
    u = rng.random(n)
    return rng.binomial(3, 0.1 + 0.3 * u).astype(float), u


@pytest.mark.parametrize("tail", ["betting", "auto"])
def test_certified_mae_holds_and_accepts_more_than_with_hoeffding_bentkus(tail):
    rng = np.random.default_rng(7)
    target, delta, draws = 0.7, 0.1, 40
    violations, accepted, accepted_hb = 0, [], []
    for draw in range(draws):
        loss, u = _mae_population(rng, 1000)
        for kind, into in ((tail, accepted), ("hb", accepted_hb)):
            try:
                selection = fit_certified_risk(
                    loss, u, target, 1 - delta, loss_bound=9.0, random_state=draw, tail=kind
                )
            except InfeasibleTargetError:
                into.append(0.0)
                continue
            t = min(selection.threshold, 1.0)
            into.append(t)
            if kind == tail:
                violations += 0.3 + 0.45 * t > target
    # Level: at most delta + 3 sigma of the draws (a larger share would not be chance).
    assert violations / draws <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)
    # Power: Hoeffding-Bentkus certifies almost nothing at n = 1000, betting a cut of coverage about
    # 0.6 (benchmarks/certified_tails_records.csv, binomial3); 0.2 leaves room for any seed.
    assert np.mean(accepted) > np.mean(accepted_hb) + 0.2


def test_zero_one_losses_keep_the_exact_binomial_whatever_the_tail():
    rng = np.random.default_rng(8)
    u = rng.random(800)
    loss = 100.0 * (rng.random(800) < 0.3 * u)
    fits = {
        tail: fit_certified_risk(loss, u, 10.0, 0.9, tail=tail)
        for tail in ("auto", "hb", "betting")
    }
    assert fits["auto"] == fits["hb"] == fits["betting"]
    coverage = {
        tail: fit_certified_coverage(loss, u, 0.5, 0.9, tail=tail).risk_bound
        for tail in ("auto", "hb", "betting")
    }
    assert coverage["auto"] == coverage["hb"] == coverage["betting"]


def test_coverage_risk_bound_takes_the_tail():
    rng = np.random.default_rng(9)
    loss, u = _mae_population(rng, 2000)
    bounds = {
        tail: fit_certified_coverage(loss, u, 0.5, 0.9, loss_bound=9.0, tail=tail).risk_bound
        for tail in ("hb", "betting", "auto")
    }
    # Losses of at most 2 in [0, 9]: the betting bound is the tighter one, and "auto" (no rows held
    # out: the union bound, its p-value doubled) lies between it and Hoeffding-Bentkus.
    assert bounds["betting"] < bounds["auto"] < bounds["hb"]


def test_tail_is_checked_and_needs_a_certified_target():
    loss, u = [0.0, 1.0, 2.0, 0.0], [0.1, 0.2, 0.3, 0.4]
    with pytest.raises(
        ValueError,
        match=r"^fit_certified_risk: tail must be one of 'auto', 'hb', 'betting', got 'wsr'$",
    ):
        fit_certified_risk(loss, u, 1.0, 0.9, loss_bound=2.0, tail="wsr")
    with pytest.raises(ValueError, match="tail 'hb' applies to a certified target only"):
        Target("coverage", 0.5).fit(loss, u, tail="hb")
    certified = Target("risk", 1.0, confidence=0.9)
    with pytest.raises(ValueError, match="tail must be one of"):
        certified.fit(loss, u, loss_bound=2.0, tail="exact")
