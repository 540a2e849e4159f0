"""Tests for rejectopt.selective (empirical randomized Bayes selection functions)."""

import json
import math
import warnings

import numpy as np
import pytest
from known_answers import brute_force_margin_threshold

from rejectopt.metrics._confusion import selective_outcome
from rejectopt.selective import (
    InfeasibleTargetError,
    SelectionFunction,
    chow_reject,
    empirical_risk_coverage,
    fit_bounded_abstention,
    fit_bounded_improvement,
    fit_cost_based,
    fit_geifman_el_yaniv,
    fit_margin_threshold,
    operating_point,
)


def synthetic_sample(n, seed):
    """Continuous score s ~ U(0, 1) with P(error | s) = 0.02 + 0.5 s (increasing in s)."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    loss = (rng.random(n) < 0.02 + 0.5 * s).astype(float)
    return loss, s


@pytest.fixture(scope="module")
def val_test():
    return synthetic_sample(20_000, seed=1), synthetic_sample(20_000, seed=2)


def tied_sample():
    """100 examples on 4 distinct scores; counts 10/20/30/40, errors 0/2/15/30."""
    s = np.repeat([0.0, 1.0, 2.0, 3.0], [10, 20, 30, 40])
    loss = np.concatenate(
        [
            np.zeros(10),
            np.r_[np.ones(2), np.zeros(18)],
            np.r_[np.ones(15), np.zeros(15)],
            np.r_[np.ones(30), np.zeros(10)],
        ]
    )
    return loss, s


# ---------------------------------------------------------------- SelectionFunction
def test_selection_function_acceptance_probability_and_sampling():
    sel = SelectionFunction(threshold=1.0, accept_prob=0.25)
    np.testing.assert_array_equal(sel.acceptance_probability([0.5, 1.0, 1.5]), [1.0, 0.25, 0.0])
    s = np.r_[np.zeros(5), np.ones(40_000), np.full(5, 2.0)]
    a1 = sel.accept(s, random_state=0)
    a2 = sel.accept(s, random_state=0)
    np.testing.assert_array_equal(a1, a2)  # seeded
    assert a1[:5].all() and not a1[-5:].any()
    rate = a1[5:-5].mean()
    assert abs(rate - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 40_000)


def test_selection_function_json_round_trip():
    for sel in (
        SelectionFunction(0.3, 0.5),
        SelectionFunction(np.inf, 1.0),
        SelectionFunction(-np.inf, 0.0),
    ):
        restored = SelectionFunction.from_dict(
            json.loads(json.dumps(sel.to_dict(), allow_nan=False))
        )
        assert restored == sel
        assert isinstance(restored.threshold, float)


def test_selection_function_rejects_bad_parameters():
    with pytest.raises(ValueError, match="accept_prob"):
        SelectionFunction(0.0, 1.5)
    with pytest.raises(ValueError, match="NaN"):
        SelectionFunction(float("nan"), 0.5)
    with pytest.raises(ValueError, match="missing"):
        SelectionFunction.from_dict({"threshold": 1.0})
    with pytest.raises(ValueError, match="NaN"):
        SelectionFunction(0.0, 0.5).accept([0.1, np.nan])


# ---------------------------------------------------------------- bounded abstention
def test_bounded_abstention_ties_match_eq24_exactly():
    loss, s = tied_sample()
    sel = fit_bounded_abstention(loss, s, target_coverage=0.45)
    # N(s<2) = 30, N(s==2) = 30 -> kappa = (45 - 30) / 30 = 0.5
    assert sel.threshold == 2.0 and sel.accept_prob == pytest.approx(0.5)
    risk, coverage = empirical_risk_coverage(loss, s, sel)
    assert coverage == pytest.approx(0.45, abs=1e-15)
    assert risk == pytest.approx((2 + 0.5 * 15) / 45)
    # sampled acceptance rate on many copies of the sample is within sampling error
    s_big = np.tile(s, 1000)
    rate = sel.accept(s_big, random_state=3).mean()
    assert abs(rate - 0.45) < 4 * math.sqrt(0.5 * 0.5 * 30_000) / s_big.size


@pytest.mark.parametrize("omega", [0.1, 0.3, 0.7, 1.0])
def test_bounded_abstention_expected_coverage_is_exact(omega):
    loss, s = tied_sample()
    _, coverage = empirical_risk_coverage(loss, s, fit_bounded_abstention(loss, s, omega))
    assert coverage == pytest.approx(omega, abs=1e-12)


def test_bounded_abstention_generalises(val_test):
    (loss_v, s_v), (loss_t, s_t) = val_test
    omega = 0.7
    sel = fit_bounded_abstention(loss_v, s_v, omega)
    _, cov_val = empirical_risk_coverage(loss_v, s_v, sel)
    assert cov_val == pytest.approx(omega, abs=1e-12)
    _, cov_test = empirical_risk_coverage(loss_t, s_t, sel)
    assert cov_test >= omega - 3 * math.sqrt(omega * (1 - omega) / s_t.size)


# ---------------------------------------------------------------- bounded improvement
def test_bounded_improvement_ties_match_eq16_exactly():
    loss, s = tied_sample()
    sel = fit_bounded_improvement(loss, s, target_risk=0.2)
    # excess after groups 0,1: -2, -2 -> D = -4; group 2 excess 15 - 0.2*30 = 9 -> nu = 4/9
    assert sel.threshold == 2.0 and sel.accept_prob == pytest.approx(4 / 9)
    risk, coverage = empirical_risk_coverage(loss, s, sel)
    assert risk == pytest.approx(0.2, abs=1e-12)
    assert coverage == pytest.approx((30 + 4 / 9 * 30) / 100)


def test_bounded_improvement_accepts_all_when_target_is_loose():
    loss, s = tied_sample()
    sel = fit_bounded_improvement(loss, s, target_risk=0.5)
    assert empirical_risk_coverage(loss, s, sel)[1] == 1.0


def test_bounded_improvement_generalises_and_maximises_coverage(val_test):
    (loss_v, s_v), (loss_t, s_t) = val_test
    lam = 0.15
    sel = fit_bounded_improvement(loss_v, s_v, lam)
    risk_v, cov_v = empirical_risk_coverage(loss_v, s_v, sel)
    assert risk_v == pytest.approx(lam, abs=1e-9)
    # no deterministic cut with larger coverage is feasible on the validation sample
    order = np.argsort(s_v)
    prefix_risk = np.cumsum(loss_v[order]) / np.arange(1, s_v.size + 1)
    feasible_counts = np.flatnonzero(prefix_risk <= lam + 1e-12) + 1
    assert cov_v * s_v.size >= feasible_counts.max() - 1e-9
    risk_t, cov_t = empirical_risk_coverage(loss_t, s_t, sel)
    assert risk_t <= lam + 3 * math.sqrt(lam * (1 - lam) / (cov_t * s_t.size))


def test_bounded_improvement_infeasible_target_is_reported():
    loss, s = tied_sample()
    loss = loss + 0.5  # smallest achievable risk is 0.5 (group with s = 0)
    with pytest.raises(ValueError, match="infeasible target_risk=0.1.*0.5"):
        fit_bounded_improvement(loss, s, target_risk=0.1)


# ---------------------------------------------------------------- cost-based
def expected_cost(loss, s, sel, eps):
    c = sel.acceptance_probability(s)
    return float(np.mean(c * loss + (1 - c) * eps))


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3, 0.45, 2.0])
def test_cost_based_minimises_empirical_cost_vs_brute_force(eps):
    rng = np.random.default_rng(5)
    s = np.round(rng.random(300), 1)  # many ties
    loss = rng.random(300) * (0.2 + s)
    sel = fit_cost_based(loss, s, eps)
    fitted = expected_cost(loss, s, sel, eps)
    candidates = [
        SelectionFunction(a, nu)
        for a in np.r_[-np.inf, np.unique(s), np.inf]
        for nu in (0.0, 0.3, 1.0)
    ]
    brute = min(expected_cost(loss, s, c, eps) for c in candidates)
    assert fitted <= brute + 1e-12
    assert sel.accept_prob in (0.0, 1.0)


def test_cost_based_on_synthetic_matches_chow_threshold(val_test):
    (loss_v, s_v), _ = val_test
    sel = fit_cost_based(loss_v, s_v, reject_cost=0.27)
    # P(error | s) = 0.02 + 0.5 s crosses 0.27 at s = 0.5
    assert sel.threshold == pytest.approx(0.5, abs=0.06)


# ---------------------------------------------------------------- Geifman & El-Yaniv
def test_geifman_el_yaniv_bound_holds_on_held_out_data(val_test):
    (loss_v, s_v), (loss_t, s_t) = val_test
    sel, bound = fit_geifman_el_yaniv(loss_v, s_v, target_risk=0.1, delta=0.05)
    assert sel.accept_prob == 1.0 and bound < 0.1
    risk_v, cov_v = empirical_risk_coverage(loss_v, s_v, sel)
    assert risk_v <= bound and cov_v > 0.2
    risk_t, cov_t = empirical_risk_coverage(loss_t, s_t, sel)
    assert risk_t <= bound + 3 * math.sqrt(bound * (1 - bound) / (cov_t * s_t.size))


def test_geifman_el_yaniv_loss_scale_and_validation(val_test):
    (loss_v, s_v), _ = val_test
    sel1, bound1 = fit_geifman_el_yaniv(loss_v, s_v, 0.1, 0.05)
    sel100, bound100 = fit_geifman_el_yaniv(100 * loss_v, s_v, 10.0, 0.05, loss_scale=100)
    assert sel1 == sel100 and bound100 == pytest.approx(100 * bound1)
    with pytest.raises(ValueError, match="loss01 must take only the values 0 and 1"):
        fit_geifman_el_yaniv(loss_v * 0.5, s_v, 0.1, 0.05)
    with pytest.raises(ValueError, match="delta"):
        fit_geifman_el_yaniv(loss_v, s_v, 0.1, 1.5)
    with pytest.raises(
        InfeasibleTargetError, match="infeasible"
    ):  # a certified target's error, a ValueError
        fit_geifman_el_yaniv(loss_v, s_v, 0.001, 0.05)


# ---------------------------------------------------------------- input validation
@pytest.mark.parametrize(
    "fit, arg",
    [
        (fit_cost_based, 0.1),
        (fit_bounded_improvement, 0.1),
        (fit_bounded_abstention, 0.5),
    ],
)
def test_bad_inputs_raise_clear_errors(fit, arg):
    with pytest.raises(ValueError, match="length mismatch"):
        fit([0.0, 1.0], [0.1], arg)
    with pytest.raises(
        ValueError,
        match=r"uncertainty contains 1 NaN or infinite value\(s\) \(first: uncertainty\[1\] = nan\)",
    ):
        fit([0.0, 1.0], [0.1, np.nan], arg)
    with pytest.raises(ValueError, match=r"loss must be non-negative; loss\[0\] = -1"):
        fit([-1.0, 1.0], [0.1, 0.2], arg)
    with pytest.raises(
        ValueError, match=r"loss must contain at least one example, got shape \(0,\)"
    ):
        fit([], [], arg)


def test_targets_out_of_range_raise():
    loss, s = tied_sample()
    for omega in (0.0, 1.2, float("nan")):
        with pytest.raises(ValueError, match="target_coverage"):
            fit_bounded_abstention(loss, s, omega)
    with pytest.raises(ValueError, match="target_risk"):
        fit_bounded_improvement(loss, s, -0.1)
    with pytest.raises(ValueError, match="reject_cost"):
        fit_cost_based(loss, s, -1.0)


def test_empirical_risk_coverage_with_zero_coverage_is_nan():
    loss, s = tied_sample()
    risk, coverage = empirical_risk_coverage(loss, s, SelectionFunction(-np.inf, 0.0))
    assert coverage == 0.0 and math.isnan(risk)


# --------------------------------------------------------------------------------------------
# Two rules of the cost-based model on a classifier's own outputs: Chow's, the margin threshold
# --------------------------------------------------------------------------------------------
def testchow_reject_rejects_below_one_minus_d():
    # the boundary: a maximum posterior of exactly 1 - d is accepted
    assert chow_reject([[0.8, 0.2], [0.79, 0.21], [0.1, 0.9]], 0.2).tolist() == [
        False,
        True,
        False,
    ]
    assert chow_reject([[0.5, 0.5]], 0.45).tolist() == [True]
    with pytest.raises(ValueError, match="2-D"):
        chow_reject([0.8, 0.2], 0.2)


def test_margin_threshold_known_answer():
    # the two errors have the smallest margins, so the rule rejects |f| < 1
    f = np.array([2.0, -1.5, 0.2, -0.1, 1.0, 0.05])
    selection = fit_margin_threshold(f, [0, 0, 100, 0, 0, 100], reject_cost=0.2)
    assert selection == SelectionFunction(threshold=-1.0, accept_prob=1.0)
    assert selection.acceptance_probability(-np.abs(f)).tolist() == [1, 1, 0, 0, 1, 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_threshold_matches_brute_force_on_synthetic_data(seed):
    rng = np.random.default_rng(seed)
    f = np.round(rng.normal(size=300), 1)  # many ties in |f|, and f = 0
    loss = 100.0 * (rng.random(300) < 1 / (1 + np.exp(3 * np.abs(f))))
    for d in [0.05, 0.1, 0.2, 0.3, 0.45]:
        sel = fit_margin_threshold(f, loss, d)
        accept = sel.acceptance_probability(-np.abs(f)) > 0.5
        cost, coverage, t = brute_force_margin_threshold(f, loss, d)
        got = selective_outcome(loss, accept, d)
        assert got["cost_risk"] == pytest.approx(cost)
        assert got["coverage"] == pytest.approx(coverage)
        if coverage > 0:
            assert -sel.threshold == pytest.approx(t)
        # the same rule on a 0/1 loss with loss_scale 1
        assert fit_margin_threshold(f, loss / 100, d, loss_scale=1.0) == sel


def test_operating_point_with_nothing_accepted_is_undefined():
    point = operating_point(
        [0.0, 100.0], [1.0, 2.0], SelectionFunction(-np.inf, 0.0), loss_bound=100
    )
    assert point.coverage == 0.0 and math.isnan(point.selective_risk)
    assert all(math.isnan(v) for v in point.selective_risk_ci)


def test_selection_function_from_dict_is_strict():
    assert SelectionFunction.from_dict(
        {"threshold": "-inf", "accept_prob": 1}
    ) == SelectionFunction(-np.inf, 1.0)
    for bad, field in (
        ({"threshold": "0.5", "accept_prob": 1.0}, "selection.threshold"),
        ({"threshold": 0.5, "accept_prob": True}, "selection.accept_prob"),
        ({"threshold": 0.5, "accept_prob": 1.5}, "selection.accept_prob"),
        ({"threshold": 0.5, "accept_prob": 1.0, "nu": 1}, "unknown keys"),
        ([0.5, 1.0], "must be an object"),
    ):
        with pytest.raises(ValueError, match=field):
            SelectionFunction.from_dict(bad, name="selection")


def test_the_old_keyword_s_still_works_once_warned():
    """``s=`` is renamed ``uncertainty=``: the old keyword gives the same selection, with one
    FutureWarning per function however often it is used, so that a loop is not flooded."""
    loss, u = [0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    expected = fit_bounded_abstention(loss, uncertainty=u, target_coverage=0.75)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = fit_bounded_abstention(loss, s=u, target_coverage=0.75)
        second = fit_bounded_abstention(loss, s=u, target_coverage=0.75)
    assert first == second == expected
    future = [w for w in caught if issubclass(w.category, FutureWarning)]
    assert [str(w.message) for w in future] == [
        "fit_bounded_abstention(s=...) is renamed fit_bounded_abstention(uncertainty=...) in "
        "0.6.0; the old name is removed in the next release"
    ]
    assert future[0].filename == __file__  # the warning points at the caller's line
    with pytest.raises(TypeError, match="got both s= and uncertainty="):
        fit_bounded_abstention(loss, s=u, uncertainty=u, target_coverage=0.75)
