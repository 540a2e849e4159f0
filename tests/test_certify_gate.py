"""The release gate: a selective risk and a coverage floor certified together at 1 - delta."""

import math

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rejectopt._certify import (
    JOINT_COVERAGE_SHARE,
    JOINT_METHOD,
    fit_certified_coverage,
    fit_certified_gate,
)
from rejectopt.exceptions import InfeasibleTargetError, InvalidParameterError
from rejectopt.targets import Target, parse_target, validate_target


def _rising(rng, n):
    """u ~ U(0, 1), P(error | u) = u / 2: the cut at t covers t with risk t / 4 (percent: 25 t)."""
    u = rng.random(n)
    return 100.0 * (rng.random(n) < u / 2), u


def _truth(selection):
    """Population (coverage, risk in percent) of a cut of :func:`_rising`'s population."""
    t = min(selection.threshold, 1.0)
    return t, 25.0 * t


def _gate_draws(draw, truth, target, floor, delta, draws):
    """(violations, grants) of the gate over ``draws`` samples; ``truth(selection)`` gives the
    population's (coverage, risk in percent) of a granted cut. A refusal never violates."""
    violations = granted = 0
    for _ in range(draws):
        loss, u = draw()
        try:
            selection = fit_certified_gate(loss, u, target, floor, 1 - delta)
        except InfeasibleTargetError:
            continue
        granted += 1
        coverage, risk = truth(selection)
        violations += risk > target + 1e-9 or coverage < floor - 1e-9
    return violations, granted


@pytest.mark.parametrize(
    ("floor", "draws"),
    [
        (0.3, 400),  # the gate holds for the cuts covering 0.3 to 0.4
        (0.4, 400),  # only the cut covering exactly 0.4: nearly every grant is a violation
    ],
)
def test_the_gate_violates_at_most_delta_on_a_population_with_a_known_answer(floor, draws):
    rng = np.random.default_rng(int(floor * 100))
    delta, target = 0.1, 10.0
    violations, granted = _gate_draws(
        lambda: _rising(rng, 1000), _truth, target, floor, delta, draws
    )
    sigma = math.sqrt(delta * (1 - delta) / draws)
    # the guarantee: violations over all draws (a refusal never violates) within delta + 3 sigma
    assert violations / draws <= delta + 3 * sigma
    if floor == 0.3:  # a gate with room is granted in a fair share of the draws
        assert granted / draws > 0.15


def _hump(rng, n):
    """A risk that crosses the target three times, on 40 tied score levels (the proof's hard case).

    u on the levels ``l / 40``; P(error | u) is 2 % below 0.3, 60 % on 0.3 and 0.325, 0 % up to
    0.5 and 30 % above, so the selective risk of the cuts past the floor 0.3 rises above 10 %,
    falls below it and rises again (:func:`_hump_truth` computes it from the levels).
    """
    level = rng.integers(0, 40, n)
    return 100.0 * (rng.random(n) < _HUMP_P[level]), level / 40.0


_LEVELS = np.arange(40) / 40.0
_HUMP_P = np.select([_LEVELS < 0.3, _LEVELS < 0.35, _LEVELS < 0.5], [0.02, 0.6, 0.0], 0.3)


def _hump_truth(threshold):
    """Population (coverage, risk in percent) of the cut ``u < threshold`` of :func:`_hump`'s population."""
    accepted = _LEVELS < threshold
    return accepted.mean(), 100.0 * _HUMP_P[accepted].mean()


@pytest.mark.parametrize("delta", [0.05, 0.1])
def test_the_gate_holds_its_level_where_the_risk_is_not_monotone_and_scores_tie(delta):
    """The proof's hard case: the coverage cut lands on tied levels where the risk crosses the
    target upwards, then down, then up; the gate's violations stay within delta + 3 sigma."""
    floor, target = 0.3, 10.0
    # the truth: the cuts meeting both conditions are two stretches of levels, not one
    good = [
        coverage >= floor and risk <= target
        for coverage, risk in map(_hump_truth, _LEVELS[1:].tolist() + [math.inf])
    ]
    assert np.flatnonzero(good).tolist() == [11, 12, *range(14, 22)]
    rng = np.random.default_rng(int(delta * 1000))
    draws = 400
    violations, granted = _gate_draws(
        lambda: _hump(rng, 1000),
        lambda sel: _hump_truth(sel.threshold),
        target,
        floor,
        delta,
        draws,
    )
    assert violations / draws <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)
    # the gate is granted in some draws (about 0.25 at delta 0.1), so the bound is exercised
    assert granted / draws > 0.05


def _independent_gate(loss, u, target, floor, delta):
    """The gate recomputed with scipy: the order statistic, then exact binomial p-values of the
    cuts of the sorted distinct scores from the one below the coverage cut's, a fixed sequence."""
    from scipy import stats

    n = u.size
    ranks = np.arange(1, n + 1)
    k = ranks[stats.binom.sf(ranks - 1, n, floor) <= delta * JOINT_COVERAGE_SHARE].min()
    t_w = np.sort(u)[k - 1]
    values = np.unique(u)
    trials = np.array([(u <= v).sum() for v in values])
    errors = np.array([(loss[u <= v] > 0).sum() for v in values])
    p = stats.binom.cdf(errors, trials, target / 100)
    cover = int(np.flatnonzero(values == t_w)[0])
    end = cover - 1
    while end + 1 < values.size and p[end + 1] <= delta * (1 - JOINT_COVERAGE_SHARE):
        end += 1
    assert end >= cover  # granted
    return math.inf if end == values.size - 1 else values[end + 1], t_w


def test_a_granted_gate_is_the_run_from_below_the_coverage_cut_recomputed_with_scipy():
    loss, u = _rising(np.random.default_rng(5), 3000)
    u = np.round(u, 3)  # ties: the runs' cuts are the distinct scores
    delta = 0.1
    gate = fit_certified_gate(loss, u, 10.0, 0.3, 1 - delta)
    threshold, t_w = _independent_gate(loss, u, 10.0, 0.3, delta)
    assert gate.threshold == threshold and gate.accept_prob == 0.0
    coverage = fit_certified_coverage(loss, u, 0.3, 1 - delta * JOINT_COVERAGE_SHARE)
    assert coverage.threshold == t_w < gate.threshold  # every row the coverage cut accepts
    assert (gate.method, gate.bound, gate.risk_bound, gate.coverage_bound) == (
        JOINT_METHOD,
        10.0,
        10.0,
        0.3,
    )
    assert gate.confidence == pytest.approx(0.9) and gate.n_calibration == 3000
    # the trail: the coverage cut's order statistic, then the risk's run from the cut below it
    trail = gate.audit
    assert trail.method == JOINT_METHOD and trail.certified
    assert (trail.stop.threshold, trail.stop.accept_prob) == (gate.threshold, gate.accept_prob)
    stages = [row.stage for row in trail.rows]
    assert stages[0] == "order statistic" and set(stages[stages.index("fixed sequence") :]) == {
        "fixed sequence"
    }
    run = [row for row in trail.rows if row.stage == "fixed sequence"]
    assert run[0].threshold == t_w  # accepts s < t_w: the cut just below the coverage cut
    assert all(row.rejected for row in run[:-1]) and run[-1].threshold > gate.threshold
    assert trail.spent == pytest.approx(delta)
    assert "gate granted" in trail.reason
    # the target's own fit is the same gate
    assert Target("risk", 10, confidence=0.9, min_coverage=0.3).fit(loss, u) == gate


def test_a_floor_the_risk_run_cannot_reach_is_refused_naming_both_levels():
    loss, u = _rising(np.random.default_rng(5), 3000)
    risk_level = f"{0.1 * (1 - JOINT_COVERAGE_SHARE):.3g}"
    coverage_level = f"{0.1 * JOINT_COVERAGE_SHARE:.3g}"
    with pytest.raises(InfeasibleTargetError) as info:
        fit_certified_gate(loss, u, 10.0, 0.6, 0.9)
    message = str(info.value)
    assert message.startswith(
        "release gate risk<=10 and coverage>=0.6 cannot be certified at confidence 0.9 on these "
        f"3000 calibration rows: the risk test (level {risk_level}) certifies no cut: its fixed "
        "sequence, from the cut just below the cut that certifies coverage >= 0.6 "
        f"(level {coverage_level}, threshold "
    )
    assert "a lower floor" in message
    error = info.value
    assert math.isnan(error.best_bound) and error.n_calibration == 3000
    assert error.confidence == 0.9 and not error.audit.certified and error.audit.stop is None
    # a run that rejects its start but stops short of the floor says where it stopped: error-free
    # scores 0.1 (40 % of rows), all errors at 0.2 (20 %), the coverage cut on 0.2's rows
    loss = np.repeat([0.0, 100.0, 0.0], [120, 60, 120])
    u = np.repeat([0.1, 0.2, 0.3], [120, 60, 120])
    with pytest.raises(InfeasibleTargetError) as info:
        fit_certified_gate(loss, u, 10.0, 0.45, 0.9)
    assert str(info.value).endswith(
        f"300 calibration rows: the risk test's fixed sequence (level {risk_level}) stops at the "
        "cut of scores <= 0.1, short of the cut that certifies coverage >= 0.45 "
        f"(level {coverage_level}, threshold 0.2); ask for a higher risk, a lower floor, a lower "
        "confidence, or more calibration rows"
    )
    assert info.value.rows_needed == 0 and info.value.audit.stop is None


def test_a_coverage_cut_on_the_most_confident_score_starts_the_run_only_as_a_tied_block():
    """The run starts at the cut below the coverage cut; below the most confident score there is
    none. A tied block there is i.i.d. rows of an atom and may start the run; one row may not."""
    rng = np.random.default_rng(3)
    # 60 % of the rows tie at uncertainty 0, error-free; the rest err at 20 %
    u = np.where(rng.random(1000) < 0.6, 0.0, rng.random(1000))
    loss = np.where(u == 0.0, 0.0, 100.0 * (rng.random(1000) < 0.2))
    gate = fit_certified_gate(loss, u, 10.0, 0.3, 0.9)
    run = [row for row in gate.audit.rows if row.stage == "fixed sequence"]
    assert run[0].accepted == int((u == 0).sum()) and run[0].rejected  # the block starts it
    assert gate.threshold > 0.0  # it accepts the whole block, and more
    # a floor the single most confident row meets (rank 1 certifies w at delta rho)
    with pytest.raises(InfeasibleTargetError, match="met by the single most confident row"):
        fit_certified_gate(loss[u > 0], u[u > 0], 10.0, 1e-5, 0.9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: Target("risk", 10, confidence=0.9, min_coverage=1),
            r"^target min_coverage=1 leaves the full set only, whose risk is the target with no "
            r"floor: use Target\('risk', 10, confidence=0\.9\)$",
        ),
        (
            lambda: Target("risk", 10, confidence=0.9, min_coverage=float("nan")),
            r"^target: min_coverage must lie in \(0, 1\), got nan$",
        ),
        (
            lambda: Target("risk", 10, min_coverage=0.3),
            r"^target min_coverage is the floor of a certified risk target .*confidence",
        ),
        (
            lambda: Target("coverage", 0.5, confidence=0.9, min_coverage=0.3),
            r"^target min_coverage is the floor of a certified risk target",
        ),
        (
            lambda: parse_target("risk=10,min_coverage=0.3"),
            r"^target min_coverage is the floor of a certified risk target",
        ),
        (
            lambda: parse_target("coverage=0.5,min_coverage=0.3,confidence=0.9"),
            r"min_coverage is the floor of a risk target, e\.g\. risk=5,min_coverage=0\.5",
        ),
        (
            lambda: parse_target("risk=10,min_coverage=most,confidence=0.9"),
            r"^target min_coverage: 'most' is not a number$",
        ),
        (
            lambda: parse_target({"kind": "risk", "value": 10, "min_coverage": 0.3}),
            r"^target must be an object with keys kind and value",
        ),
        (
            lambda: Target("risk", 10, confidence=0.9, min_coverage=0.3).fit(
                [0.0, 100.0] * 100, np.arange(200.0), method="sgr"
            ),
            r"^method 'sgr': a release gate's risk is certified by 'ltt' only$",
        ),
        (
            lambda: fit_certified_gate([0.0, 150.0], [0.1, 0.2], 10.0, 0.3, 0.9),
            r"loss\[1\] = 150 is not a 0/100 loss; pass loss_bound",
        ),
        (
            lambda: fit_certified_gate([0.0, 150.0], [0.1, 0.2], 10.0, 0.3, 0.9, loss_bound=100),
            r"^loss\[1\] = 150 exceeds loss_bound 100: the bound must be the largest loss",
        ),
    ],
)
def test_hostile_gates_end_in_a_clear_error(call, message):
    with pytest.raises((ValueError, InvalidParameterError), match=message):
        call()


def test_the_gate_reads_and_writes_as_text_and_as_a_dict():
    gate = parse_target("risk=5,min_coverage=0.5,confidence=0.9")
    assert gate == Target("risk", 5, confidence=0.9, min_coverage=0.5)
    assert str(gate) == "risk=5,min_coverage=0.5,confidence=0.9"
    assert parse_target(str(gate)) == gate
    assert gate.to_dict() == {"kind": "risk", "value": 5.0, "confidence": 0.9, "min_coverage": 0.5}
    assert parse_target(gate.to_dict()) == gate
    assert repr(gate) == "Target(kind='risk', value=5.0, confidence=0.9, min_coverage=0.5)"


@pytest.fixture(scope="module")
def digits_mcp():
    """Real data: a logistic regression on half of digits, its MCP on the other half (0/100 loss)."""
    X, y = load_digits(return_X_y=True)
    rows = np.random.default_rng(0).permutation(len(y))
    train, rest = rows[:600], rows[600:]
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X[train], y[train])
    proba = clf.predict_proba(X[rest])
    loss = 100.0 * (clf.classes_[proba.argmax(axis=1)] != y[rest])
    return loss, 1.0 - proba.max(axis=1)


def test_validate_target_checks_both_conditions_of_a_gate_on_real_rows(digits_mcp):
    loss, u = digits_mcp
    # the floor near what the rows allow at this risk: the plug-in gate misses it often
    gate = Target("risk", 3, confidence=0.9, min_coverage=0.9)
    check = validate_target(loss, u, gate, repeats=200, calibration_fraction=0.5)
    certified = check.summary.loc["certified"]
    assert certified["violation_rate"] <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / 200)
    draws = check.draws[check.draws["method"] == "certified"]
    granted = draws[~draws["infeasible"]]
    # a granted draw violates exactly when its population risk or coverage misses
    missed = (granted["population_risk"] > 3 + 1e-9) | (granted["population_coverage"] < 0.9 - 1e-9)
    assert (granted["violated"] == missed).all()
    assert not draws.loc[draws["infeasible"], "violated"].any()
    assert 0 < len(granted) < len(draws)


def test_the_guarantees_page_shows_the_gate_records_and_the_record_meets_its_claims():
    """The page's table is the benchmark record's, and what the page says of it holds there."""
    import pandas as pd
    from support import REPO, load_benchmark

    bench = load_benchmark("bench_certified_gate")
    record = pd.read_csv(REPO / "benchmarks" / "certified_gate_records.csv")
    page = (REPO / "docs" / "guide" / "guarantees.md").read_text(encoding="utf-8")
    assert bench.page_table(record) in page
    verdict = bench.checks(record)
    assert len(verdict) == 32 and verdict["valid"].all() and verdict["grant_ok_dkw"].all()
    # "grants at least as often as both alternatives in all 32 cells: up to 24 points more than
    # delta/2 + DKW and up to 21 more than 'order statistic, then risk', more than 2 points more
    # in 20 cells"
    assert verdict["grant_ok_os"].all()
    assert (verdict["gap_os"] >= 0).all() and (verdict["gap_dkw"] >= 0).all()
    assert (f"{verdict['gap_dkw'].max():.2f}", f"{verdict['gap_os'].max():.2f}") == ("0.24", "0.21")
    assert int((verdict["gap_os"] > 0.02).sum()) == 20
    coverage = record.groupby("method")["mean_coverage"].mean()
    text = " ".join(page.split())
    assert (
        f"Its mean population coverage over the cells is {coverage['gate']:.3f}, against "
        f"{coverage['os_then_risk']:.3f} and {coverage['dkw_halves']:.3f}."
    ) in text
    means = record.groupby("method")["grant_rate"].mean()
    shares = [f"{means[f'share_{r:g}']:.3f}" for r in bench.SHARES]
    assert ", ".join(shares[:-1]) + " and " + shares[-1] in text
    assert bench.SHARES[int(np.argmax([means[f"share_{r:g}"] for r in bench.SHARES]))] in (
        0.05,
        JOINT_COVERAGE_SHARE,
    )  # the shipped share's grant rate is within the draws' noise of the best one
    assert (
        record.loc[record["method"] == "gate", "grant_rate"].to_numpy()
        == record.loc[
            record["method"] == f"share_{JOINT_COVERAGE_SHARE:g}", "grant_rate"
        ].to_numpy()
    ).all()  # the shipped gate is the union at its share, draw for draw
