"""The failure-detection metrics against fd-shifts', torch-uncertainty's and MAPIE's own values.

``tests/data/metric_failure_golden.json`` holds values computed by torch-uncertainty's,
torchmetrics' and MAPIE's released code and by fd-shifts' functions re-typed from its repository
(``benchmarks/golden/make_failure_golden.py``, provenance in the file), on random multiclass
cases with and without ties, an evenly spaced ROC curve, a tie at the 95 % threshold, one score
for all, all predictions right and all wrong.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rejectopt.metrics import aurc, bootstrap_ci
from rejectopt.metrics._failure import (
    augrc_ba,
    aurc_achievable,
    aurc_ba,
    failure_aupr,
    failure_auroc,
    fpr_at_tpr,
)
from rejectopt.metrics._failure_registry import FAILURE_METRICS, get_failure_metric

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "metric_failure_golden.json").read_text())
CASES = {case["id"]: case for case in GOLDEN["cases"]}

#: (library, its metric name) -> rejectopt's call on (loss, uncertainty, y_true, y_pred).
CALLS = {
    ("fd-shifts", "failauc"): lambda lo, u, yt, yp: failure_auroc(lo, u),
    ("torchmetrics", "BinaryAUROC"): lambda lo, u, yt, yp: failure_auroc(lo, u),
    ("mapie", "auroc"): lambda lo, u, yt, yp: failure_auroc(lo, u),
    ("fd-shifts", "fpr@95tpr"): lambda lo, u, yt, yp: fpr_at_tpr(lo, u, convention="fd-shifts"),
    ("torch-uncertainty", "FPR95"): lambda lo, u, yt, yp: fpr_at_tpr(
        lo, u, convention="torch-uncertainty"
    ),
    ("fd-shifts", "failap_err"): lambda lo, u, yt, yp: failure_aupr(lo, u, positive="error"),
    ("fd-shifts", "failap_suc"): lambda lo, u, yt, yp: failure_aupr(lo, u, positive="success"),
    ("fd-shifts", "aurc_achievable"): lambda lo, u, yt, yp: aurc_achievable(lo, u),
    ("fd-shifts", "aurc_ba"): lambda lo, u, yt, yp: aurc_ba(yt, yp, u),
    ("fd-shifts", "augrc_ba"): lambda lo, u, yt, yp: augrc_ba(yt, yp, u),
}


def _arrays(case):
    y_true, y_pred = np.array(case["y_true"]), np.array(case["y_pred"])
    return (y_true != y_pred).astype(float), np.array(case["uncertainty"]), y_true, y_pred


def test_the_golden_file_says_where_its_values_come_from():
    provenance = GOLDEN["provenance"]
    assert {"torch-uncertainty", "mapie", "scikit-learn", "torchmetrics"} <= set(
        provenance["versions"]
    )
    assert set(provenance["fd-shifts"]) == {"metrics.py", "rc_stats_utils.py", "rc_stats.py"}
    assert {"all_correct", "all_wrong", "multiclass_ties", "even_steps"} <= set(CASES)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_every_library_value_is_reproduced_to_1e_12(case_id):
    loss, u, y_true, y_pred = _arrays(CASES[case_id])
    checked = 0
    for library, values in CASES[case_id]["values"].items():
        for name, want in values.items():
            if want is None or isinstance(want, dict):  # the library's NaN or refusal
                continue
            try:
                got = CALLS[library, name](loss, u, y_true, y_pred)
            except ValueError as error:
                # One class only: torchmetrics' 0.0 or sklearn's 0.0 (with a warning) is no value.
                assert case_id in ("all_correct", "all_wrong"), (library, name)
                assert "undefined without" in str(error)
                continue
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (library, name)
            checked += 1
    assert checked >= 3


def test_where_a_library_has_no_value_rejectopt_says_why():
    """fd-shifts gives NaN (or sklearn's 0.0 with a warning), MAPIE raises: rejectopt raises."""
    loss, u, _, _ = _arrays(CASES["all_correct"])
    assert CASES["all_correct"]["values"]["fd-shifts"]["failauc"] is None
    assert "error" in CASES["all_correct"]["values"]["mapie"]["auroc"]
    for call in (failure_auroc, fpr_at_tpr, failure_aupr):
        with pytest.raises(ValueError, match="without an error"):
            call(loss, u)
    assert failure_aupr(loss, u, positive="success") == 1.0
    loss, u, _, _ = _arrays(CASES["all_wrong"])
    for call in (failure_auroc, fpr_at_tpr):
        with pytest.raises(ValueError, match="without a success"):
            call(loss, u)
    with pytest.raises(ValueError, match="without a success"):
        failure_aupr(loss, u, positive="success")
    assert failure_aupr(loss, u) == 1.0


def test_the_areas_are_defined_when_every_prediction_is_right_or_wrong():
    loss, u, y_true, y_pred = _arrays(CASES["all_correct"])
    assert (
        aurc_achievable(loss, u) == aurc_ba(y_true, y_pred, u) == augrc_ba(y_true, y_pred, u) == 0
    )
    loss, u, y_true, y_pred = _arrays(CASES["all_wrong"])
    assert aurc_achievable(loss, u) == 1.0
    # fd-shifts' rule: a class with no accepted row counts 0, so the risk falls below 1 as the
    # classes run out (the golden test checks the value itself).
    assert 0.5 < aurc_ba(y_true, y_pred, u) < 1.0
    assert 0 < augrc_ba(y_true, y_pred, u) < 1.0


def test_the_fpr_conventions_differ_where_sklearn_drops_evenly_spaced_points():
    loss, u, _, _ = _arrays(CASES["even_steps"])
    assert fpr_at_tpr(loss, u) == 0.95
    assert fpr_at_tpr(loss, u, convention="torch-uncertainty") == 0.95
    assert fpr_at_tpr(loss, u, convention="fd-shifts") == 1.0


def test_auroc_counts_a_tie_as_one_half():
    assert failure_auroc([1, 0], [0.5, 0.5]) == 0.5
    assert failure_auroc([1, 0, 1, 0], [0.9, 0.1, 0.5, 0.5]) == 0.875
    assert failure_auroc([0, 1], [0.9, 0.1]) == 0.0


def test_fpr_at_tpr_reads_its_level():
    loss = [0, 0, 0, 0, 1, 1]
    u = [0.1, 0.2, 0.3, 0.4, 0.25, 0.5]
    assert fpr_at_tpr(loss, u, tpr=0.5) == 0.0
    assert fpr_at_tpr(loss, u, tpr=0.75) == 0.5
    assert fpr_at_tpr(loss, u, tpr=1.0) == 0.5
    with pytest.raises(ValueError, match="tpr"):
        fpr_at_tpr(loss, u, tpr=0)
    with pytest.raises(ValueError, match="convention"):
        fpr_at_tpr(loss, u, convention="mapie")


def test_a_graded_loss_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"0/1 .*binary failure.*loss\[1\] = 0.5"):
        failure_auroc([0, 0.5, 1], [1, 2, 3])
    assert failure_auroc(np.array([0, 0.5, 1]) > 0, [1, 2, 3]) == 1.0


def test_achievable_aurc_is_never_above_the_fd_shifts_aurc():
    rng = np.random.default_rng(3)
    for _ in range(20):
        loss = (rng.random(200) < 0.3).astype(float)
        u = np.round(loss + rng.normal(0, 1, 200), 1)
        assert aurc_achievable(loss, u) <= aurc(loss, u, convention="fd-shifts") + 1e-12


def test_groups_give_each_groups_own_value():
    loss, u, y_true, y_pred = _arrays(CASES["multiclass_ties"])
    groups = np.where(np.arange(loss.size) % 3 == 0, "a", "b")
    for name, metric in FAILURE_METRICS.items():
        if metric.inputs == ("probabilities", "y_true"):  # the calibration metrics: their own tests
            continue
        args = (loss, u) if metric.inputs == ("loss", "uncertainty") else (y_true, y_pred, u)
        call = _public(name)
        per_group = call(*args, groups=groups)
        assert set(per_group) == {"a", "b"}
        rows = groups == "a"
        assert per_group["a"] == call(*(np.asarray(a)[rows] for a in args))


def _public(name):
    """The public function behind a registry entry, which takes ``groups=``."""
    return {
        "failure_auroc": failure_auroc,
        "fpr_at_95_tpr": fpr_at_tpr,
        "failure_aupr_error": failure_aupr,
        "failure_aupr_success": lambda *a, **k: failure_aupr(*a, positive="success", **k),
        "aurc_achievable": aurc_achievable,
        "aurc_ba": aurc_ba,
        "augrc_ba": augrc_ba,
    }[name]


def test_bootstrap_ci_takes_the_loss_metrics_as_callables():
    loss, u, _, _ = _arrays(CASES["multiclass_distinct"])
    for metric in FAILURE_METRICS.values():
        if metric.inputs != ("loss", "uncertainty"):
            continue
        interval = bootstrap_ci(metric.function, loss, u, n_resamples=50, random_state=0)
        assert interval.low <= metric.function(loss, u) <= interval.high


def test_the_registry_says_direction_and_inputs():
    assert get_failure_metric("failure_auroc").higher_is_better
    assert not get_failure_metric("fpr_at_95_tpr").higher_is_better
    assert get_failure_metric("augrc_ba").inputs == ("y_true", "y_pred", "uncertainty")
    with pytest.raises(ValueError, match="'aurc' is not a failure metric name"):
        get_failure_metric("aurc")


def test_the_labels_must_match_the_scores():
    with pytest.raises(ValueError, match="same length"):
        aurc_ba([0, 1], [0, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="1-D"):
        augrc_ba([[0, 1]], [[0, 1]], [0.1, 0.2])


def test_mapies_auarc_is_already_the_mapie_convention():
    """MAPIE's ``auarc`` needs nothing new: the conventions' golden file holds it, and it matches."""
    golden = json.loads((DATA / "metric_conventions_golden.json").read_text())
    checked = 0
    for case in golden["cases"]:
        if "mapie" in case["values"]:
            got = aurc(case["loss"], case["uncertainty"], convention="mapie")
            assert math.isclose(got, case["values"]["mapie"]["aurc"], rel_tol=1e-12, abs_tol=1e-12)
            checked += 1
    assert checked >= 150


def test_fd_shifts_reads_95_percent_as_0_9495():
    """1899 of 2000 successes (94.95 %) reach fd-shifts' 95 %, not the plain definition's."""
    u = np.r_[np.arange(2000.0), 1898.5]
    loss = np.r_[np.zeros(2000), 1.0]
    assert fpr_at_tpr(loss, u, convention="fd-shifts") == 0.0
    assert fpr_at_tpr(loss, u) == fpr_at_tpr(loss, u, convention="torch-uncertainty") == 1.0
