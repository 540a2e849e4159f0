"""Tests of AUGRC, excess areas, operating points, tie-averaged AuRC, bootstrap and the metric registry."""

import functools
import itertools
import math

import numpy as np
import pytest

from rejectopt import metrics
from rejectopt._checks import clopper_pearson
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
from rejectopt.selective import (
    empirical_risk_coverage,
    fit_bounded_abstention,
    fit_bounded_improvement,
)


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
    assert augrc(loss / 100, u) == pytest.approx(
        augrc(loss, u) / 100, rel=1e-13
    )  # no x1000 scaling


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
        assert augrc(loss, u) == pytest.approx(
            sele_loss(loss, u) - loss.sum() / (2 * n**2), rel=1e-12, abs=1e-15
        )


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
        assert eaurc(loss, u) == pytest.approx(
            _aurc_index(loss, u) - _aurc_index(loss, loss), abs=1e-12
        )
        oracle = _augrc_reference(loss.tolist(), loss.tolist())
        assert eaugrc(loss, u) == pytest.approx(
            _augrc_reference(loss.tolist(), u.tolist()) - oracle, abs=1e-12
        )
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
    assert aurc(loss[perm], u[perm], ties="average") == pytest.approx(
        aurc(loss, u, ties="average"), rel=1e-13
    )
    assert (
        aurc(loss, u, ties="index")
        == aurc(loss, u)
        == pytest.approx(_aurc_index(loss, u), rel=1e-13)
    )
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
        expected_risk, expected_coverage = empirical_risk_coverage(
            loss, u, fit_bounded_abstention(loss, u, omega)
        )
        assert expected_coverage == pytest.approx(omega, rel=1e-9)
        assert risk_at_coverage(loss, u, omega) == pytest.approx(expected_risk, rel=1e-9, abs=1e-12)
        perm = rng.permutation(loss.size)
        assert risk_at_coverage(loss[perm], u[perm], omega) == pytest.approx(
            risk_at_coverage(loss, u, omega), rel=1e-12, abs=1e-15
        )


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
        slow = bootstrap_ci(
            lambda a, b: function(a, b), loss, u, n_resamples=150, level=0.9, random_state=seed
        )
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
    monkeypatch.setattr(
        metrics._bootstrap, "_BOOTSTRAP_BLOCK_ELEMENTS", 50 * 7
    )  # 7 resamples per block
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
        "aurc": "AuRC",
        "augrc": "AUGRC",
        "eaurc": "E-AuRC",
        "eaugrc": "E-AUGRC",
    }
    for name, entry in METRICS.items():
        assert get_metric(name) is entry.function is getattr(metrics, name)
        assert isinstance(entry.function([0.0, 1.0], [0.5, 0.2]), float)
    assert get_metric(augrc) is augrc
    with pytest.raises(
        ValueError,
        match="'AURC' is not a valid metric name; valid names are 'aurc', 'augrc', 'eaurc', 'eaugrc'",
    ):
        get_metric("AURC")


def test_reject_confusion_matrix():
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    rejected = rng.random(200) < 0.3
    m = reject_confusion_matrix(y_true, y_pred, rejected)
    correct = y_true == y_pred
    assert m.dtype == np.int64 and m.shape == (2, 2)
    assert m.tolist() == [
        [np.sum(~rejected & correct), np.sum(~rejected & ~correct)],
        [np.sum(rejected & correct), np.sum(rejected & ~correct)],
    ]
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
    "length_mismatch": (
        ([0.0, 1.0], [0.1, 0.2, 0.3]),
        r"loss and uncertainty must have the same length",
    ),
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


# --------------------------------------------------------------------------------------------
# Partial areas in the paper's convention
# --------------------------------------------------------------------------------------------
def _step_area(loss, uncertainty, low, high, ties="index"):
    """Integral over [low, high] of the step curve c -> L(ceil(cn)) / ceil(cn), by the midpoint rule."""
    n = len(loss)
    order = sorted(range(n), key=lambda i: (uncertainty[i], i))
    sorted_loss = [loss[i] for i in order]
    if ties == "average":  # each loss replaced by its tie group's mean
        sorted_loss = []
        for _, group in itertools.groupby(order, key=lambda i: uncertainty[i]):
            members = list(group)
            sorted_loss += [float(np.mean([loss[i] for i in members]))] * len(members)
    risk = np.cumsum(sorted_loss) / np.arange(1, n + 1)
    grid = np.linspace(low, high, 400_001)[:-1] + (high - low) / 800_000  # midpoints
    return float(np.mean(risk[np.ceil(grid * n).astype(int) - 1]) * (high - low))


def test_paper_partial_aurc_integrates_the_step_curve_of_eq_27():
    rng = np.random.default_rng(4)
    loss, uncertainty = rng.integers(0, 3, 23).astype(float), rng.integers(0, 6, 23).astype(float)
    for ties in ("index", "average"):
        assert aurc(loss, uncertainty, ties=ties, coverage_range=(0, 1)) == pytest.approx(
            aurc(loss, uncertainty, ties=ties), rel=1e-13
        )
        for low, high in ((0.0, 0.5), (0.13, 0.71), (0.5, 1.0), (0.3, 0.31)):
            assert aurc(loss, uncertainty, ties=ties, coverage_range=(low, high)) == pytest.approx(
                _step_area(loss, uncertainty, low, high, ties), abs=1e-5
            )
    # by hand: risks 0, 1/2, 2/3 on (0, 1/3], (1/3, 2/3], (2/3, 1]; [1/2, 1] holds 1/6 of 1/2 and 1/3 of 2/3
    assert aurc([0, 1, 1], [1, 2, 3], coverage_range=(0.5, 1)) == pytest.approx(
        1 / 12 + 2 / 9, rel=1e-12
    )
    # additive over adjacent ranges
    parts = [aurc(loss, uncertainty, coverage_range=r) for r in ((0, 0.4), (0.4, 0.9), (0.9, 1))]
    assert sum(parts) == pytest.approx(aurc(loss, uncertainty), rel=1e-12)


def test_paper_partial_augrc_is_the_trapezoid_on_the_sub_range():
    rng = np.random.default_rng(6)
    loss, uncertainty = rng.random(31), np.round(rng.random(31), 1)
    assert augrc(loss, uncertainty, coverage_range=(0, 1)) == pytest.approx(
        augrc(loss, uncertainty), rel=1e-13
    )
    parts = [augrc(loss, uncertainty, coverage_range=r) for r in ((0, 0.25), (0.25, 0.6), (0.6, 1))]
    assert sum(parts) == pytest.approx(augrc(loss, uncertainty), rel=1e-12)
    assert augrc(loss, uncertainty, coverage_range=(0.2, 0.7)) == pytest.approx(
        augrc(loss, uncertainty, convention="fd-shifts", coverage_range=(0.2, 0.7)), rel=1e-12
    )


# --------------------------------------------------------------------------------------------
# Group-conditional metrics and the report
# --------------------------------------------------------------------------------------------
def test_groups_give_each_groups_own_metric():
    rng = np.random.default_rng(8)
    loss, uncertainty = 100.0 * (rng.random(90) < 0.3), np.round(rng.random(90), 2)
    groups = rng.choice(["x", "y", "z"], 90)
    for function, kwargs in (
        (aurc, {}),
        (augrc, {}),
        (eaurc, {}),
        (eaugrc, {}),
        (aurc, {"ties": "average"}),
        (aurc, {"coverage_range": (0, 0.5)}),
        (risk_at_coverage, {"coverage": 0.6}),
        (coverage_at_risk, {"risk": 20.0}),
        (aurc, {"convention": "fd-shifts"}),
    ):
        got = function(loss, uncertainty, groups=groups, **kwargs)
        assert list(got) == ["x", "y", "z"]
        for label in got:
            rows = groups == label
            assert got[label] == function(loss[rows], uncertainty[rows], **kwargs)
    curves = rc_curve(loss, uncertainty, groups=groups)
    assert np.array_equal(
        curves["y"][1], rc_curve(loss[groups == "y"], uncertainty[groups == "y"])[1]
    )
    assert aurc([0, 1, 0, 1], [1, 2, 3, 4], groups=np.array([2, 2, 1, 1])) == {1: 0.25, 2: 0.25}


def test_groups_are_refused_when_they_do_not_label_every_row():
    with pytest.raises(
        ValueError, match="groups must hold one label per row: 3 rows, got shape \\(2,\\)"
    ):
        aurc([0, 1, 0], [1, 2, 3], groups=["a", "b"])
    with pytest.raises(ValueError, match="missing label \\(None or NaN\\) at row 1"):
        aurc([0, 1, 0], [1, 2, 3], groups=["a", None, "b"])
    with pytest.raises(ValueError, match="missing label.*at row 2"):
        augrc([0, 1, 0], [1, 2, 3], groups=[1.0, 2.0, np.nan])
    with pytest.raises(ValueError, match="mixes labels of different kinds, strings"):
        aurc([0, 1, 0], [1, 2, 3], groups=np.array(["a", 1, 2], dtype=object))
    with pytest.raises(TypeError, match="groups must be an array-like"):
        aurc([0, 1, 0], [1, 2, 3], groups="abc")


def test_selective_report_by_hand():
    loss = [0, 100, 0, 0, 100, 100, 0]
    uncertainty = [0.1, 0.8, 0.2, 0.3, 0.9, 0.4, 0.5]
    groups = ["a", "a", "a", "b", "b", "b", "b"]
    report = metrics.selective_report(loss, uncertainty, groups, selection=0.4)
    assert report["group"].tolist() == ["a", "b", "(all)"]
    assert report["n"].tolist() == [3, 4, 7]
    assert report["coverage"].tolist() == pytest.approx([2 / 3, 2 / 4, 4 / 7])
    assert report["selective_risk"].tolist() == pytest.approx([0.0, 50.0, 25.0])
    assert report["worst"].tolist() == [False, True, False]
    assert report["aurc"].tolist() == [
        aurc(loss[:3], uncertainty[:3]),
        aurc(loss[3:], uncertainty[3:]),
        aurc(loss, uncertainty),
    ]
    assert report["augrc"].iloc[1] == augrc(loss[3:], uncertainty[3:])
    full = metrics.selective_report(loss, uncertainty)  # no groups, every row accepted
    assert full["group"].tolist() == ["(all)"] and full["coverage"].tolist() == [1.0]
    assert full["selective_risk"].iloc[0] == pytest.approx(300 / 7) and not full["worst"].any()


def test_selective_report_takes_a_fitted_selective_classifier_on_real_data():
    from sklearn.datasets import load_wine
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from rejectopt import SelectiveClassifier
    from rejectopt.selective import SelectionFunction

    X, y = load_wine(return_X_y=True)
    model = SelectiveClassifier(
        make_pipeline(StandardScaler(), LogisticRegression()),
        target="coverage",
        value=0.8,
        C_grid=(1.0,),
        random_state=0,
    ).fit(X[::2], y[::2])
    X_test, y_test = X[1::2], y[1::2]
    uncertainty = model.predict_uncertainty(X_test)
    loss = 100.0 * (model.estimator_.predict(X_test) != y_test)
    groups = np.where(X_test[:, 0] > np.median(X_test[:, 0]), "high alcohol", "low alcohol")
    report = metrics.selective_report(loss, uncertainty, groups, selection=model, confidence=0.9)
    prob = model.selection_.acceptance_probability(uncertainty)
    assert report["coverage"].iloc[-1] == pytest.approx(prob.mean())
    same = metrics.selective_report(
        loss,
        uncertainty,
        groups,
        selection=SelectionFunction(model.selection_.threshold, model.selection_.accept_prob),
        confidence=0.9,
    )
    assert report.equals(same)
    assert (report["risk_low"] <= report["selective_risk"]).all() and (
        report["selective_risk"] <= report["risk_high"]
    ).all()


# --------------------------------------------------------------------------------------------
# Confidence bands of the RC curve, intervals of its read-outs, paired comparison
# --------------------------------------------------------------------------------------------
def _population(rng, reps, n, binary=True):
    """s ~ U(0, 1); loss with mean p(s) = 0.05 + 0.4 s, so R(t) = E[loss | s <= t] = 0.05 + 0.2 t."""
    s = rng.random((reps, n))
    p = 0.05 + 0.4 * s
    loss = (rng.random((reps, n)) < p).astype(float) if binary else p * 2.0 * rng.random((reps, n))
    return s, loss, 0.05 + 0.2 * np.sort(s, axis=1)  # the truth at every k (sorted scores)


def test_band_known_answer_clopper_pearson_and_bernstein():
    band = metrics.risk_coverage_band([0, 0, 100, 0, 100], [1, 2, 3, 3, 4], confidence=0.9)
    assert band.coverage.tolist() == [0.2, 0.4, 0.8, 1.0] and band["risk"].tolist() == [
        0.0,
        0.0,
        25.0,
        40.0,
    ]
    from scipy.stats import beta  # the exact binomial interval, from its definition

    assert band.lower[2] == pytest.approx(100 * beta.ppf(0.05, 1, 4), rel=1e-12)
    assert band.upper[2] == pytest.approx(100 * beta.ppf(0.95, 2, 3), rel=1e-12)
    assert band.lower[0] == 0.0 and band.upper[0] == pytest.approx(
        100 * (1 - 0.05 ** (1 / 1)), rel=1e-12
    )
    assert set(band.keys()) >= {"coverage", "risk", "lower", "upper"} and band["method"].startswith(
        "Clopper"
    )
    together = metrics.risk_coverage_band(
        [0, 0, 100, 0, 100], [1, 2, 3, 3, 4], confidence=0.9, simultaneous=True
    )
    assert together.upper[2] == pytest.approx(
        100 * beta.ppf(1 - 0.1 / 8, 2, 3), rel=1e-12
    )  # Bonferroni, m = 4
    assert "Bonferroni over 4 coverages" in together.method
    # bounded losses: Maurer & Pontil, each side at alpha / 2: sqrt(2 V ln(4/a) / k) + 7 ln(4/a) / (3 (k - 1))
    loss = np.array([0.0, 1.0, 0.5, 2.0, 1.5, 0.0, 0.5, 1.0])
    band = metrics.risk_coverage_band(loss, np.arange(8), loss_bound=2.0)
    z = loss / 2.0
    half = math.sqrt(2 * np.var(z, ddof=1) * math.log(4 / 0.05) / 8) + 7 * math.log(4 / 0.05) / 21
    assert (
        band.lower[-1] == pytest.approx(2 * max(0.0, z.mean() - half))
        and "empirical Bernstein" in band.method
    )
    assert band.upper[-1] == pytest.approx(2 * min(1.0, z.mean() + half))


def test_band_needs_the_loss_bound_from_the_losss_definition():
    with pytest.raises(
        ValueError, match="loss_bound is needed.*100 for the 0/100 loss.*without errors"
    ):
        metrics.risk_coverage_band([0, 0, 0], [1, 2, 3])  # no error: the bound cannot be read off
    assert metrics.risk_coverage_band([0, 0, 0], [1, 2, 3], loss_bound=100).upper[
        -1
    ] == pytest.approx(100 * (1 - 0.025 ** (1 / 3)))
    with pytest.raises(ValueError, match="loss_bound=1.0 is below the largest loss 2.0"):
        metrics.risk_coverage_band([0, 2], [1, 2], loss_bound=1)
    with pytest.raises(ValueError, match="confidence must lie in \\(0, 1\\)"):
        metrics.risk_coverage_band([0, 1], [1, 2], confidence=95)
    with pytest.raises(ValueError, match="simultaneous must be True or False"):
        metrics.risk_coverage_band([0, 1], [1, 2], simultaneous="yes")


def test_pointwise_band_covers_the_selective_risk_at_its_nominal_level():
    rng = np.random.default_rng(1)
    reps, n, k = 400, 200, 99  # the point at coverage 1/2
    s, loss, truth = _population(rng, reps, n)
    covered = np.array(
        [
            (lambda b: b.lower[k] <= t[k] <= b.upper[k])(metrics.risk_coverage_band(row_loss, u))
            for row_loss, u, t in zip(loss, s, truth)
        ]
    )
    assert covered.mean() >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    # the same band, read over the whole curve, does not hold everywhere at once: the simultaneous one does
    whole = [
        np.all((b.lower <= t) & (t <= b.upper))
        for b, t in (
            (metrics.risk_coverage_band(row_loss, u), t)
            for row_loss, u, t in zip(loss[:100], s[:100], truth[:100])
        )
    ]
    assert np.mean(whole) < 0.8


def test_simultaneous_band_covers_the_whole_curve_at_its_nominal_level():
    rng = np.random.default_rng(2)
    reps, n = 300, 200
    s, loss, truth = _population(rng, reps, n)
    whole = [
        np.all((b.lower <= t) & (t <= b.upper))
        for b, t in (
            (metrics.risk_coverage_band(row_loss, u, simultaneous=True), t)
            for row_loss, u, t in zip(loss, s, truth)
        )
    ]
    assert np.mean(whole) >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    s, loss, truth = _population(rng, 200, n, binary=False)  # graded losses: empirical Bernstein
    whole = [
        np.all((b.lower <= t) & (t <= b.upper))
        for b, t in (
            (metrics.risk_coverage_band(row_loss, u, simultaneous=True, loss_bound=1.0), t)
            for row_loss, u, t in zip(loss, s, truth)
        )
    ]
    assert np.mean(whole) >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)


def test_intervals_of_risk_at_coverage_and_coverage_at_risk():
    loss, uncertainty = [0, 0, 100, 0, 100, 0], [1, 2, 3, 3, 4, 5]
    risk, ci = risk_at_coverage(loss, uncertainty, 0.5, confidence=0.9)
    assert (
        risk == risk_at_coverage(loss, uncertainty, 0.5) == pytest.approx(50 / 3)
    )  # half of the tie (100, 0)
    low, high = clopper_pearson(0.5, 3.0, 0.1)  # fractional count: 0.5 errors among 3 accepted
    assert ci == ConfidenceInterval(
        pytest.approx(100 * float(low)), pytest.approx(100 * float(high))
    )
    coverage, ci = coverage_at_risk(loss, uncertainty, 30.0, confidence=0.9)
    assert coverage == coverage_at_risk(loss, uncertainty, 30.0)
    band = metrics.risk_coverage_band(loss, uncertainty, confidence=0.9, simultaneous=True)
    assert ci.low == max([c for c, u in zip(band.coverage, band.upper) if u <= 30.0], default=0.0)
    assert ci.low <= coverage <= ci.high
    by_group = risk_at_coverage(loss, uncertainty, 0.5, groups=[0, 0, 0, 1, 1, 1], confidence=0.9)
    assert by_group[1][0] == pytest.approx(50 / 1.5)  # 1.5 of (0, 100, 0) accepted
    with pytest.raises(ValueError, match="confidence is computed for the convention 'paper' only"):
        risk_at_coverage(loss, uncertainty, 0.5, confidence=0.9, convention="fd-shifts")


def test_compare_scores_known_answers():
    rng = np.random.default_rng(0)
    risk = rng.random(120)
    loss = 100.0 * (rng.random(120) < risk)
    a, b = risk + rng.normal(0, 0.2, 120), rng.random(120)
    result = metrics.compare_scores(loss, a, b, n_resamples=300, random_state=3)
    assert result.difference == aurc(loss, a) - aurc(loss, b) == result["difference"]
    slow = metrics.compare_scores(
        loss, a, b, metric=lambda row_loss, u: aurc(row_loss, u), n_resamples=300, random_state=3
    )
    assert (
        slow.ci == pytest.approx(result.ci, rel=1e-12) and slow.p_value == result.p_value
    )  # same resamples
    same = metrics.compare_scores(loss, a, a, n_resamples=50)
    assert same.difference == 0.0 and same.ci == (0.0, 0.0) and same.p_value == 1.0
    assert "paired percentile bootstrap" in result.method and result.metric == "aurc"
    flipped = metrics.compare_scores(loss, b, a, metric="augrc", n_resamples=300, random_state=3)
    assert flipped.difference == pytest.approx(augrc(loss, b) - augrc(loss, a))
    with pytest.raises(ValueError, match="same length"):
        metrics.compare_scores(loss, a, b[:-1])
    with pytest.raises(ValueError, match="n_resamples must be an integer >= 1"):
        metrics.compare_scores(loss, a, b, n_resamples=0)


def test_compare_scores_holds_its_level_under_the_null():
    # two exchangeable noisy copies of the same risk: equal population AuRC, so "no difference" is true
    rng = np.random.default_rng(3)
    reps, n = 200, 200
    rejected, covered = 0, 0
    for r in range(reps):
        risk = rng.random(n)
        loss = (rng.random(n) < 0.1 + 0.5 * risk).astype(float)
        result = metrics.compare_scores(
            loss,
            risk + rng.normal(0, 0.3, n),
            risk + rng.normal(0, 0.3, n),
            n_resamples=300,
            random_state=r,
        )
        rejected += result.p_value < 0.05
        covered += result.ci.low <= 0.0 <= result.ci.high
    tolerance = 3 * math.sqrt(0.05 * 0.95 / reps)
    assert rejected / reps <= 0.05 + tolerance
    assert covered / reps >= 0.95 - tolerance


def test_coverage_at_risk_interval_covers_the_populations_coverage():
    # R(t) = 0.05 + 0.2 t for s ~ U(0, 1): the largest coverage with risk <= 0.12 is 0.35
    rng = np.random.default_rng(5)
    reps, n = 100, 1000
    s, loss, _ = _population(rng, reps, n)
    intervals = np.array(
        [coverage_at_risk(row_loss, u, 0.12, confidence=0.95)[1] for row_loss, u in zip(loss, s)]
    )
    assert np.mean((intervals[:, 0] <= 0.35) & (0.35 <= intervals[:, 1])) >= 0.95 - 3 * math.sqrt(
        0.05 * 0.95 / reps
    )
    assert np.mean(intervals[:, 1] - intervals[:, 0]) < 0.8  # informative: not the whole [0, 1]


def test_per_group_curves_on_one_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(9)
    loss, uncertainty = 100.0 * (rng.random(80) < 0.2), rng.random(80)
    groups = np.repeat(["a", "b"], 40)
    fig, ax = plt.subplots()
    for label, (coverage, risk) in rc_curve(loss, uncertainty, groups=groups).items():
        rows = groups == label
        metrics.RiskCoverageDisplay.from_losses(
            loss[rows], uncertainty[rows], name=label, ax=ax, plot_oracle=False, plot_random=False
        )
        assert np.array_equal(ax.lines[-1].get_ydata(), risk) and np.array_equal(
            ax.lines[-1].get_xdata(), coverage
        )
    assert [line.get_label().split()[0] for line in ax.lines] == ["a", "b"]
    plt.close(fig)


@pytest.mark.slow
def test_band_and_paired_test_levels_with_tighter_tolerance():
    """The fast simulations again with 4-5 times the samples (a 3-sigma tolerance of about 1.5 points)."""
    rng = np.random.default_rng(11)
    reps, n, k = 2000, 200, 99
    s, loss, truth = _population(rng, reps, n)
    covered = [
        (lambda b: b.lower[k] <= t[k] <= b.upper[k])(metrics.risk_coverage_band(row_loss, u))
        for row_loss, u, t in zip(loss, s, truth)
    ]
    assert np.mean(covered) >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    reps, rejected = 800, 0
    for r in range(reps):
        risk = rng.random(n)
        loss = (rng.random(n) < 0.1 + 0.5 * risk).astype(float)
        result = metrics.compare_scores(
            loss,
            risk + rng.normal(0, 0.3, n),
            risk + rng.normal(0, 0.3, n),
            n_resamples=300,
            random_state=r,
        )
        rejected += result.p_value < 0.05
    assert rejected / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
