"""Tests of rejectopt.targets: parsing a target and fitting each model's selection function."""

import numpy as np
import pytest
from scipy import stats

from rejectopt._certify import certified_from_dict
from rejectopt.selective import (
    InfeasibleTargetError,
    OODOperatingPoint,
    OperatingPoint,
    SelectionFunction,
    empirical_risk_coverage,
    operating_point,
)
from rejectopt.targets import (
    CertifiedSelection,
    OODTarget,
    Target,
    certification_table,
    parse_target,
    validate_target,
)

# five ID rows and five OOD rows; the OOD row of uncertainty 0.35 cannot be told from the ID ones
IS_OOD = np.array([False] * 5 + [True] * 5)
UNCERTAINTY = np.array([0.1, 0.2, 0.3, 0.4, 0.9, 0.5, 0.6, 0.7, 0.8, 0.35])


def test_parse_target():
    assert parse_target("coverage=0.8") == Target("coverage", 0.8)
    assert parse_target("reject_cost=10") == Target("reject-cost", 10.0)
    assert str(parse_target(" Risk=5")) == "risk=5"
    for bad in ("coverage=1.5", "risk=-1", "cov=0.5", "coverage", "risk=abc", "risk=nan"):
        with pytest.raises(ValueError, match="^target"):
            parse_target(bad)
    with pytest.raises(ValueError, match="coverage"):
        Target("coverage", 0.0)
    assert Target(" Reject_Cost", 1) == Target("reject-cost", 1)  # one spelling of a kind, Target's
    with pytest.raises(
        ValueError,
        match=r"^target kind must be one of 'coverage', 'risk', 'reject-cost', got 'cov'$",
    ):
        Target("cov", 0.5)


def test_target_fits_each_model():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    loss = 100.0 * (rng.random(400) < 1 / (1 + np.exp(-2 * s)))
    _, coverage = empirical_risk_coverage(loss, s, Target("coverage", 0.7).fit(loss, s))
    assert coverage == pytest.approx(0.7)
    risk, _ = empirical_risk_coverage(loss, s, Target("risk", 20).fit(loss, s))
    assert risk == pytest.approx(20)
    assert (
        empirical_risk_coverage(loss, s, Target("reject-cost", 0).fit(loss, s))[0] == 0
    )  # rejecting is free
    assert (
        empirical_risk_coverage(loss, s, Target("reject-cost", 1000).fit(loss, s))[1] == 1
    )  # rejecting is dear
    with pytest.raises(InfeasibleTargetError):
        Target("risk", 1e-9).fit(np.full(5, 100.0), np.arange(5.0))


def test_describe_attainable_names_what_the_rows_allow():
    target = OODTarget("tpr-fpr", (0.9, 0.1))
    assert target.describe_attainable(target.attainable(IS_OOD, UNCERTAINTY)) == (
        "at TPR >= 0.9 the smallest attainable FPR is 1, at FPR <= 0.1 the largest attainable TPR is 0.6"
    )


def test_ood_operating_point_known_answer():
    # four ID rows accepted (one wrong, loss 100) and one OOD row
    loss = np.array([0, 0, 100, 0, 100] + [np.nan] * 5)
    point = operating_point(
        loss, UNCERTAINTY, SelectionFunction(0.4, 1.0), loss_bound=100, is_ood=IS_OOD
    )
    assert isinstance(point, OODOperatingPoint) and isinstance(point, OperatingPoint)
    assert {
        name: getattr(point, name)
        for name in ("coverage", "tpr", "fpr", "precision", "selective_risk")
    } == {"coverage": 0.5, "tpr": 0.8, "fpr": 0.2, "precision": 0.8, "selective_risk": 25.0}
    assert [round(v, 4) for v in point.tpr_ci] == [
        0.3755,
        0.9638,
    ] and point.recall_ci == point.tpr_ci
    assert point.rates_ci_method == "Wilson score interval (95%)"
    assert (
        point.n_accepted_expected,
        point.n_id_accepted_expected,
        point.n_ood_accepted_expected,
    ) == (5, 4, 1)
    with pytest.raises(ValueError, match="needs ID and OOD rows, got 5 ID and 0 OOD"):
        operating_point(
            loss[:5],
            UNCERTAINTY[:5],
            SelectionFunction(0.4, 1.0),
            loss_bound=100,
            is_ood=IS_OOD[:5],
        )


def test_target_dict_round_trip_and_malformed_input():
    assert parse_target({"kind": "tpr-fpr", "value": {"tpr": 0.8, "fpr": 0.2}}) == OODTarget(
        "tpr-fpr", (0.8, 0.2)
    )
    assert Target("risk", 5).to_dict() == {"kind": "risk", "value": 5.0}
    ood = OODTarget("precision-recall", (0.9, 0.7))
    assert ood.to_dict() == {"kind": "precision-recall", "value": {"precision": 0.9, "recall": 0.7}}
    assert parse_target(ood.to_dict()) == ood
    assert OODTarget.KINDS == ("tpr-fpr", "precision-recall") and Target.KINDS == (
        "coverage",
        "risk",
        "reject-cost",
    )
    with pytest.raises(
        ValueError, match=r"^target must hold a kind \(text\) and a value \(number\)$"
    ):
        parse_target({"kind": "coverage", "value": "0.8"})
    with pytest.raises(ValueError, match=r"^target must be an object with keys kind and value"):
        parse_target({"kind": "coverage"})


# --- certified targets: the contract ---------------------------------------------------------


def test_certified_target_text_dict_and_repr_carry_the_confidence():
    certified = Target("risk", 2, confidence=0.95)
    assert str(certified) == "risk=2,confidence=0.95"
    assert parse_target(str(certified)) == certified
    assert parse_target("tpr=0.8,fpr=0.2,confidence=0.9") == OODTarget("tpr-fpr", (0.8, 0.2), 0.9)
    assert certified.to_dict() == {"kind": "risk", "value": 2.0, "confidence": 0.95}
    assert parse_target(certified.to_dict()) == certified
    assert parse_target({"kind": "risk", "value": 2}) == Target("risk", 2)  # an older model file
    assert (
        repr(Target("risk", 2)) == "Target(kind='risk', value=2.0)"
    )  # the plug-in target prints as before
    assert repr(certified) == "Target(kind='risk', value=2.0, confidence=0.95)"
    with pytest.raises(ValueError, match="reject-cost has no certified form"):
        Target("reject-cost", 10, confidence=0.9)
    with pytest.raises(ValueError, match="precision-recall has no certified form"):
        OODTarget("precision-recall", (0.9, 0.7), confidence=0.9)
    for bad in (0, 1, 1.5, "x"):
        with pytest.raises(ValueError, match="confidence"):
            Target("risk", 2, confidence=bad)
    with pytest.raises(ValueError, match="^target confidence: 'x' is not a number$"):
        parse_target("risk=2,confidence=x")
    with pytest.raises(ValueError, match="target.confidence must be a number"):
        parse_target({"kind": "risk", "value": 2, "confidence": "0.9"})


def test_certified_fit_returns_its_guarantee_and_the_plug_in_is_unchanged():
    rng = np.random.default_rng(1)
    s = rng.random(2000)
    loss = 100.0 * (rng.random(2000) < s / 2)
    assert Target("risk", 10).fit(loss, s) == Target("risk", 10, confidence=None).fit(loss, s)
    selection = Target("risk", 10, confidence=0.9).fit(loss, s)
    assert isinstance(selection, CertifiedSelection) and selection.accept_prob in (0.0, 1.0)
    assert (selection.bound, selection.confidence, selection.n_calibration, selection.method) == (
        10.0,
        0.9,
        2000,
        "ltt",
    )
    assert selection.to_dict() == {
        "threshold": selection.threshold,
        "accept_prob": selection.accept_prob,
    }
    assert certified_from_dict(selection.to_dict(), selection.certificate) == selection
    with pytest.raises(ValueError, match="certificate.confidence must lie in"):
        certified_from_dict(selection.to_dict(), {**selection.certificate, "confidence": 2})
    with pytest.raises(ValueError, match="pass loss_bound"):
        Target("risk", 1, confidence=0.9).fit(loss / 50, s)
    with pytest.raises(ValueError, match="applies to a certified risk target only"):
        Target("risk", 10).fit(loss, s, method="sgr")


def test_certification_table_known_answers():
    loss, s = np.array([0, 100, 0, 0, 100, 0.0]), np.array([0.1, 0.2, 0.2, 0.3, 0.4, 0.5])
    table = certification_table(loss, s, Target("risk", 40, confidence=0.9))
    assert list(table.columns) == [
        "threshold",
        "n_accepted",
        "coverage",
        "empirical_risk",
        "upper_bound",
        "p_value",
    ]
    assert table["threshold"].tolist() == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert table["n_accepted"].tolist() == [1, 3, 4, 5, 6]
    errors = np.array([0, 1, 1, 2, 2])
    np.testing.assert_allclose(table["empirical_risk"], 100 * errors / table["n_accepted"])
    np.testing.assert_allclose(table["p_value"], stats.binom.cdf(errors, table["n_accepted"], 0.4))
    for bound, e, k in zip(
        table["upper_bound"], errors, table["n_accepted"]
    ):  # Clopper-Pearson: the tail is delta
        assert stats.binom.cdf(e, k, bound / 100) == pytest.approx(0.1)
    coverage = certification_table(loss, s, Target("coverage", 0.5, confidence=0.9))
    np.testing.assert_allclose(
        coverage["p_value"], stats.binom.sf(coverage["n_accepted"] - 1, 6, 0.5)
    )
    with pytest.raises(
        ValueError, match=r"certification_table needs a certified target: give it a confidence"
    ):
        certification_table(loss, s, Target("risk", 40))


def test_validate_target_measures_violations_on_the_users_rows():
    rng = np.random.default_rng(2)
    u = rng.random(3000)
    loss = 100.0 * (rng.random(3000) < u / 2)
    check = validate_target(
        loss, u, Target("risk", 10, confidence=0.9), repeats=120, calibration_fraction=0.4
    )
    assert (check.n_rows, check.n_calibration) == (3000, 1200)
    assert check.draws.shape == (240, 8) and set(check.draws["method"]) == {"certified", "plug-in"}
    summary = check.summary
    assert (
        stats.binom.sf(summary.loc["certified", "violations"] - 1, 120, 0.1) > 1e-3
    )  # within delta
    assert summary.loc["plug-in", "violation_rate"] > 0.3
    assert summary.loc["certified", "mean_coverage"] < summary.loc["plug-in", "mean_coverage"]
    low, high = summary.loc["plug-in", ["violation_low", "violation_high"]]
    k = summary.loc["plug-in", "violations"]
    assert stats.binom.sf(k - 1, 120, low) == pytest.approx(0.025) and stats.binom.cdf(
        k, 120, high
    ) == pytest.approx(0.025)
    # the population is all rows: a draw's risk is the exact mean loss of the rows its threshold accepts
    row = check.draws.iloc[0]
    accepted = np.sort(u)[: int(round(row.population_coverage * 3000))]
    assert row.population_risk == pytest.approx(loss[np.argsort(u)][: accepted.size].mean())
    figure = check.plot()
    assert len(figure.axes) == 1 and len(figure.axes[0].get_legend().get_texts()) == 3
    coverage = validate_target(loss, u, Target("coverage", 0.6, confidence=0.95), repeats=60)
    assert (
        coverage.summary.loc["certified", "violation_rate"]
        <= coverage.summary.loc["plug-in", "violation_rate"]
    )
    with pytest.raises(ValueError, match="validate_target takes a risk=L or coverage=W Target"):
        validate_target(loss, u, Target("reject-cost", 1), repeats=2)
    with pytest.raises(ValueError, match="calibration_fraction must lie in"):
        validate_target(loss, u, Target("risk", 10, confidence=0.9), calibration_fraction=1.0)


def test_a_confidence_must_be_a_real_number_given_once():
    for bad in ("0.95", True, float("nan"), None, 0, 1):
        if bad is None:
            continue  # None is the plug-in target
        with pytest.raises(ValueError, match="^confidence must"):
            Target("risk", 2, confidence=bad)
    with pytest.raises(
        ValueError, match=r"^confidence must be a real number in \(0, 1\).*got '0.95'"
    ):
        OODTarget("tpr-fpr", (0.8, 0.2), confidence="0.95")
    assert Target("risk", 2, confidence=np.float32(0.5)).confidence == 0.5
    with pytest.raises(
        ValueError,
        match=r"^target 'risk=10,confidence=0.9,confidence=0.95' gives confidence more "
        r"than once: give it once",
    ):
        parse_target("risk=10,confidence=0.9,confidence=0.95")
    with pytest.raises(ValueError, match="gives confidence more than once"):
        parse_target("tpr=0.8,fpr=0.2,confidence=0.9,Confidence=0.9")


def test_validate_target_names_the_users_row_reports_progress_and_the_infeasible_share():
    rng = np.random.default_rng(3)
    u = rng.random(400)
    loss = 100.0 * (rng.random(400) < 0.3)
    loss[7] = 50.0  # not a 0/100 loss: the message names row 7 of the user's rows, not of a draw
    with pytest.raises(ValueError, match=r"loss\[7\] = 50 is not a 0/100 loss"):
        validate_target(loss, u, Target("risk", 10, confidence=0.9), repeats=3)
    loss[7] = 0.0
    calls = []
    check = validate_target(
        loss,
        u,
        Target("risk", 1, confidence=0.9),
        repeats=4,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert (
        check.infeasible_rate == 1.0
    )  # 30 % errors everywhere: risk 1 % never certifies on 200 rows
    assert check.infeasible_rate == check.summary.loc["certified", "infeasible_rate"]
    with pytest.raises(
        ValueError, match="validate_target: progress must be None or a callable, got 3"
    ):
        validate_target(loss, u, Target("risk", 10, confidence=0.9), repeats=2, progress=3)
