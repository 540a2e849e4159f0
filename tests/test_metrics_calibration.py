"""The calibration metrics against torch-uncertainty's and fd-shifts' own values, and their checks.

``tests/data/metric_calibration_golden.json`` holds values computed by torch-uncertainty's and
torchmetrics' released code and by fd-shifts' calibration functions re-typed from its repository
(``benchmarks/golden/make_calibration_golden.py``, provenance in the file): random softmax
outputs, confidences on bin edges and tied, all-correct and all-wrong predictions, 15, 10 and 2
bins.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rejectopt.exceptions import InvalidParameterError
from rejectopt.metrics import bootstrap_ci
from rejectopt.metrics._calibration import (
    ROW_SUM_TOLERANCE,
    adaptive_calibration_error,
    brier_score,
    brier_score_terms,
    expected_calibration_error,
    maximum_calibration_error,
    negative_log_likelihood,
    nll_terms,
)

GOLDEN = json.loads((Path(__file__).parent / "data" / "metric_calibration_golden.json").read_text())
TOP_LABEL = {
    "ece": expected_calibration_error,
    "mce": maximum_calibration_error,
    "adaptive_ece": adaptive_calibration_error,
}


def _close(got, want, tol=1e-12):
    return math.isclose(got, want, rel_tol=tol, abs_tol=tol)


def test_the_golden_file_covers_what_it_claims():
    cases = {c["case"] for c in GOLDEN["calibration"]}
    assert {"random", "edges_and_ties", "all_correct", "all_wrong"} <= cases
    assert {"torch-uncertainty", "torchmetrics", "scikit-learn", "probly"} <= set(
        GOLDEN["versions"]
    )
    assert "1336e7ce125b7e9cfb3d61a3574adc556d97da21" in GOLDEN["provenance"]


@pytest.mark.parametrize("convention", ["torch-uncertainty", "fd-shifts"])
def test_top_label_metrics_equal_the_librarys_own(convention):
    checked, wrong = 0, []
    for case in GOLDEN["calibration"]:
        p, y = case["probabilities"], case["y_true"]
        for n_bins, values in case["n_bins"].items():
            for metric, want in values[convention].items():
                if metric not in TOP_LABEL:
                    continue
                kwargs = {"n_bins": int(n_bins)}
                if metric != "adaptive_ece":
                    kwargs["convention"] = convention
                got = TOP_LABEL[metric](p, y, **kwargs)
                checked += 1
                if not _close(got, want):
                    wrong.append((case["case"], n_bins, metric, got, want))
    assert checked >= (40 if convention == "torch-uncertainty" else 30)
    assert not wrong, wrong[:5]


def test_brier_and_nll_equal_torch_uncertaintys_terms_and_means():
    for case in GOLDEN["calibration"]:
        p, y = case["probabilities"], case["y_true"]
        values = case["n_bins"]["15"]["torch-uncertainty"]
        np.testing.assert_allclose(brier_score_terms(p, y), values["brier_terms"], rtol=1e-12)
        np.testing.assert_allclose(nll_terms(p, y), values["nll_terms"], rtol=1e-12)
        # its reduction="mean" accumulates in a float32 state: equal to float32 precision only
        assert _close(brier_score(p, y), values["brier"], tol=1e-6)
        assert _close(negative_log_likelihood(p, y), values["nll"], tol=1e-6)


def test_fd_shifts_reads_every_bin_as_accuracy_zero_when_all_predictions_agree():
    case = next(c for c in GOLDEN["calibration"] if c["case"] == "all_correct")
    p, y = np.asarray(case["probabilities"]), case["y_true"]
    mean_confidence = p.max(axis=1).mean()
    # label_binarize maps the single class to 0: the ECE is the mean confidence, not 1 - it
    assert expected_calibration_error(p, y, convention="fd-shifts") == pytest.approx(
        mean_confidence, abs=1e-12
    )
    assert expected_calibration_error(p, y) == pytest.approx(1 - mean_confidence, abs=1e-12)


def test_bin_edges_follow_each_library():
    p = [[1.0, 0.0], [0.9, 0.1]]  # confidence 1 (correct) and 0.9 (wrong), 2 bins
    # torch-uncertainty: 1.0 has a bin of its own; fd-shifts: it shares [0.5, 1 + 1e-8) with 0.9
    assert expected_calibration_error(p, [0, 1], n_bins=2) == pytest.approx(0.45, abs=1e-15)
    assert expected_calibration_error(p, [0, 1], n_bins=2, convention="fd-shifts") == (
        pytest.approx(0.45, abs=1e-15)
    )
    assert maximum_calibration_error(p, [0, 1], n_bins=2) == pytest.approx(0.9, abs=1e-15)
    assert maximum_calibration_error(p, [0, 1], n_bins=2, convention="fd-shifts") == (
        pytest.approx(0.45, abs=1e-15)
    )
    q = [[0.5, 0.5], [0.6, 0.4]]  # 0.5 opens the upper bin (left-closed) in both
    assert expected_calibration_error(q, [1, 0], n_bins=2) == pytest.approx(0.05, abs=1e-15)


def test_adaptive_bins_hold_equal_counts_and_tied_rows_keep_input_order():
    p = np.array([[0.6, 0.4]] * 4 + [[0.9, 0.1]] * 2)
    # sorted confidences 0.6 x4, 0.9 x2 into 2 runs of 3: the fourth 0.6 joins the 0.9s
    ace = adaptive_calibration_error(p, [0, 0, 0, 1, 0, 0], n_bins=2)
    assert ace == pytest.approx(0.5 * abs(1 - 0.6) + 0.5 * abs(2 / 3 - 0.8), abs=1e-15)
    with pytest.raises(ValueError, match="5 rows cannot fill n_bins=6"):
        adaptive_calibration_error(p[:5], [0] * 5, n_bins=6)


def test_groups_give_each_groups_mean_and_terms_bootstrap():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), 60)
    y = rng.integers(0, 3, 60)
    groups = np.where(np.arange(60) < 20, "a", "b")
    by_group = brier_score(p, y, groups=groups)
    assert by_group == {
        "a": pytest.approx(brier_score(p[:20], y[:20]), abs=1e-15),
        "b": pytest.approx(brier_score(p[20:], y[20:]), abs=1e-15),
    }
    assert negative_log_likelihood(p, y, groups=groups)["b"] == pytest.approx(
        negative_log_likelihood(p[20:], y[20:]), abs=1e-15
    )
    with pytest.raises(ValueError, match="missing label"):
        brier_score(p, y, groups=[None] + ["a"] * 59)
    terms = brier_score_terms(p, y)
    low, high = bootstrap_ci(
        lambda loss, _: float(np.mean(loss)), terms, np.zeros(60), n_resamples=200, random_state=0
    )
    assert low < brier_score(p, y) < high


def test_nll_is_infinite_where_the_true_class_has_probability_zero():
    assert negative_log_likelihood([[1.0, 0.0], [0.5, 0.5]], [1, 0]) == math.inf
    assert nll_terms([[1.0, 0.0]], [0]).tolist() == [0.0]


@pytest.mark.parametrize(
    ("probabilities", "y_true", "message"),
    [
        ([[0.5, 0.5], [np.nan, 1.0]], [0, 0], "NaN or infinite value in row 1"),
        ([[0.5, 0.5], [1.2, -0.2]], [0, 0], r"lie in \[0, 1\]; row 1"),
        ([[0.5, 0.5], [0.5, 0.4]], [0, 0], "must sum to 1 .*row 1 sums to 0.9"),
        ([[0.5, 0.5]], [2], r"y_true must lie in \[0, 2\).*row 0 is 2"),
        ([[0.5, 0.5]], [0.5], "integer class indices"),
        ([0.5, 0.5], [0], "2-D array"),
        ([[0.5, 0.5]], [0, 1], "one label per row"),
    ],
)
def test_bad_probabilities_and_labels_are_errors_naming_the_row(probabilities, y_true, message):
    for function in (expected_calibration_error, brier_score, negative_log_likelihood):
        with pytest.raises(ValueError, match=message):
            function(probabilities, y_true)


def test_rows_summing_to_one_within_the_tolerance_are_accepted():
    p = [[0.5, 0.5 + ROW_SUM_TOLERANCE / 2]]
    assert brier_score(p, [0]) == pytest.approx(0.5, abs=1e-4)


def test_scalar_parameters_are_checked_against_the_table():
    p, y = [[0.5, 0.5]], [0]
    with pytest.raises(InvalidParameterError, match="expected_calibration_error: n_bins must be"):
        expected_calibration_error(p, y, n_bins=0)
    with pytest.raises(InvalidParameterError, match="maximum_calibration_error: convention must"):
        maximum_calibration_error(p, y, convention="sklearn")
    with pytest.raises(InvalidParameterError, match="n_bins must be an integer"):
        adaptive_calibration_error(p, y, n_bins=1.5)


def test_the_registry_names_every_calibration_metric_with_its_inputs():
    from rejectopt.metrics import FAILURE_METRICS

    p, y = [[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]], [0, 1, 1]
    calibration = {n for n, e in FAILURE_METRICS.items() if e.inputs == ("probabilities", "y_true")}
    assert calibration == {"ece", "mce", "adaptive_ece", "brier", "nll"}
    for name in calibration:
        entry = FAILURE_METRICS[name]
        assert entry.higher_is_better is False
        binned = name in ("ece", "mce", "adaptive_ece")
        assert entry.function(p, y, **({"n_bins": 2} if binned else {})) >= 0
    assert FAILURE_METRICS["nll"].function(p, y) == negative_log_likelihood(p, y)
