"""Tests of rejectopt.metrics against definition-level computations."""

import numpy as np
import pytest

from rejectopt.metrics import (
    aurc,
    rc_curve,
    risk_full,
    sele_loss,
    sele_proxy,
    selective_risk_coverage,
)
from rejectopt.metrics._confusion import selective_outcome


def _tied_sample(seed, n=60):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)


def _aurc_by_definition(loss, score):
    order = sorted(range(len(loss)), key=lambda i: (score[i], i))
    total, running = 0.0, 0.0
    for rank, i in enumerate(order, start=1):
        running += loss[i]
        total += running / rank
    return total / len(loss)


def _sele_by_definition(loss, score):
    n = len(loss)
    return sum(loss[i] * (score[i] <= score[j]) for i in range(n) for j in range(n)) / n**2


def _proxy_by_definition(loss, score):
    diff = score[None, :] - score[:, None]
    return float((loss[:, None] * np.log1p(np.exp(diff))).sum() / len(loss) ** 2)


@pytest.mark.parametrize("seed", range(5))
def test_aurc_matches_definition_with_ties(seed):
    loss, score = _tied_sample(seed)
    assert aurc(loss, score) == pytest.approx(_aurc_by_definition(loss, score), rel=1e-12)


def test_aurc_breaks_ties_by_index():
    assert aurc([1, 0], [0.0, 0.0]) == pytest.approx((1 + 0.5) / 2)
    assert aurc([0, 1], [0.0, 0.0]) == pytest.approx((0 + 0.5) / 2)


@pytest.mark.parametrize("seed", range(5))
def test_sele_loss_matches_definition_with_ties(seed):
    loss, score = _tied_sample(seed)
    assert sele_loss(loss, score) == pytest.approx(_sele_by_definition(loss, score), rel=1e-12)


def test_sele_proxy_matches_definition_across_row_blocks(monkeypatch):
    rng = np.random.default_rng(1)
    loss, score = rng.random(300), rng.normal(size=300)
    expected = _proxy_by_definition(loss, score)
    assert sele_proxy(loss, score) == pytest.approx(expected, rel=1e-12)
    monkeypatch.setattr("rejectopt.metrics._sele._PROXY_BLOCK_ELEMENTS", 7 * 300)  # 43 row blocks
    assert sele_proxy(loss, score) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_sele_never_exceeds_aurc_for_distinct_scores(seed):
    rng = np.random.default_rng(seed)
    loss, score = rng.integers(0, 3, 200).astype(float), rng.permutation(200).astype(float)
    assert sele_loss(loss, score) <= aurc(loss, score)


@pytest.mark.parametrize("seed", range(5))
def test_theorem_8_bound_when_score_orders_the_losses(seed):
    """sele <= AuRC < 2 sele for distinct scores that sort the losses non-decreasingly.

    That ordering is the hypothesis of Lemma 15 used in the paper's proof.
    """
    rng = np.random.default_rng(seed)
    loss = rng.integers(0, 3, 200).astype(float)
    score = np.argsort(np.argsort(loss, kind="stable")).astype(float)  # distinct, loss-sorted
    sele, area = sele_loss(loss, score), aurc(loss, score)
    assert sele <= area < 2 * sele


def test_theorem_8_upper_bound_fails_for_adversarial_scores():
    """Counterexample to AuRC < 2 sele 'for any s': the single loss on the most confident example.

    AuRC = H_n / n and sele = 1 / n, so the ratio is the harmonic number H_n (> 2 for n >= 4).
    """
    loss, score = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0]
    assert aurc(loss, score) / sele_loss(loss, score) == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4)


def test_score_equal_to_loss_gives_minimal_aurc():
    rng = np.random.default_rng(0)
    loss = rng.integers(0, 5, 100).astype(float)
    oracle = aurc(loss, loss)
    assert oracle == pytest.approx(aurc(np.sort(loss), np.arange(100.0)))
    for _ in range(50):
        assert oracle <= aurc(loss, rng.permutation(100).astype(float)) + 1e-12


def test_aurc_of_all_zero_loss_is_zero():
    assert aurc(np.zeros(10), np.arange(10.0)) == 0.0


def test_rc_curve_last_risk_is_full_risk():
    loss, score = _tied_sample(3)
    coverage, risk = rc_curve(loss, score)
    assert coverage[-1] == 1.0 and coverage[0] == pytest.approx(1 / 60)
    assert risk[-1] == pytest.approx(risk_full(loss))


def test_selective_risk_coverage_accepts_below_or_at_threshold():
    risk, coverage = selective_risk_coverage([0, 1, 2, 3], [0.0, 1.0, 2.0, 3.0], 1.0)
    assert (risk, coverage) == (0.5, 0.5)
    risk, coverage = selective_risk_coverage(
        [1, 1], [5.0, 6.0], 0.0
    )  # nothing accepted: undefined risk
    assert np.isnan(risk) and coverage == 0.0


def test_metrics_return_python_floats():
    loss, score = _tied_sample(0)
    for value in (
        aurc(loss, score),
        sele_loss(loss, score),
        sele_proxy(loss, score),
        risk_full(loss),
    ):
        assert type(value) is float


@pytest.mark.parametrize(
    "loss, score, message",
    [
        ([0, 1, 2], [0, 1], "same length"),
        ([0, np.nan], [0, 1], "NaN"),
        ([0, -1], [0, 1], "non-negative"),
        ([0, 1], [0, np.inf], "uncertainty contains"),
        ([[0, 1]], [[0, 1]], "1-D"),
        ([], [], "at least one"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(loss, score, message):
    for metric in (aurc, sele_loss, sele_proxy, rc_curve):
        with pytest.raises(ValueError, match=message):
            metric(loss, score)


# --------------------------------------------------------------------------------------------
# selective_outcome: the cost risk of an accept mask (the cost-based model's empirical risk)
# --------------------------------------------------------------------------------------------
def test_selective_outcome_counts_errors_and_rejections():
    loss = np.array([0.0, 100.0, 0.0, 100.0, 100.0])
    accepted = np.array([True, True, True, False, False])
    got = selective_outcome(loss, accepted, 0.2)
    # one accepted error (100) and two rejections at 100 d = 20 each, over 5 examples
    assert got["cost_risk"] == pytest.approx((100 + 2 * 20) / 5)
    assert got["coverage"] == pytest.approx(0.6) and got["selective_risk"] == pytest.approx(100 / 3)
    assert (got["n_test"], got["n_rejected"], got["n_errors_accepted"]) == (5, 2, 1)
    # other units: a 0/1 loss with loss_scale 1 gives the same risk divided by 100
    assert selective_outcome(loss / 100, accepted, 0.2, loss_scale=1.0)[
        "cost_risk"
    ] == pytest.approx(got["cost_risk"] / 100)
    # accept all: the error rate; reject all: 100 d and an undefined selective risk
    assert selective_outcome(loss, np.ones(5, bool), 0.2)["cost_risk"] == pytest.approx(60.0)
    none = selective_outcome(loss, np.zeros(5, bool), 0.2)
    assert (
        none["cost_risk"] == pytest.approx(20.0)
        and none["coverage"] == 0
        and np.isnan(none["selective_risk"])
    )


@pytest.mark.parametrize("loss, accepted", [([0.0, 1.0], [True]), ([], []), ([[0.0]], [[True]])])
def test_selective_outcome_rejects_bad_shapes(loss, accepted):
    with pytest.raises(ValueError, match="must be 1-D|of the same non-zero length"):
        selective_outcome(loss, accepted, 0.1)


@pytest.mark.parametrize(
    "loss, cost, message",
    [
        ([float("nan"), 0.0], 0.2, "NaN or infinite"),
        ([-5.0, 0.0], 0.2, "non-negative"),
        ([0.0, 100.0], -0.1, "reject_cost must be a finite number >= 0"),
        ([0.0, 100.0], float("inf"), "reject_cost must be a finite number >= 0"),
    ],
)
def test_selective_outcome_refuses_a_bad_loss_or_reject_cost(loss, cost, message):
    """A NaN loss used to give a NaN cost risk, a negative one a negative selective risk."""
    with pytest.raises(ValueError, match=message):
        selective_outcome(loss, [True, False], cost)


def test_integer_scores_beyond_2_53_keep_their_order():
    # float64 cannot tell 2**62 + 1 from 2**62: cast, they tied (0.75); ranked exactly, 0.25
    assert aurc([1, 0], np.array([2**62 + 1, 2**62])) == 0.25
    assert aurc([1, 0], np.array([2**63 + 1, 2**63], dtype=np.uint64)) == 0.25
    assert aurc([1, 0], [10**400, 1]) == 0.25  # Python ints beyond any dtype: ranked exactly too
    assert aurc([0, 1, 1], np.array([5, 2**60, 3])) == aurc(
        [0, 1, 1], [5.0, 7.0, 3.0]
    )  # small ones unchanged
    with pytest.raises(ValueError, match="beyond 2\\*\\*53.*ranks"):
        selective_risk_coverage(
            [1, 0], np.array([2**62 + 1, 2**62]), 0.5
        )  # a threshold needs the values


def test_inputs_a_newcomer_tries_are_refused_by_name():
    with pytest.raises(
        TypeError, match="loss must be an array-like.*got a generator.*list\\(loss\\)"
    ):
        aurc((x for x in [1, 0]), [1, 2])
    with pytest.raises(TypeError, match="uncertainty must be an array-like.*generator"):
        aurc([1, 0], (x for x in [1, 2]))
    with pytest.raises(ValueError, match="uncertainty holds a value beyond the float64 range"):
        aurc([1, 0], [10**400, 0.5])  # a Python int beside a float: no exact ranking possible
    with pytest.raises(
        ValueError, match="loss values up to 1e\\+308 over 2 rows overflow float64 sums.*rescale"
    ):
        aurc([1e308, 1], [1, 2])
    assert aurc([1e300, 0], [1, 2]) == pytest.approx(0.75e300)  # large but summable: (1 + 1/2) / 2
