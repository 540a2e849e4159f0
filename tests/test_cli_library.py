"""The library behind the command line: intervals (stats), targets, the row split and fitting
(selective), the scores' JSON form and the RC figure (report)."""

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from rejectopt import cli
from rejectopt.report import rc_figure
from rejectopt.scores import REG, SELE, TCP
from rejectopt.scores._base import PerClassLinearScore
from rejectopt.fitting import fit_selective, split_rows
from rejectopt.selective import InfeasibleTargetError, SelectionFunction, empirical_risk_coverage, operating_point
from rejectopt.targets import Target, parse_target
from rejectopt.stats import normal_interval, selective_risk_interval, wilson_interval


# --------------------------------------------------------------------------------------------
# Intervals (rejectopt.stats)
# --------------------------------------------------------------------------------------------
def test_wilson_interval_matches_its_formula_and_contains_the_estimate():
    z = sps.norm.ppf(0.975)
    low, high = wilson_interval(8, 10)
    centre = (0.8 + z**2 / 20) / (1 + z**2 / 10)
    half = z * math.sqrt(0.8 * 0.2 / 10 + z**2 / 400) / (1 + z**2 / 10)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 50)[0] == 0.0 and wilson_interval(50, 50)[1] == 1.0
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert wilson_interval(8, 10, confidence=0.99)[0] < low


def test_normal_interval():
    low, high = normal_interval(2.0, 4.0, 16, confidence=0.95)
    assert (low, high) == pytest.approx((2.0 - sps.norm.ppf(0.975) * 0.5, 2.0 + sps.norm.ppf(0.975) * 0.5))


def test_selective_risk_interval_two_valued_weighted_and_empty():
    loss = np.array([0, 100, 0, 0, 100, 0, 0, 0], dtype=float)
    accept = np.array([1, 1, 1, 1, 0.5, 0, 0, 0])
    (low, high), method = selective_risk_interval(loss, accept)
    w_low, w_high = wilson_interval(1.5, 4.5)
    assert (low, high) == pytest.approx((100 * w_low, 100 * w_high)) and method.startswith("Wilson")
    mae = np.array([0.5, 1.5, 0.2, 3.0])
    (low, high), method = selective_risk_interval(mae, np.ones(4))
    assert method.startswith("normal approximation") and low == max(0.0, low) and low < mae.mean() < high
    (low, high), method = selective_risk_interval(mae, np.zeros(4))
    assert math.isnan(low) and math.isnan(high) and method == "none (nothing accepted)"


# --------------------------------------------------------------------------------------------
# Targets, split, fitting (rejectopt.selective)
# --------------------------------------------------------------------------------------------
def test_parse_target():
    assert parse_target("coverage=0.8") == Target("coverage", 0.8)
    assert parse_target("reject_cost=10") == Target("reject-cost", 10.0)
    assert str(parse_target(" Risk=5")) == "risk=5"
    for bad in ("coverage=1.5", "risk=-1", "cov=0.5", "coverage", "risk=abc", "risk=nan"):
        with pytest.raises(ValueError, match="^target"):
            parse_target(bad)
    with pytest.raises(ValueError, match="coverage"):
        Target("coverage", 0.0)


def test_target_fits_each_model():
    rng = np.random.default_rng(0)
    s = rng.normal(size=400)
    loss = 100.0 * (rng.random(400) < 1 / (1 + np.exp(-2 * s)))
    _, coverage = empirical_risk_coverage(loss, s, Target("coverage", 0.7).fit(loss, s))
    assert coverage == pytest.approx(0.7)
    risk, _ = empirical_risk_coverage(loss, s, Target("risk", 20).fit(loss, s))
    assert risk == pytest.approx(20)
    assert empirical_risk_coverage(loss, s, Target("reject-cost", 0).fit(loss, s))[0] == 0  # rejecting is free
    assert empirical_risk_coverage(loss, s, Target("reject-cost", 1000).fit(loss, s))[1] == 1  # rejecting is dear
    with pytest.raises(InfeasibleTargetError):
        Target("risk", 1e-9).fit(np.full(5, 100.0), np.arange(5.0))


def test_split_rows_sizes_disjoint_and_seeded():
    parts = split_rows(2500)
    assert {k: v.size for k, v in parts.items()} == {"fit": 875, "validation": 375, "calibration": 750,
                                                     "report": 500}
    assert np.array_equal(np.sort(np.concatenate(list(parts.values()))), np.arange(2500))
    assert all(np.array_equal(parts[k], split_rows(2500)[k]) for k in parts)
    assert not np.array_equal(parts["report"], split_rows(2500, seed=1)["report"])


@pytest.mark.parametrize("kwargs, message", [
    ({"calibration_fraction": 0.6, "report_fraction": 0.5}, "sum must be below 1"),
    ({"validation_fraction": 1.0}, "validation_fraction must lie in"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"n": 40}, "too few rows"),
])
def test_split_rows_refuses(kwargs, message):
    kwargs = {"n": 1000, **kwargs}
    with pytest.raises(ValueError, match=message):
        split_rows(**kwargs)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(800, 3))
    y_pred = rng.integers(0, 2, 800)
    loss = 100.0 * (rng.random(800) < 1 / (1 + np.exp(-2 * X[:, 0] * (2 * y_pred - 1))))
    return X, y_pred, loss


@pytest.mark.parametrize("score", ["reg", "sele"])
def test_fit_selective_picks_C_and_meets_the_target_on_calibration_rows(problem, score):
    X, y_pred, loss = problem
    parts = split_rows(len(loss))
    fit = fit_selective(X, y_pred, loss, Target("coverage", 0.6), parts, score=score, n_classes=2, C_grid=(0, 10))
    assert type(fit.score) is {"reg": REG, "sele": SELE}[score]
    assert fit.C in (0.0, 10.0) and fit.validation_aurc[fit.C] == min(fit.validation_aurc.values())
    cal = parts["calibration"]
    _, coverage = empirical_risk_coverage(loss[cal], fit.uncertainty[cal], fit.selection)
    assert coverage == pytest.approx(0.6)
    point = operating_point(loss[parts["report"]], fit.uncertainty[parts["report"]], fit.selection)
    assert point.coverage_ci[0] <= point.coverage <= point.coverage_ci[1]
    assert point.selective_risk < loss[parts["report"]].mean()  # the score ranks the errors last


def test_fit_selective_refuses_a_score_not_learned_from_the_loss(problem):
    X, y_pred, loss = problem
    with pytest.raises(ValueError, match="learns from true_class_posterior"):
        fit_selective(X, y_pred, loss, Target("coverage", 0.6), split_rows(len(loss)), score="tcp")


def test_operating_point_with_nothing_accepted_is_undefined():
    point = operating_point([0.0, 100.0], [1.0, 2.0], SelectionFunction(-np.inf, 0.0))
    assert point.coverage == 0.0 and math.isnan(point.selective_risk)
    assert all(math.isnan(v) for v in point.selective_risk_ci)


# --------------------------------------------------------------------------------------------
# JSON forms: scores (dispatch through the registry) and the selection function
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SELE, REG, TCP])
def test_score_json_round_trip_through_the_registry(cls, problem):
    X, y_pred, loss = problem
    target = loss / 100.0 if cls is not TCP else 1.0 - loss / 100.0
    fitted = cls(C=1.0, n_classes=3).fit(X, y_pred, target)  # class 2 never predicted
    data = json.loads(json.dumps(fitted.to_dict(), allow_nan=False))
    assert data["kind"] == cls.__name__.lower() and "structured" not in data
    restored = PerClassLinearScore.from_dict(data)
    assert type(restored) is cls and cls.from_dict(data).to_dict() == data
    probe = np.arange(3).repeat(4)
    np.testing.assert_array_equal(restored.predict(X[:12], probe), fitted.predict(X[:12], probe))


def test_structured_score_round_trip():
    rng = np.random.default_rng(0)
    X, loss = rng.normal(size=(100, 2)), rng.random(100)
    fitted = REG(C=1.0).fit(X, None, loss)
    data = fitted.to_dict()
    assert data["structured"] is True
    np.testing.assert_array_equal(PerClassLinearScore.from_dict(data).predict(X, None), fitted.predict(X, None))


@pytest.fixture(scope="module")
def reg_dict(problem):
    X, y_pred, loss = problem
    return REG(C=1.0, n_classes=2).fit(X, y_pred, loss).to_dict()


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("mean"), r"score: missing keys \['mean'\]"),
    (lambda d: d.update(extra=1), r"score: unknown keys \['extra'\]"),
    (lambda d: d.update(kind="tcp"), "score.kind: score 'tcp' is not a SELE"),  # via SELE.from_dict
    (lambda d: d.update(kind=["reg"]), "score.kind: unknown score"),
    (lambda d: d["scale"].__setitem__(1, 0), r"score.scale\[1\] must be > 0"),
    (lambda d: d["mean"].__setitem__(0, "0.5"), r"score.mean\[0\] must be a finite number"),
    (lambda d: d["intercept"].__setitem__(0, 10**400), r"score.intercept\[0\] must be a finite number"),
    (lambda d: d["coef"].append([0.0, 0.0, 0.0]), "score.coef must be a list of 2 lists, got a list of 3"),
    (lambda d: d.update(n_classes=True), "score.n_classes must be an integer >= 1"),
    (lambda d: d.update(class_seen=[1, 1]), "score.class_seen must be a list of 2 booleans"),
    (lambda d: d.update(C=-1), "score.C must be >= 0"),
])
def test_score_from_dict_names_the_bad_field(reg_dict, edit, message):
    data = json.loads(json.dumps(reg_dict))
    edit(data)
    cls = SELE if data["kind"] == "tcp" else PerClassLinearScore
    with pytest.raises(ValueError, match=message):
        cls.from_dict(data)


def test_selection_function_from_dict_is_strict():
    assert SelectionFunction.from_dict({"threshold": "-inf", "accept_prob": 1}) == SelectionFunction(-np.inf, 1.0)
    for bad, field in (({"threshold": "0.5", "accept_prob": 1.0}, "selection.threshold"),
                       ({"threshold": 0.5, "accept_prob": True}, "selection.accept_prob"),
                       ({"threshold": 0.5, "accept_prob": 1.5}, "selection.accept_prob"),
                       ({"threshold": 0.5, "accept_prob": 1.0, "nu": 1}, "unknown keys"),
                       ([0.5, 1.0], "must be an object")):
        with pytest.raises(ValueError, match=field):
            SelectionFunction.from_dict(bad, name="selection")


# --------------------------------------------------------------------------------------------
# The RC figure (rejectopt.report) and the CLI's score choices (the registry)
# --------------------------------------------------------------------------------------------
def test_rc_figure_draws_curves_and_the_point():
    rng = np.random.default_rng(0)
    s = rng.normal(size=200)
    loss = 100.0 * (rng.random(200) < 1 / (1 + np.exp(-2 * s)))
    selection = SelectionFunction(0.0, 1.0)
    fig = rc_figure(loss, s, score_label="SELE", point=operating_point(loss, s, selection),
                    risk_label="zero_one, %", title="report rows")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("SELE score (AuRC") and labels[-1] == "chosen point"
    assert ax.get_ylabel() == "selective risk (zero_one, %)" and ax.get_title() == "report rows"
    nothing = operating_point(loss, s, SelectionFunction(-np.inf, 0.0))
    assert len(rc_figure(loss, s, point=nothing).axes[0].get_legend().get_texts()) == 3  # no point


def test_cli_offers_the_registered_scores_that_learn_from_the_loss(capsys):
    from rejectopt.cli._parser import cli_scores

    assert cli_scores() == ["sele", "reg"]
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["select", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--score {sele,reg}" in help_text and "not TCP: it learns from the classifier's class posteriors" in help_text
    args = cli.build_parser().parse_args(["select", "--data", "d.csv", "--target", "coverage=0.5", "--out", "o"])
    assert args.C == "0,1,10,100,1000" and args.score == "sele"  # SCORE_C_GRID
