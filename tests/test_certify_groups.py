"""Tests of per-group certificates (rejectopt.targets.fit_certified_groups).

The guarantee is checked by simulation on a population whose truth is known: three groups, each
with u ~ U(0, 1) and P(error | u) = c_g * u (c_g = 0.2, 0.5, 1.0), so the population selective
risk of the cut {u < t} in group g is exactly 100 * c_g * min(t, 1) / 2 (0/100 loss). The third
group is small (400 rows against 1,000). A draw violates group g when g holds its own
certificate and that exact risk exceeds the target; a group that fell back makes no claim for
itself, and a draw refused outright (a group and the pooled fit both refused) makes none.
Violation rates must stay within delta + 3 sigma, sigma = sqrt(delta (1 - delta) / draws),
the binomial standard error of a rate whose truth is delta (the procedure's rates are at most
delta; three sigma keeps a valid procedure from failing by chance on a fixed seed's draws).
"""

import json
import math

import numpy as np
import pytest

from rejectopt.exceptions import InvalidParameterError
from rejectopt.selective import InfeasibleTargetError
from rejectopt.targets import (
    GroupSelection,
    OODTarget,
    Target,
    fit_certified_groups,
)

SLOPES = np.array([0.2, 0.5, 1.0])
SIZES = (1000, 1000, 400)
LABELS = np.array(["easy", "middle", "hard"])
TARGET_RISK, DELTA, DRAWS = 15.0, 0.1, 300
TOLERANCE = DELTA + 3 * math.sqrt(DELTA * (1 - DELTA) / DRAWS)


def _population_risk(slope, threshold):
    """Exact selective risk (percent) of {u < threshold} when P(error | u) = slope * u, u ~ U(0, 1)."""
    return 100.0 * slope * min(max(threshold, 0.0), 1.0) / 2.0


def _draw(rng):
    u = np.concatenate([rng.random(n) for n in SIZES])
    slope = np.repeat(SLOPES, SIZES)
    loss = np.where(rng.random(u.size) < slope * u, 100.0, 0.0)
    return loss, u, np.repeat(LABELS, SIZES)


def _simulate(simultaneous, seed):
    """Per draw and group (in LABELS order): own certificate, its violation, the pooled cut's."""
    rng = np.random.default_rng(seed)
    target = Target("risk", TARGET_RISK, confidence=1 - DELTA)
    own = np.zeros((DRAWS, 3), dtype=bool)
    violates = np.zeros((DRAWS, 3), dtype=bool)
    pooled = np.zeros((DRAWS, 3), dtype=bool)
    for draw in range(DRAWS):
        try:
            fitted = fit_certified_groups(*_draw(rng), target, simultaneous=simultaneous)
        except InfeasibleTargetError:  # a group and its fallback both refused: no claim at all
            continue
        for j, label in enumerate(LABELS):
            group = fitted[str(label)]
            own[draw, j] = not group.fallback
            risk = _population_risk(SLOPES[j], group.threshold)
            violates[draw, j] = own[draw, j] and risk > TARGET_RISK
            pooled[draw, j] = _population_risk(SLOPES[j], fitted.pooled.threshold) > TARGET_RISK
    return own, violates, pooled


def test_each_group_holds_at_its_level_and_the_pooled_cut_does_not():
    own, violates, pooled = _simulate(simultaneous=False, seed=11)
    assert (violates.mean(axis=0) <= TOLERANCE).all(), violates.mean(axis=0)
    # not vacuous: the large groups certify in nearly every draw, the small one in some
    assert own[:, :2].mean() > 0.9 and 0.1 < own[:, 2].mean() < 0.9
    # the point of per-group certificates: one pooled threshold meets the target on average,
    # and its worst group (the steepest risk) misses it in far more than delta of the draws
    assert pooled.mean(axis=0).max() > 0.5
    assert pooled.mean(axis=0).max() > TOLERANCE


def test_simultaneous_certificates_hold_together():
    own, violates, _ = _simulate(simultaneous=True, seed=12)
    assert violates.any(axis=1).mean() <= TOLERANCE
    assert own[:, :2].mean() > 0.9


def test_simultaneous_level_is_sidak():
    rng = np.random.default_rng(0)
    fitted = fit_certified_groups(
        *_draw(rng), Target("risk", TARGET_RISK, confidence=0.9), simultaneous=True
    )
    assert fitted.group_confidence == pytest.approx(0.9 ** (1 / 3), rel=1e-12)
    # each fit's delta is above Bonferroni's delta / 3: a little more room per group
    assert 1 - fitted.group_confidence > 0.1 / 3
    assert fitted.pooled.confidence == fitted.group_confidence


# --- the record and its application -------------------------------------------------------------


def _small_sample():
    rng = np.random.default_rng(3)
    u = rng.random(900)
    loss = np.where(rng.random(900) < 0.3 * u, 100.0, 0.0)
    groups = np.array(["a"] * 450 + ["b"] * 449 + ["lonely"])
    return loss, u, groups


def test_a_group_of_one_row_falls_back_to_the_pooled_threshold():
    loss, u, groups = _small_sample()
    fitted = fit_certified_groups(loss, u, groups, Target("risk", 10, confidence=0.9))
    assert isinstance(fitted, GroupSelection)
    assert fitted.labels == ["a", "b", "lonely"]
    lonely = fitted["lonely"]
    assert lonely.fallback and lonely.certificate is None and lonely.n_rows == 1
    assert lonely.threshold == fitted.pooled.threshold
    assert "NOT for group 'lonely'" in lonely.statement
    assert "cannot be certified" in lonely.reason
    assert not fitted["a"].fallback and fitted["a"].certificate.n_calibration == 450
    records = fitted.to_records()
    json.dumps(records)
    assert [r["holds_for"] for r in records] == ["group", "group", "pooled"]
    assert records[2]["certificate"]["n_calibration"] == 900


def test_accept_applies_each_groups_threshold():
    loss, u, groups = _small_sample()
    fitted = fit_certified_groups(loss, u, groups, Target("risk", 10, confidence=0.9))
    a, b = fitted["a"].threshold, fitted["b"].threshold
    low, high = sorted((a, b))
    middle = (low + high) / 2
    mask = fitted.accept([middle, middle, low / 2], ["a", "b", "lonely"])
    assert mask.tolist() == [middle < a, middle < b, low / 2 < fitted.pooled.threshold]
    assert mask[0] != mask[1]
    with pytest.raises(ValueError, match="'elsewhere' had no calibration rows"):
        fitted.accept([0.1], ["elsewhere"])
    with pytest.raises(ValueError, match="length mismatch"):
        fitted.accept([0.1, 0.2], ["a"])


def test_coverage_and_gate_targets():
    loss, u, groups = _small_sample()
    coverage = fit_certified_groups(loss, u, groups, Target("coverage", 0.7, confidence=0.9))
    # a coverage target never falls back: one row accepts everything, coverage 1 >= 0.7
    assert coverage["lonely"].threshold == math.inf and not coverage["lonely"].fallback
    assert coverage["a"].certificate.method == "order-statistic"
    gate = Target("risk", 10, confidence=0.9, min_coverage=0.2)
    fitted = fit_certified_groups(loss, u, groups, gate)
    assert fitted["a"].certificate.method == "ltt+order-statistic"
    assert "coverage >= 0.2" in fitted["a"].statement
    assert fitted["lonely"].fallback


def test_labels_keep_their_kind_and_order():
    loss, u, _ = _small_sample()
    ints = np.repeat([3, 1, 2], 300)
    fitted = fit_certified_groups(loss, u, ints, Target("coverage", 0.5, confidence=0.9))
    assert fitted.labels == [1, 2, 3]
    assert [r["group"] for r in fitted.to_records()] == [1, 2, 3]
    with pytest.raises(ValueError, match="mixes label kinds"):
        fitted.accept([0.1, 0.2], [1, True])


# --- hostile input ------------------------------------------------------------------------------


def test_refused_when_the_pooled_fit_fails_too():
    loss = np.full(20, 100.0)
    loss[:10] = 0.0
    groups = ["x"] * 19 + ["y"]
    with pytest.raises(InfeasibleTargetError, match="merge the group with another"):
        fit_certified_groups(loss, np.linspace(0, 1, 20), groups, Target("risk", 5, confidence=0.9))


@pytest.mark.parametrize(
    "groups, match",
    [
        (["a", None, "b"], r"missing label \(None\) at row 1"),
        ([1.0, float("nan"), 2.0], r"missing label \(nan\) at row 1"),
        (["a", 1, "b"], r"mixes label kinds: integer \(1\), text"),
        (["a", "b"], "length mismatch: groups must hold one label per calibration row"),
        ([["a"], ["b"], ["c"]], "must be 1-D"),
        ("abc", "must be a column of labels"),
    ],
)
def test_bad_group_columns_are_refused(groups, match):
    with pytest.raises(ValueError, match=match):
        fit_certified_groups(
            [0, 0, 100], [0.1, 0.2, 0.3], groups, Target("coverage", 0.5, confidence=0.9)
        )


def test_unhashable_labels_are_refused():
    groups = np.empty(3, dtype=object)
    groups[:] = [{"site": 1}, {"site": 2}, {"site": 1}]
    with pytest.raises(ValueError, match="hashable labels, got dict"):
        fit_certified_groups(
            [0, 0, 100], [0.1, 0.2, 0.3], groups, Target("coverage", 0.5, confidence=0.9)
        )


@pytest.mark.parametrize(
    "target, match",
    [
        (Target("risk", 5), r"has no confidence.*Target\('risk', 5, confidence=0.9\)"),
        (OODTarget("tpr-fpr", (0.9, 0.1), confidence=0.9), "needs a certified Target"),
        ("risk=5", "needs a certified Target"),
    ],
)
def test_targets_without_a_group_form_are_refused(target, match):
    with pytest.raises(ValueError, match=match):
        fit_certified_groups([0, 100], [0.1, 0.2], ["a", "b"], target)


def test_simultaneous_must_be_a_bool():
    with pytest.raises(InvalidParameterError, match="fit_certified_groups: simultaneous"):
        fit_certified_groups(
            [0, 100],
            [0.1, 0.2],
            ["a", "b"],
            Target("coverage", 0.5, confidence=0.9),
            simultaneous="yes",
        )


def test_the_guarantees_page_shows_the_benchmark_records_and_they_meet_their_claims():
    """The page's table is the benchmark record's, and the record's checks hold."""
    import pandas as pd
    from support import REPO, load_benchmark

    bench = load_benchmark("bench_certified_groups")
    record = pd.read_csv(REPO / "benchmarks" / "certified_groups_records.csv")
    page = (REPO / "docs" / "guide" / "guarantees.md").read_text(encoding="utf-8")
    assert bench.page_table(record) in page
    verdict = bench.checks(record)
    assert len(verdict) == 6 and verdict["ok"].all()
