"""The risk-coverage metrics under other libraries' conventions, against the libraries' own values.

``tests/data/metric_conventions_golden.json`` holds values computed by MAPIE's and
torch-uncertainty's released code and by fd-shifts' and Geifman's functions re-typed from their
repositories (``benchmarks/golden/make_convention_golden.py``, provenance in the file), on the
4-sample example of the library survey (docs/guide/metric_conventions.md), fd-shifts' own
RC_STATS_TEST_CASES and 320 random cases with ties, plateaus and graded losses.
"""

import functools
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rejectopt.metrics import (
    CONVENTIONS,
    augrc,
    aurc,
    bootstrap_ci,
    coverage_at_risk,
    eaugrc,
    eaurc,
    risk_at_coverage,
)

GOLDEN = json.loads((Path(__file__).parent / "data" / "metric_conventions_golden.json").read_text())
FUNCTIONS = {
    "aurc": aurc,
    "augrc": augrc,
    "eaurc": eaurc,
    "eaugrc": eaugrc,
    "risk_at_coverage": risk_at_coverage,
    "coverage_at_risk": coverage_at_risk,
}
LIBRARIES = [c for c in CONVENTIONS if c != "paper"]
# probly's golden values live with the calibration metrics' (its own Python 3.12 environment)
PROBLY_GOLDEN = json.loads(
    (Path(__file__).parent / "data" / "metric_calibration_golden.json").read_text()
)["probly"]


def _call(metric, loss, uncertainty, case, **kwargs):
    target = {"risk_at_coverage": (case["coverage"],), "coverage_at_risk": (case["risk"],)}.get(
        metric, ()
    )
    return FUNCTIONS[metric](loss, uncertainty, *target, **kwargs)


def _same(got, want):
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12)


def test_the_golden_file_covers_what_it_claims():
    cases = GOLDEN["cases"]
    assert sum(c["id"].startswith("random-") for c in cases) >= 300
    assert (
        sum(c["id"].startswith("fd-shifts:") for c in cases) == 31
    )  # RC_STATS_TEST_CASES without NaN
    random_cases = [c for c in cases if c["id"].startswith("random-")]
    assert (
        sum(len(set(c["uncertainty"])) < len(c["uncertainty"]) for c in random_cases) > 150
    )  # ties
    assert sum(not set(c["loss"]) <= {0.0, 1.0} for c in random_cases) > 100  # graded losses
    provenance = GOLDEN["provenance"]
    assert {"mapie", "torch-uncertainty", "torch", "numpy"} <= set(provenance["packages"])
    assert provenance["re-typed"]["fd-shifts"]["repo"] == "IML-DKFZ/fd-shifts"


@pytest.mark.parametrize("convention", [c for c in LIBRARIES if c != "probly"])
def test_every_value_equals_the_librarys_own(convention):
    checked, wrong = 0, []
    for case in GOLDEN["cases"]:
        values = case["values"].get(convention)
        if values is None:
            continue
        loss, uncertainty = np.asarray(case["loss"]), np.asarray(case["uncertainty"])
        order = case.get("order", {}).get(convention)
        if order is not None:  # the library's unstable sort put tied examples in this order
            loss, uncertainty = loss[order], uncertainty[order]
        for metric, want in values.items():
            if isinstance(want, dict):  # the library itself fails here
                with pytest.raises(ValueError, match=convention):
                    _call(metric, loss, uncertainty, case, convention=convention)
                checked += 1
                continue
            got = _call(metric, loss, uncertainty, case, convention=convention)
            checked += 1
            if not _same(got, want):
                wrong.append((case["id"], metric, got, want))
    assert checked >= (150 if convention == "mapie" else 600)  # MAPIE: AURC of 0/1 losses only
    assert not wrong, wrong[:5]


def test_the_papers_aurc_is_mapies_one_minus_auarc_on_every_binary_case():
    checked = 0
    for case in GOLDEN["cases"]:
        if "mapie" in case["values"]:
            assert _same(
                aurc(case["loss"], case["uncertainty"]), case["values"]["mapie"]["aurc"]
            ), case["id"]
            checked += 1
    assert checked > 150


# The 4-sample example of docs/guide/metric_conventions.md: losses [0, 1, 0, 1], confidences
# [.9, .8, .7, .1] (uncertainty = -confidence).
LOSS = [0, 1, 0, 1]
UNCERTAINTY = [-0.9, -0.8, -0.7, -0.1]


def test_the_four_sample_example():
    # fd-shifts: points (1, 1/2), (3/4, 1/3), (1/2, 1/2), (1/4, 0), (0, 0), trapezoid = 13/48
    assert aurc(LOSS, UNCERTAINTY, convention="fd-shifts") == pytest.approx(13 / 48, abs=1e-15)
    assert augrc(LOSS, UNCERTAINTY, convention="fd-shifts") == 0.1875
    # Geifman: (1/2 + 1/4 + 1/3 + 0) / 4 = 13/48, the same number by another road
    assert aurc(LOSS, UNCERTAINTY, convention="geifman") == pytest.approx(13 / 48, abs=1e-15)
    assert aurc(LOSS, UNCERTAINTY, convention="fd-shifts-legacy") == pytest.approx(
        13 / 48, abs=1e-15
    )
    # MAPIE: 1 - mean(1, 1/2, 2/3, 1/2) = 1/3, eq. (27) of the paper
    assert aurc(LOSS, UNCERTAINTY, convention="mapie") == pytest.approx(1 / 3, abs=1e-15)
    assert aurc(LOSS, UNCERTAINTY) == pytest.approx(1 / 3, abs=1e-15)
    # torch-uncertainty: trapezoid over (k/4, r_k) = 13/48, divided by 1 - 1/4
    assert aurc(LOSS, UNCERTAINTY, convention="torch-uncertainty") == pytest.approx(
        13 / 36, abs=1e-15
    )
    assert augrc(LOSS, UNCERTAINTY, convention="torch-uncertainty") == pytest.approx(
        0.25, abs=1e-15
    )
    assert round(aurc(LOSS, UNCERTAINTY, convention="torch-uncertainty"), 3) == 0.361


def test_swapping_tied_examples_moves_every_convention_but_fd_shifts():
    tied = [-0.9, -0.8, -0.8, -0.1]
    a, b = [0, 1, 0, 1], [0, 0, 1, 1]  # the two tied examples (positions 1 and 2) swapped
    assert aurc(a, tied, convention="fd-shifts") == aurc(b, tied, convention="fd-shifts") == 0.1875
    expected = {
        "torch-uncertainty": (13 / 36, 7 / 36),
        "geifman": (3 / 16, 13 / 48),
        "fd-shifts-legacy": (7 / 48, 1 / 3),
        "mapie": (1 / 3, 5 / 24),
        "paper": (1 / 3, 5 / 24),
    }
    for convention, (before, after) in expected.items():
        assert aurc(a, tied, convention=convention) == pytest.approx(before, abs=1e-15), convention
        assert aurc(b, tied, convention=convention) == pytest.approx(after, abs=1e-15), convention
        # the tie-averaged value is the same for both orders: the mean of the two orders' values
        for loss in (a, b):
            assert aurc(loss, tied, ties="average", convention=convention) == pytest.approx(
                (before + after) / 2, abs=1e-15
            ), convention
    assert round(aurc(b, tied, convention="torch-uncertainty"), 3) == 0.194


def _every_tie_order(loss, uncertainty):
    """All orders of the examples inside each tie group (input positions of each group permuted)."""
    groups = [np.flatnonzero(uncertainty == value) for value in np.unique(uncertainty)]
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = np.arange(loss.size)
        for group, permuted in zip(groups, choice):
            order[group] = permuted
        yield loss[order], uncertainty[order]


@pytest.mark.parametrize(
    "convention", ["torch-uncertainty", "geifman", "fd-shifts-legacy", "mapie", "paper"]
)
def test_tie_average_is_the_mean_over_every_order_of_the_tied_examples(convention):
    rng = np.random.default_rng(7)
    metrics = [m for m in ("aurc", "augrc", "eaurc", "risk_at_coverage") if _defines(convention, m)]
    for _ in range(12):
        n = int(rng.integers(2, 7))
        uncertainty = rng.integers(0, 3, n).astype(float)  # at most 5! x 1 orders
        loss = (
            (rng.random(n) < 0.5).astype(float)
            if convention == "mapie"
            else rng.choice([0.0, 0.3, 1.0], n)
        )
        case = {"coverage": float(rng.choice([0.4, 0.75, 1.0])), "risk": 0.3}
        for metric in metrics:
            values = [
                _call(metric, lo, un, case, convention=convention)
                for lo, un in _every_tie_order(loss, uncertainty)
            ]
            averaged = _call(metric, loss, uncertainty, case, convention=convention, ties="average")
            assert averaged == pytest.approx(np.mean(values), abs=1e-12), (
                convention,
                metric,
                loss,
                uncertainty,
            )


def _defines(convention, metric):
    try:
        _call(metric, [0.0, 1.0], [0.0, 1.0], {"coverage": 1.0, "risk": 1.0}, convention=convention)
    except ValueError:
        return False
    return True


def test_fd_shifts_ignores_the_order_of_ties():
    rng = np.random.default_rng(3)
    loss, uncertainty = rng.random(30), rng.integers(0, 4, 30).astype(float)
    orders = [np.lexsort((rng.random(30), uncertainty)) for _ in range(5)]  # tie groups shuffled
    for metric in FUNCTIONS:
        case = {"coverage": 0.6, "risk": 0.6}
        values = [
            _call(metric, loss[o], uncertainty[o], case, convention="fd-shifts") for o in orders
        ]
        assert max(values) - min(values) < 1e-12, metric
        assert len({tuple(loss[o]) for o in orders}) == 5  # the orders differ


@pytest.mark.parametrize(
    ("convention", "metric"),
    [
        ("mapie", "eaurc"),
        ("mapie", "augrc"),
        ("mapie", "risk_at_coverage"),
        ("torch-uncertainty", "eaurc"),
        ("geifman", "augrc"),
        ("geifman", "coverage_at_risk"),
        ("fd-shifts-legacy", "eaugrc"),
        ("torch-uncertainty", "eaugrc"),
    ],
)
def test_a_metric_the_convention_lacks_is_an_error_naming_both(convention, metric):
    with pytest.raises(ValueError, match=rf"convention '{convention}' .* does not define {metric}"):
        _call(metric, LOSS, UNCERTAINTY, {"coverage": 0.5, "risk": 0.5}, convention=convention)


def test_unknown_convention_and_non_binary_mapie_losses_are_errors():
    with pytest.raises(
        ValueError, match="convention must be one of 'paper', 'fd-shifts'.*got 'sklearn'"
    ):
        aurc(LOSS, UNCERTAINTY, convention="sklearn")
    with pytest.raises(ValueError, match="convention 'mapie'.*0/1 losses"):
        aurc([0, 100, 0, 100], UNCERTAINTY, convention="mapie")
    with pytest.raises(ValueError, match="ties must be one of 'index', 'average'"):
        augrc(LOSS, UNCERTAINTY, ties="random", convention="torch-uncertainty")


def test_torch_uncertainty_returns_nan_where_the_library_does():
    assert math.isnan(aurc([1.0], [0.0], convention="torch-uncertainty"))  # area of one point
    assert math.isnan(coverage_at_risk([1, 1], [0, 1], 0.5, convention="torch-uncertainty"))
    with pytest.raises(ValueError, match="no working point"):
        coverage_at_risk([1, 1], [0, 1], 0.5, convention="fd-shifts")


def test_the_paper_convention_is_the_default_bit_for_bit():
    rng = np.random.default_rng(11)
    loss, uncertainty = 100.0 * (rng.random(200) < 0.3), np.round(rng.random(200), 1)
    assert aurc(loss, uncertainty, convention="paper") == aurc(loss, uncertainty)
    assert eaurc(loss, uncertainty, convention="paper") == eaurc(loss, uncertainty)
    assert risk_at_coverage(loss, uncertainty, 0.7, convention="paper") == risk_at_coverage(
        loss, uncertainty, 0.7
    )


def test_bootstrap_evaluates_a_library_convention_per_resample():
    rng = np.random.default_rng(5)
    loss, uncertainty = (rng.random(40) < 0.4).astype(float), np.round(rng.random(40), 1)
    metric = functools.partial(aurc, convention="torch-uncertainty")
    low, high = bootstrap_ci(metric, loss, uncertainty, n_resamples=60, random_state=2)
    draws = np.random.default_rng(2).integers(0, 40, size=(60, 40))
    draws.sort(axis=1)
    values = [aurc(loss[i], uncertainty[i], convention="torch-uncertainty") for i in draws]
    assert (low, high) == tuple(np.quantile(values, [0.025, 0.975]))


@pytest.mark.parametrize("convention", ["geifman", "fd-shifts-legacy"])
def test_excess_aurc_of_0_100_losses_is_the_0_1_value_times_100(convention):
    # Their reference e + (1 - e) ln(1 - e) is the 0/1 oracle: on the 0/100 loss it was NaN
    got = eaurc([0, 100, 0, 100, 0], [1, 2, 3, 4, 5], convention=convention)
    assert math.isfinite(got)
    assert got == pytest.approx(
        100 * eaurc([0, 1, 0, 1, 0], [1, 2, 3, 4, 5], convention=convention), rel=1e-12
    )
    # by hand (geifman): risks after removing 0..4 of the least confident: 2/5, 2/5, 1/4, 1/3, 0/2 -> mean
    if convention == "geifman":
        e = 0.4
        assert got == pytest.approx(
            100 * ((0.4 + 0.4 + 0.25 + 1 / 3 + 0.0) / 5 - (e + (1 - e) * math.log(1 - e)))
        )


@pytest.mark.parametrize("convention", ["geifman", "fd-shifts-legacy"])
def test_excess_aurc_refuses_losses_its_0_1_reference_does_not_define(convention):
    with pytest.raises(ValueError, match=f"convention '{convention}'.*0/1.*'paper' or 'fd-shifts'"):
        eaurc([0, 1, 2, 1, 0], [1, 2, 3, 4, 5], convention=convention)  # absolute errors
    # graded losses in [0, 1] keep the library's own value (the golden cases check it); here by hand
    if (
        convention == "geifman"
    ):  # risks 1/2 and 0.5/2 (divided by one more than kept), reference at e = 1/2
        want = (0.5 + 0.25) / 2 - (0.5 + 0.5 * math.log(0.5))
        assert eaurc([0.5, 0.5], [0, 1], convention=convention) == pytest.approx(want, rel=1e-12)


def test_fd_shifts_legacy_scores_a_single_wrong_prediction_zero_as_fd_shifts_does():
    # legacy StatsCache.rc_curve_stats has one point and no weights for n = 1: its sum is empty
    assert aurc([1], [0], convention="fd-shifts-legacy") == 0.0
    single = next(c for c in GOLDEN["cases"] if len(c["loss"]) == 1 and c["loss"][0] == 1.0)
    assert single["values"]["fd-shifts-legacy"]["aurc"] == 0.0  # the library's own value


# --------------------------------------------------------------------------------------------
# Partial areas: fd-shifts' evaluate_auc(cov_min, cov_max), values made by its re-typed code
# --------------------------------------------------------------------------------------------
PARTIAL = json.loads(
    (Path(__file__).parent / "data" / "metric_partial_area_golden.json").read_text()
)


def test_partial_areas_equal_fd_shifts_own_values():
    checked, wrong = 0, []
    for case in PARTIAL["cases"]:
        loss, uncertainty = np.asarray(case["loss"]), np.asarray(case["uncertainty"])
        for value in case["values"]:
            for metric, function in (("aurc", aurc), ("augrc", augrc)):
                got = function(
                    loss, uncertainty, convention="fd-shifts", coverage_range=tuple(value["range"])
                )
                checked += 1
                if not _same(got, value[metric]):
                    wrong.append((case["id"], metric, value["range"], got, value[metric]))
    assert checked > 3000
    assert not wrong, wrong[:5]
    assert PARTIAL["provenance"]["re-typed"]["repo"] == "IML-DKFZ/fd-shifts"
    # fd-shifts itself refuses a partial AUGRC on every range but [0, 1]
    refusals = {
        tuple(v["range"]): v["fd_shifts_augrc"] for c in PARTIAL["cases"] for v in c["values"]
    }
    assert refusals[(0.0, 1.0)] is None and refusals[(0.0, 0.5)] == "NotImplementedError"


def test_the_golden_partial_ranges_reach_every_branch_of_fd_shifts_code():
    ranges = [tuple(v["range"]) for c in PARTIAL["cases"] for v in c["values"]]
    assert {(0.0, 1.0), (0.0, 0.5), (0.5, 1.0), (0.2, 0.8)} <= set(ranges)
    # ends inside one segment (fd-shifts' single-segment branch) and ends on the curve's points
    inside = sum(1 for c in PARTIAL["cases"] if len(c["values"]) == 9)
    assert inside > 100


def _hyperbola_integral(loss, uncertainty, low, high, steps=200_001):
    """Midpoint-rule integral of the selective risk with the accepted loss linear between tie-group ends."""
    order = np.argsort(uncertainty, kind="stable")
    u, sorted_loss = np.asarray(uncertainty)[order], np.asarray(loss, dtype=float)[order]
    n = len(sorted_loss)
    ends = [0] + [k for k in range(1, n + 1) if k == n or u[k] != u[k - 1]]
    sums = np.concatenate(([0.0], np.cumsum(sorted_loss)))[ends]
    x = low * n + (np.arange(steps) + 0.5) * (high - low) * n / steps
    return float(np.mean(np.interp(x, ends, sums) / x) * (high - low))


def test_fd_shifts_partial_aurc_is_the_integral_of_its_curve_but_inside_one_segment():
    # four-sample: confidences 0.9, 0.8, 0.7, 0.1 -> uncertainties, errors at 0.8 and 0.1; points at 1/4 .. 1
    loss, uncertainty = [0, 1, 0, 1], [-0.9, -0.8, -0.7, -0.1]
    for low, high in ((0.0, 1.0), (0.2, 0.8), (0.25, 0.75), (0.1, 0.2)):
        assert aurc(
            loss, uncertainty, convention="fd-shifts", coverage_range=(low, high)
        ) == pytest.approx(_hyperbola_integral(loss, uncertainty, low, high), abs=1e-9)
    # both ends inside (1/2, 3/4): fd-shifts' single-segment formula is not that integral (its value kept)
    fd = aurc(loss, uncertainty, convention="fd-shifts", coverage_range=(0.5625, 0.6875))
    golden = next(
        v["aurc"] for v in PARTIAL["cases"][0]["values"] if v["range"] == [0.5625, 0.6875]
    )
    assert fd == pytest.approx(golden, rel=1e-12)
    assert abs(fd - _hyperbola_integral(loss, uncertainty, 0.5625, 0.6875)) > 0.05


def test_partial_areas_refuse_conventions_without_one_and_bad_ranges():
    with pytest.raises(
        ValueError, match="coverage_range is defined for the conventions 'paper' and 'fd-shifts'"
    ):
        aurc([0, 1], [0, 1], convention="torch-uncertainty", coverage_range=(0, 0.5))
    with pytest.raises(ValueError, match="convention 'mapie'.*does not define augrc"):
        augrc([0, 1], [0, 1], convention="mapie", coverage_range=(0, 0.5))
    for bad in ((0.5, 0.5), (-0.1, 0.5), (0.2, 1.5), (0.5,), "ab", 0.5):
        with pytest.raises(ValueError, match="coverage_range"):
            aurc([0, 1], [0, 1], coverage_range=bad)


def test_probly_aurc_equals_problys_own_values():
    assert len(PROBLY_GOLDEN) >= 8
    assert sum("order" in case for case in PROBLY_GOLDEN) >= 2  # tied uncertainties
    for case in PROBLY_GOLDEN:
        loss, uncertainty = np.asarray(case["l"]), np.asarray(case["u"])
        if "order" in case:  # probly's argsort(u); it processes the rows in the reverse order
            loss, uncertainty = loss[case["order"]], uncertainty[case["order"]]
        got = aurc(loss, uncertainty, convention="probly")
        assert _same(got, case["aurc"]), (case["name"], got, case["aurc"])


def test_probly_bins_its_curve_on_a_fixed_grid():
    # 100 rows, 2 per step: point i is the mean loss of the 100 - 2 i least uncertain rows,
    # placed at i / 49 whatever share it rejected; the last point keeps 2 rows, not 100/50
    loss = np.zeros(100)
    loss[:3] = 1.0
    uncertainty = np.arange(100.0)  # the losses of 1 are the least uncertain, rejected last
    means = [min(3, 100 - 2 * i) / (100 - 2 * i) for i in range(50)]
    want = float(np.sum(np.diff(np.linspace(0, 1, 50)) * (np.add(means[1:], means[:-1])) / 2))
    assert aurc(loss, uncertainty, convention="probly") == pytest.approx(want, abs=1e-15)
    assert (
        aurc(loss, uncertainty, convention="probly") > 0.1
    )  # risk 1 at the last point, placed at coverage 0


def test_probly_rejects_the_later_of_tied_rows_first_and_averages_ties_on_request():
    uncertainty = np.arange(60.0)
    uncertainty[58] = uncertainty[59]  # the two most uncertain rows tie
    first, second = np.zeros(60), np.zeros(60)
    first[58], second[59] = 1.0, 1.0
    a, b = (
        aurc(first, uncertainty, convention="probly"),
        aurc(second, uncertainty, convention="probly"),
    )
    assert a > b  # row 59 (input position later) is rejected first: row 58's loss stays longer
    for loss in (first, second):
        assert aurc(loss, uncertainty, ties="average", convention="probly") == pytest.approx(
            (a + b) / 2, abs=1e-15
        )


def test_probly_needs_fifty_rows_and_defines_the_aurc_only():
    with pytest.raises(ValueError, match="convention 'probly'.*at least 50 rows.*got 49"):
        aurc(np.zeros(49), np.arange(49.0), convention="probly")
    with pytest.raises(ValueError, match="convention 'probly' .* does not define augrc"):
        augrc(np.zeros(60), np.arange(60.0), convention="probly")
