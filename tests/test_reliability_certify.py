"""Certified selection under hostile input: levels the computations cannot represent, SGR's and
Learn-then-Test's advice, the per-threshold table, infinite scores and the parameter table."""

import math

import numpy as np
import pytest

from rejectopt import stats
from rejectopt._certify import (
    certified_from_dict,
    fit_certified_coverage,
    fit_certified_risk,
    fit_certified_tpr_fpr,
)
from rejectopt._checks import CONFIDENCE_MIN, check_confidence
from rejectopt._params import CONFIDENCE, format_level
from rejectopt.exceptions import InvalidParameterError
from rejectopt.metrics import risk_coverage_band
from rejectopt.selective import InfeasibleTargetError, SelectionFunction, operating_point
from rejectopt.targets import Target, parse_target


def _rows(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    return 100.0 * (rng.random(n) < s / 4), s


# --------------------------------------------------------------------------------------------
# A confidence the computations cannot represent
# --------------------------------------------------------------------------------------------
TOO_SMALL = (1e-300, 1e-16, 5e-11)
RANGE = r"must lie in \[1e-10, 1\) \(it is 1 - delta, e\.g\. 0\.95\), got "


@pytest.mark.parametrize("level", TOO_SMALL)
def test_a_level_that_underflows_is_refused_naming_the_range(level):
    loss, s = _rows()
    with pytest.raises(ValueError, match="^confidence " + RANGE):
        Target("risk", 20, confidence=level)
    with pytest.raises(ValueError, match="^confidence " + RANGE):
        parse_target(f"coverage=0.8,confidence={level!r}")
    owners = {
        "fit_certified_risk": lambda: fit_certified_risk(loss, s, 20, level),
        "fit_certified_coverage": lambda: fit_certified_coverage(loss, s, 0.8, level),
        "fit_certified_tpr_fpr": lambda: fit_certified_tpr_fpr(
            loss, np.arange(s.size) % 2 == 0, s, 0.5, 0.9, level
        ),
        "wilson_interval": lambda: stats.wilson_interval(3, 10, confidence=level),
        "risk_coverage_band": lambda: risk_coverage_band(loss, s, confidence=level),
        "operating_point": lambda: operating_point(
            loss, s, SelectionFunction(0.5, 1.0), confidence=level, loss_bound=100
        ),
    }
    for owner, call in owners.items():
        with pytest.raises(InvalidParameterError, match=f"^{owner}: confidence " + RANGE):
            call()


def test_the_tables_and_the_check_share_one_range():
    for level in (*TOO_SMALL, 0.0, 1.0, -0.5, math.nan, math.inf, True, "0.9"):
        with pytest.raises(ValueError):
            check_confidence(level)
        assert not CONFIDENCE.accepts(level)
    for level in (CONFIDENCE_MIN, 0.5, 0.95, 0.9999999999999999):
        assert check_confidence(level) == level
        assert CONFIDENCE.accepts(level)
    # outside (0, 1) the wording stays that of every level
    with pytest.raises(ValueError, match=r"^confidence must lie in \(0, 1\)"):
        check_confidence(1.0)


def test_a_certificate_at_the_ends_of_the_range_meets_its_own_target():
    loss, s = _rows()
    for level in (CONFIDENCE_MIN, 1e-6, 0.5, 0.9999999999999999):
        for w in (0.01, 0.5, 0.8, 0.99):
            selection = fit_certified_coverage(loss, s, w, level)
            assert selection.coverage_bound >= w or math.isinf(selection.threshold)
            assert selection.confidence == level


def test_a_certificate_with_a_level_too_small_is_refused_when_read_back():
    certificate = {"bound": 0.8, "confidence": 1e-300, "n_calibration": 10, "method": "x"}
    certificate.update(risk_bound=None, coverage_bound=0.8)
    with pytest.raises(ValueError, match="^certificate.confidence " + RANGE):
        certified_from_dict({"threshold": 0.3, "accept_prob": 1.0}, certificate, format_version=2)


def test_a_level_just_below_one_never_reads_as_one():
    level = 0.9999999999999999
    assert format_level(level) == "0.9999999999999999"
    assert format_level(0.95) == "0.95"
    target = Target("risk", 1, confidence=level)
    assert str(target) == "risk=1,confidence=0.9999999999999999"
    assert parse_target(str(target)) == target
    loss, s = _rows(300)
    with pytest.raises(InfeasibleTargetError) as caught:
        target.fit(loss, s)
    assert "at confidence 0.9999999999999999 " in str(caught.value)
    assert "confidence 1 " not in str(caught.value)
    is_ood = np.arange(s.size) % 2 == 0
    with pytest.raises(InfeasibleTargetError) as caught:
        fit_certified_tpr_fpr(loss, is_ood, s, 0.9, 0.01, level)
    assert "100.0%" not in str(caught.value) and "confidence 1 " not in str(caught.value)


# --------------------------------------------------------------------------------------------
# SGR's refusal: its decision, sorted once
# --------------------------------------------------------------------------------------------
def test_sgrs_advice_search_decides_as_sgr_itself():
    from rejectopt._certify._tails import _SGRSearch
    from rejectopt.selective import fit_geifman_el_yaniv

    rng = np.random.default_rng(3)
    for n in (7, 300, 2500):
        s = np.round(rng.random(n), 2)  # ties: a threshold accepts its tie group
        loss = 100.0 * (rng.random(n) < s / 3)
        search = _SGRSearch(loss, s, 0.1, 100.0)
        for target in rng.random(60) * 100:
            try:
                fit_geifman_el_yaniv(loss, s, target, 0.1, loss_scale=100)
            except InfeasibleTargetError:
                assert not search.certifies(target)
            else:
                assert search.certifies(target)


def test_sgrs_advice_certifies_and_its_rows_needed_is_the_smallest():
    from rejectopt._certify._fits import _rows_needed, _sgr_rows_needed

    loss, s = _rows(3000)
    with pytest.raises(InfeasibleTargetError) as caught:
        fit_certified_risk(loss, s, 1, 0.9, method="sgr")
    best = caught.value.best_bound
    assert fit_certified_risk(loss, s, best, 0.9, method="sgr").bound < best
    for target, delta in ((1e-4, 0.1), (1.0, 0.05), (30.0, 1e-6)):
        n = _sgr_rows_needed(target, delta, 100.0)
        steps = lambda m: max(1, math.ceil(math.log2(m)))  # noqa: E731
        # SGR's first cut holds (n + 1) // 2 rows: error-free, it certifies iff they suffice
        assert (n + 1) // 2 >= _rows_needed(target, delta / steps(n), 100.0)
        assert n // 2 < _rows_needed(target, delta / steps(n - 1), 100.0)


# --------------------------------------------------------------------------------------------
# The per-threshold table's wording; infinite scores; the parameter table
# --------------------------------------------------------------------------------------------
def test_the_table_of_a_coverage_target_says_what_needs_the_loss_bound():
    from rejectopt.targets import certification_table

    loss, s = [0.0, 0.5, 1.0], [0.1, 0.2, 0.3]
    with pytest.raises(ValueError) as caught:
        certification_table(loss, s, Target("coverage", 0.5, confidence=0.9))
    assert "risk target" not in str(caught.value)
    assert str(caught.value).startswith("certification_table's upper_bound column")
    with pytest.raises(ValueError, match="^a certified risk target needs the loss's bound"):
        certification_table(loss, s, Target("risk", 0.4, confidence=0.9))


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_certified_tpr_fpr_refuses_infinite_scores_as_risk_and_coverage_do(bad):
    loss, s = _rows(200)
    s = s.copy()
    s[7] = bad
    is_ood = np.arange(s.size) % 2 == 0
    message = r"^uncertainty contains 1 NaN or infinite value\(s\) \(first: uncertainty\[7\] = "
    with pytest.raises(ValueError, match=message):
        fit_certified_tpr_fpr(loss, is_ood, s, 0.5, 0.9, 0.9)
    with pytest.raises(ValueError, match=message):
        fit_certified_coverage(loss, s, 0.5, 0.9)
    with pytest.raises(ValueError, match=message):
        fit_certified_risk(loss, s, 20, 0.9)


@pytest.mark.parametrize("bad", [1.5, 0, -1, math.nan, True, "0.5"])
def test_certified_coverage_refuses_a_coverage_outside_its_table(bad):
    loss, s = _rows(200)
    with pytest.raises(InvalidParameterError, match="^fit_certified_coverage: target_coverage "):
        fit_certified_coverage(loss, s, bad, 0.9)


@pytest.mark.parametrize("name", ["tpr_min", "fpr_max"])
@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, True])
def test_certified_tpr_fpr_refuses_a_rate_bound_outside_its_table(name, bad):
    loss, s = _rows(200)
    bounds = {"tpr_min": 0.5, "fpr_max": 0.9, name: bad}
    with pytest.raises(InvalidParameterError, match=rf"^fit_certified_tpr_fpr: {name} must be "):
        fit_certified_tpr_fpr(loss, np.arange(s.size) % 2 == 0, s, confidence=0.9, **bounds)


def test_sgr_checks_the_options_it_ignores_and_is_unchanged_by_valid_ones():
    loss, s = _rows(3000)
    reference = fit_certified_risk(loss, s, 20, 0.9, method="sgr")
    other = fit_certified_risk(loss, s, 20, 0.9, method="sgr", start_fraction=0.3, random_state=7)
    assert other == reference
    with pytest.raises(InvalidParameterError, match="^fit_certified_risk: start_fraction "):
        fit_certified_risk(loss, s, 20, 0.9, method="sgr", start_fraction=1.5)
    with pytest.raises(InvalidParameterError, match="^fit_certified_risk: random_state "):
        fit_certified_risk(loss, s, 20, 0.9, method="sgr", random_state="seed")


# --------------------------------------------------------------------------------------------
# rows_needed: the advised sample certifies, one row fewer does not
# --------------------------------------------------------------------------------------------
def _error_free_certifies(n, risk, confidence, method, seed):
    s = np.random.default_rng(seed).random(n)
    try:
        fit_certified_risk(np.zeros(n), s, risk, confidence, method=method)
    except InfeasibleTargetError:
        return False
    return True


@pytest.mark.parametrize("method", ["ltt", "sgr"])
@pytest.mark.parametrize("risk, confidence", [(1, 0.9), (5, 0.95), (10, 0.9), (0.5, 0.99)])
def test_the_advised_sample_size_certifies_error_free_and_one_fewer_does_not(
    method, risk, confidence
):
    with pytest.raises(InfeasibleTargetError) as caught:
        fit_certified_risk(np.zeros(20), np.arange(20.0), risk, confidence, method=method)
    text = str(caught.value)
    advised = int(text.split(" calibration rows), and")[0].rsplit("(", 1)[1])
    assert f"needs at least {caught.value.rows_needed} tested rows ({advised} calibration" in text
    for seed in range(3):
        assert _error_free_certifies(advised, risk, confidence, method, seed)
        assert not _error_free_certifies(advised - 1, risk, confidence, method, seed)


def test_a_run_started_at_the_full_set_tests_it_once_at_the_whole_level():
    # 243 error-free rows: 12 start rows, 231 tested; (1 - 0.01)**231 = 0.098 <= 0.1, which the
    # full set's two tests at split levels each missed
    assert _error_free_certifies(243, 1, 0.9, "ltt", 0)
    from rejectopt._certify import _ltt_rows
    from rejectopt._certify._fits import _ltt_plan

    rows = _ltt_rows(np.zeros(243), np.random.default_rng(0).random(243), 0.05, 0)
    assert _ltt_plan(rows, 1.0, 0.1, 100.0, True) == (0.1, 0.0, math.inf, -1)


def test_the_estimator_refuses_an_underflowing_confidence_before_fitting():
    """SelectiveClassifier(confidence=1e-300) ended in a raw statistics.StatisticsError."""
    from sklearn.linear_model import LogisticRegression

    from rejectopt import SelectiveClassifier

    X, y = np.random.default_rng(0).normal(size=(80, 2)), np.arange(80) % 2
    model = SelectiveClassifier(LogisticRegression(), target="risk", value=20, confidence=1e-300)
    with pytest.raises(ValueError, match="confidence " + RANGE + "1e-300"):
        model.fit(X, y)
    assert not hasattr(model, "selection_")
