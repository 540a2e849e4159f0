"""Tests of AUGRC, excess areas, operating points, tie-averaged AuRC, bootstrap and the metric registry."""

import functools
import itertools
import math

import numpy as np
import pytest

from rejectopt import metrics
from rejectopt.metrics import (
    METRICS,
    ConfidenceInterval,
    augrc,
    aurc,
    bootstrap_ci,
    coverage_at_risk,
    eaugrc,
    eaurc,
    get_metric,
    rc_curve,
    reject_confusion_matrix,
    risk_at_coverage,
    sele_loss,
)
from rejectopt.selective import empirical_risk_coverage, fit_bounded_abstention, fit_bounded_improvement


# --------------------------------------------------------------------------------------------
# Independent references, written from the definitions
# --------------------------------------------------------------------------------------------
def _augrc_reference(loss, uncertainty):
    """AUGRC from its definition with fd-shifts' conventions (Traub et al. 2024).

    One point per distinct uncertainty value ``t``: coverage ``#{s <= t} / n`` and generalized
    risk ``sum_{s <= t} loss / n`` (the accepted examples are those at most as uncertain as
    ``t``, so a whole tie group enters at once), plus the origin; trapezoidal rule. Plain
    Python with exactly summed losses (``math.fsum``).
    """
    n = len(loss)
    points = [(0.0, 0.0)]
    for t in sorted(set(uncertainty)):
        accepted = [i for i in range(n) if uncertainty[i] <= t]
        points.append((len(accepted) / n, math.fsum(loss[i] for i in accepted) / n))
    return math.fsum((c1 - c0) * (r0 + r1) / 2 for (c0, r0), (c1, r1) in zip(points, points[1:]))


def _aurc_index(loss, uncertainty):
    """Eq. (27): sort by (uncertainty, index), average the running mean loss."""
    order = sorted(range(len(loss)), key=lambda i: (uncertainty[i], i))
    running, total = 0.0, 0.0
    for k, i in enumerate(order, start=1):
        running += loss[i]
        total += running / k
    return total / len(loss)


def _aurc_all_tie_orders(loss, uncertainty):
    """Mean of eq. (27) over every order of the examples (each tie order equally often)."""
    n = len(loss)
    values = []
    for perm in itertools.permutations(range(n)):
        values.append(_aurc_index([loss[i] for i in perm], [uncertainty[i] for i in perm]))
    return math.fsum(values) / len(values)


def _random_case(rng, n_max=40):
    """Loss and uncertainty with ties and non-binary losses of varying kinds."""
    n = int(rng.integers(1, n_max + 1))
    kind = rng.integers(0, 4)
    if kind == 0:
        loss = (rng.random(n) < 0.3).astype(float)
    elif kind == 1:
        loss = rng.integers(0, 5, n).astype(float) * 25.0
    elif kind == 2:
        loss = rng.exponential(size=n) * (rng.random(n) < 0.6)
    else:
        loss = rng.random(n)
    levels = int(rng.integers(1, n + 2))
    u = rng.integers(0, levels, n).astype(float) if rng.random() < 0.8 else rng.normal(size=n)
    return loss, u


# --------------------------------------------------------------------------------------------
# AUGRC
# --------------------------------------------------------------------------------------------
def test_augrc_matches_reference_on_random_cases_with_ties():
    rng = np.random.default_rng(13)
    n_tied = 0
    for _ in range(400):
        loss, u = _random_case(rng)
        n_tied += len(set(u.tolist())) < u.size
        expected = _augrc_reference(loss.tolist(), u.tolist())
        assert augrc(loss, u) == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert isinstance(augrc(loss, u), float)
    assert n_tied >= 300


def test_augrc_is_invariant_to_example_order_and_uses_loss_units():
    rng = np.random.default_rng(5)
    loss, u = rng.integers(0, 3, 50) * 100.0, rng.integers(0, 6, 50).astype(float)
    perm = rng.permutation(50)
    assert augrc(loss[perm], u[perm]) == pytest.approx(augrc(loss, u), rel=1e-13)
    assert augrc(loss / 100, u) == pytest.approx(augrc(loss, u) / 100, rel=1e-13)  # no x1000 scaling


def test_augrc_sele_identity_for_distinct_scores():
    """sele (eq. 29) is the right Riemann sum of the generalized RC curve; AUGRC = sele - L(n)/(2 n^2)."""
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 100, 1000):
        loss, u = rng.exponential(size=n) * (rng.random(n) < 0.5), rng.normal(size=n)
        assert np.unique(u).size == n
        coverage, risk = rc_curve(loss, u)
        generalized = risk * coverage  # L(k)/n
        right_riemann = float(np.sum(generalized) / n)
        assert sele_loss(loss, u) == pytest.approx(right_riemann, rel=1e-12, abs=1e-15)
        assert augrc(loss, u) == pytest.approx(sele_loss(loss, u) - loss.sum() / (2 * n**2), rel=1e-12, abs=1e-15)


def test_augrc_sele_identity_with_ties():
    """With ties: AUGRC = sele - 1/(2 n^2) sum_i l_i m_i, m_i the size of i's tie group."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        loss, u = _random_case(rng, n_max=60)
        _, inverse, group_size = np.unique(u, return_inverse=True, return_counts=True)
        n = loss.size
        expected = sele_loss(loss, u) - np.dot(loss, group_size[inverse]) / (2 * n**2)
        assert augrc(loss, u) == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_closed_forms_for_zero_one_losses(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    loss = (rng.random(n) < rng.uniform(0.05, 0.6)).astype(float)
    err = loss.mean()
    oracle_scores = loss + rng.random(n) * 1e-3  # distinct, every error above every correct one
    worst_scores = -loss + rng.random(n) * 1e-3  # errors first
    assert augrc(loss, loss) == pytest.approx(err**2 / 2, rel=1e-12, abs=1e-15)
    assert augrc(loss, oracle_scores) == pytest.approx(err**2 / 2, rel=1e-12, abs=1e-15)
    assert augrc(loss, worst_scores) == pytest.approx(err - err**2 / 2, rel=1e-12)
    assert augrc(loss, np.zeros(n)) == pytest.approx(err / 2, rel=1e-12, abs=1e-15)
    assert eaugrc(loss, oracle_scores) == pytest.approx(0.0, abs=1e-14)
    assert eaugrc(loss, np.zeros(n)) == pytest.approx(err / 2 - err**2 / 2, rel=1e-12, abs=1e-15)
    # oracle AuRC of eq. (27): n0 correct first, then L(k) = k - n0
    n0 = int(n - loss.sum())
    harmonic = lambda m: math.fsum(1.0 / j for j in range(1, m + 1))  # noqa: E731
    oracle_aurc = ((n - n0) - n0 * (harmonic(n) - harmonic(n0))) / n
    assert aurc(loss, loss) == pytest.approx(oracle_aurc, rel=1e-12, abs=1e-15)
    assert eaurc(loss, oracle_scores) == pytest.approx(0.0, abs=1e-14)
    assert aurc(loss, np.zeros(n), ties="average") == pytest.approx(err, rel=1e-12, abs=1e-15)


def test_excess_areas_against_definitions_and_nonnegative():
    rng = np.random.default_rng(8)
    for _ in range(200):
        loss, u = _random_case(rng)
        assert eaurc(loss, u) == pytest.approx(_aurc_index(loss, u) - _aurc_index(loss, loss), abs=1e-12)
        oracle = _augrc_reference(loss.tolist(), loss.tolist())
        assert eaugrc(loss, u) == pytest.approx(_augrc_reference(loss.tolist(), u.tolist()) - oracle, abs=1e-12)
        assert eaurc(loss, u) >= -1e-12 and eaugrc(loss, u) >= -1e-12


# --------------------------------------------------------------------------------------------
# AuRC tie rules
# --------------------------------------------------------------------------------------------
def test_aurc_average_equals_brute_force_over_all_tie_orders():
    rng = np.random.default_rng(21)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        loss = rng.integers(0, 4, n).astype(float) * rng.choice([1.0, 0.37])
        u = rng.integers(0, int(rng.integers(1, 4)), n).astype(float)
        expected = _aurc_all_tie_orders(loss.tolist(), u.tolist())
        assert aurc(loss, u, ties="average") == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_aurc_tie_rules():
    rng = np.random.default_rng(2)
    loss, u = rng.random(80), rng.normal(size=80)
    assert aurc(loss, u, ties="average") == pytest.approx(aurc(loss, u), rel=1e-13)  # no ties: same
    loss, u = rng.integers(0, 3, 80).astype(float), rng.integers(0, 4, 80).astype(float)
    perm = rng.permutation(80)
    assert aurc(loss[perm], u[perm], ties="average") == pytest.approx(aurc(loss, u, ties="average"), rel=1e-13)
    assert aurc(loss, u, ties="index") == aurc(loss, u) == pytest.approx(_aurc_index(loss, u), rel=1e-13)
    with pytest.raises(ValueError, match="ties"):
        aurc(loss, u, ties="random")


# --------------------------------------------------------------------------------------------
# Operating points
# --------------------------------------------------------------------------------------------
def test_risk_at_coverage_on_distinct_scores_is_the_rc_curve():
    rng = np.random.default_rng(6)
    loss, u = rng.exponential(size=50), rng.normal(size=50)
    coverage, risk = rc_curve(loss, u)
    for k in (1, 7, 25, 50):
        assert risk_at_coverage(loss, u, k / 50) == pytest.approx(risk[k - 1], rel=1e-12)


def test_risk_at_coverage_is_the_bounded_abstention_rule():
    rng = np.random.default_rng(7)
    for _ in range(100):
        loss, u = _random_case(rng)
        omega = float(rng.uniform(0.01, 1.0))
        expected_risk, expected_coverage = empirical_risk_coverage(loss, u, fit_bounded_abstention(loss, u, omega))
        assert expected_coverage == pytest.approx(omega, rel=1e-9)
        assert risk_at_coverage(loss, u, omega) == pytest.approx(expected_risk, rel=1e-9, abs=1e-12)
        perm = rng.permutation(loss.size)
        assert risk_at_coverage(loss[perm], u[perm], omega) == pytest.approx(
            risk_at_coverage(loss, u, omega), rel=1e-12, abs=1e-15)


def test_coverage_at_risk_is_the_bounded_improvement_rule():
    rng = np.random.default_rng(9)
    n_feasible = 0
    for _ in range(150):
        loss, u = _random_case(rng)
        target = float(rng.uniform(0.0, 1.2) * max(loss.mean(), 1e-3))
        result = coverage_at_risk(loss, u, target)
        assert 0.0 <= result <= 1.0
        try:
            selection = fit_bounded_improvement(loss, u, target) if target > 0 else None
        except ValueError:
            selection = None
            assert result == 0.0  # infeasible: even the least uncertain tie group is too risky
        if selection is not None:
            n_feasible += 1
            _, expected = empirical_risk_coverage(loss, u, selection)
            assert result == pytest.approx(expected, rel=1e-9, abs=1e-12)
        if 0.0 < result < 1.0:  # the boundary is exactly at the target risk
            assert risk_at_coverage(loss, u, result) == pytest.approx(target, rel=1e-9, abs=1e-12)
    assert n_feasible > 50


def test_coverage_at_risk_small_cases():
    assert coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.5) == 1.0
    assert coverage_at_risk([0, 0, 1, 1], [0, 1, 2, 3], 0.25) == pytest.approx(2 / 3)
    assert coverage_at_risk([1, 0], [0, 1], 0.4) == 0.0
    assert coverage_at_risk([0, 1, 0, 1], [0, 0, 0, 0], 0.5) == 1.0
    assert coverage_at_risk([0, 0, 1], [0, 1, 2], 0.0) == pytest.approx(2 / 3)


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------
def test_bootstrap_covers_the_true_augrc():
    """95 % intervals cover the population AUGRC in >= 93 % of 500 simulated data sets.

    u ~ U(0, 1), loss ~ Bernoulli(u): the generalized risk at coverage c is
    int_0^c u du = c^2 / 2, so the population AUGRC is int_0^1 c^2/2 dc = 1/6
    (the finite-sample bias, 1/(12 n), is 2 % of the standard error at n = 200).
    """
    rng = np.random.default_rng(2024)
    n, repeats, hits = 200, 500, 0
    for _ in range(repeats):
        u = rng.random(n)
        loss = (rng.random(n) < u).astype(float)
        low, high = bootstrap_ci("augrc", loss, u, n_resamples=400, random_state=rng)
        hits += low <= 1 / 6 <= high
    assert hits / repeats >= 0.93


METRIC_FORMS = {
    "aurc": "aurc",
    "augrc": "augrc",
    "eaurc": eaurc,
    "eaugrc": eaugrc,
    "aurc_average": functools.partial(aurc, ties="average"),
    "risk_at_coverage": functools.partial(risk_at_coverage, coverage=0.6),
    "coverage_at_risk": functools.partial(coverage_at_risk, risk=0.4),
}


@pytest.mark.parametrize("form", sorted(METRIC_FORMS))
def test_bootstrap_vectorised_equals_per_resample_loop(form):
    metric = METRIC_FORMS[form]
    function = get_metric(metric)
    rng = np.random.default_rng(11)
    for seed in range(4):
        loss, u = _random_case(rng)
        fast = bootstrap_ci(metric, loss, u, n_resamples=150, level=0.9, random_state=seed)
        slow = bootstrap_ci(lambda a, b: function(a, b), loss, u, n_resamples=150, level=0.9, random_state=seed)
        assert isinstance(fast, ConfidenceInterval) and isinstance(fast.low, float)
        np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)
        assert fast.low <= fast.high


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    u = rng.random(300)
    loss = 100.0 * (rng.random(300) < u)
    first = bootstrap_ci("eaurc", loss, u, n_resamples=500, random_state=42)
    assert first == bootstrap_ci(eaurc, loss, u, n_resamples=500, random_state=42)
    assert first != bootstrap_ci("eaurc", loss, u, n_resamples=500, random_state=43)
    low, high = first
    assert low < eaurc(loss, u) < high
    narrow = bootstrap_ci("eaurc", loss, u, n_resamples=500, level=0.5, random_state=42)
    assert low < narrow.low < narrow.high < high


def test_bootstrap_in_blocks_equals_the_loop(monkeypatch):
    rng = np.random.default_rng(1)
    loss, u = rng.random(50), rng.random(50)
    monkeypatch.setattr(metrics._bootstrap, "_BOOTSTRAP_BLOCK_ELEMENTS", 50 * 7)  # 7 resamples per block
    blocked = bootstrap_ci("augrc", loss, u, n_resamples=100, random_state=3)
    looped = bootstrap_ci(lambda a, b: augrc(a, b), loss, u, n_resamples=100, random_state=3)
    np.testing.assert_allclose(blocked, looped, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
        ({"level": 1.0}, "level"),
        ({"level": "high"}, "level"),
        ({"metric": "auroc"}, "valid names are"),
        ({"metric": 3}, "metric"),
        ({"metric": functools.partial(risk_at_coverage, coverage=1.5)}, "coverage"),
    ],
)
def test_bootstrap_argument_errors(kwargs, match):
    arguments = {"metric": "aurc", "loss": [0.0, 1.0, 0.0], "uncertainty": [1.0, 2.0, 3.0]} | kwargs
    with pytest.raises(ValueError, match=match):
        bootstrap_ci(**arguments)


# --------------------------------------------------------------------------------------------
# Registry, confusion matrix, input errors
# --------------------------------------------------------------------------------------------
def test_registry():
    assert list(METRICS) == ["aurc", "augrc", "eaurc", "eaugrc"]
    assert {name: m.label for name, m in METRICS.items()} == {
        "aurc": "AuRC", "augrc": "AUGRC", "eaurc": "E-AuRC", "eaugrc": "E-AUGRC"}
    for name, entry in METRICS.items():
        assert get_metric(name) is entry.function is getattr(metrics, name)
        assert isinstance(entry.function([0.0, 1.0], [0.5, 0.2]), float)
    assert get_metric(augrc) is augrc
    with pytest.raises(ValueError, match="'AURC' is not a valid metric name; valid names are 'aurc', 'augrc', 'eaurc', 'eaugrc'"):
        get_metric("AURC")


def test_reject_confusion_matrix():
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    rejected = rng.random(200) < 0.3
    m = reject_confusion_matrix(y_true, y_pred, rejected)
    correct = y_true == y_pred
    assert m.dtype == np.int64 and m.shape == (2, 2)
    assert m.tolist() == [[np.sum(~rejected & correct), np.sum(~rejected & ~correct)],
                          [np.sum(rejected & correct), np.sum(rejected & ~correct)]]
    assert reject_confusion_matrix(["a", "b"], ["a", "a"], [0, 1]).tolist() == [[1, 0], [0, 1]]


@pytest.mark.parametrize(
    "args, match",
    [
        ((["a"], ["a", "b"], [False, False]), "same length"),
        (([], [], []), "y_true must contain at least one example"),
        (([1.0, np.nan], [1.0, 1.0], [True, False]), "y_true contains 1 NaN"),
        (([1, 2], [1, np.nan], [True, False]), "y_pred contains 1 NaN"),
        (([1, 2], [1, 2], [0, 2]), "rejected must be boolean"),
        (([1, 2], [1, 2], [[True, False]]), "rejected must be 1-D"),
    ],
)
def test_reject_confusion_matrix_errors(args, match):
    with pytest.raises(ValueError, match=match):
        reject_confusion_matrix(*args)


ALL_METRICS = {
    "aurc": aurc,
    "aurc_average": functools.partial(aurc, ties="average"),
    "augrc": augrc,
    "eaurc": eaurc,
    "eaugrc": eaugrc,
    "risk_at_coverage": functools.partial(risk_at_coverage, coverage=0.5),
    "coverage_at_risk": functools.partial(coverage_at_risk, risk=0.5),
    "bootstrap_ci": functools.partial(bootstrap_ci, "augrc", n_resamples=10),
}
BAD_INPUTS = {
    "nan_loss": (([0.0, np.nan], [0.1, 0.2]), r"loss contains 1 NaN"),
    "nan_uncertainty": (([0.0, 1.0], [np.nan, 0.2]), r"uncertainty contains 1 NaN"),
    "negative_loss": (([0.0, -1.0], [0.1, 0.2]), r"loss must be non-negative"),
    "length_mismatch": (([0.0, 1.0], [0.1, 0.2, 0.3]), r"loss and uncertainty must have the same length"),
    "empty": (([], []), r"loss must contain at least one example"),
}


@pytest.mark.parametrize("bad", sorted(BAD_INPUTS))
@pytest.mark.parametrize("name", sorted(ALL_METRICS))
def test_bad_input_names_the_argument(name, bad):
    args, match = BAD_INPUTS[bad]
    with pytest.raises(ValueError, match=match):
        ALL_METRICS[name](*args)


@pytest.mark.parametrize("value", [0.0, -0.1, 1.01, np.nan, "x"])
def test_risk_at_coverage_rejects_bad_coverage(value):
    with pytest.raises(ValueError, match="coverage"):
        risk_at_coverage([0.0, 1.0], [0.1, 0.2], value)


@pytest.mark.parametrize("value", [-0.1, np.inf, np.nan, None])
def test_coverage_at_risk_rejects_bad_risk(value):
    with pytest.raises(ValueError, match="risk must be a finite number >= 0"):
        coverage_at_risk([0.0, 1.0], [0.1, 0.2], value)
