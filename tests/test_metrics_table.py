"""metrics_table: every registered metric of every score in one call, each cell the metric's own."""

import numpy as np
import pandas as pd
import pytest

from rejectopt import metrics
from rejectopt.metrics import FAILURE_METRICS, METRICS, metrics_table

RNG = np.random.default_rng(0)
N = 80
PROBABILITIES = RNG.dirichlet([1.0, 1.0, 1.0], N)
Y_TRUE = RNG.integers(0, 3, N)
Y_PRED = PROBABILITIES.argmax(axis=1)
LOSS = (Y_TRUE != Y_PRED).astype(int)
SCORES = {"msp": 1 - PROBABILITIES.max(axis=1), "random": RNG.random(N)}
ALL = {"y_true": Y_TRUE, "y_pred": Y_PRED, "probabilities": PROBABILITIES}


def _own_value(name, score):
    """The metric's own function on the arrays its registry entry names."""
    if name in METRICS:
        return METRICS[name].function(LOSS, score)
    arrays = {"loss": LOSS, "uncertainty": score, **ALL}
    return FAILURE_METRICS[name].function(*[arrays[k] for k in FAILURE_METRICS[name].inputs])


def test_each_cell_is_the_metric_own_function():
    table = metrics_table(LOSS, SCORES, **ALL)
    entries = {**METRICS, **FAILURE_METRICS}
    assert list(table.index) == [entry.label for entry in entries.values()]
    assert list(table.columns) == ["better", "msp", "random"]
    for name, entry in entries.items():
        for column, score in SCORES.items():
            assert table.loc[entry.label, column] == _own_value(name, score)
        higher = getattr(entry, "higher_is_better", False)
        assert table.loc[entry.label, "better"] == ("higher" if higher else "lower")


def test_a_calibration_row_does_not_depend_on_the_score():
    table = metrics_table(LOSS, SCORES, **ALL)
    for name in ("ece", "mce", "adaptive_ece", "brier", "nll"):
        row = table.loc[FAILURE_METRICS[name].label]
        assert row["msp"] == row["random"]


def test_missing_inputs_leave_their_metrics_out():
    table = metrics_table(LOSS, SCORES)
    expected = [m.label for m in METRICS.values()] + [
        m.label for m in FAILURE_METRICS.values() if m.inputs == ("loss", "uncertainty")
    ]
    assert list(table.index) == expected
    with_labels = metrics_table(LOSS, SCORES, y_true=Y_TRUE, y_pred=Y_PRED)
    assert "AURC-BA" in with_labels.index and "ECE" not in with_labels.index


def test_an_asked_metric_without_its_inputs_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'ece' needs probabilities, y_true"):
        metrics_table(LOSS, SCORES, metrics=["aurc", "ece"])


def test_an_unknown_name_is_refused_listing_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown metric\(s\) 'auroc'.*'failure_auroc'"):
        metrics_table(LOSS, SCORES, metrics="auroc")


def test_asked_metrics_come_in_the_asked_order():
    table = metrics_table(LOSS, SCORES, metrics=["failure_auroc", "aurc"])
    assert list(table.index) == ["AUROC_f", "AuRC"]


def test_a_graded_loss_leaves_the_failure_detector_out_with_a_warning():
    graded = LOSS * 100
    with pytest.warns(UserWarning, match=r"not 0/1.*'failure_auroc'.*'aurc_achievable'"):
        table = metrics_table(graded, SCORES, y_true=Y_TRUE, y_pred=Y_PRED)
    assert list(table.index) == [
        "AuRC", "AUGRC", "E-AuRC", "E-AUGRC", "AURC-BA", "AUGRC-BA"
    ]  # fmt: skip
    assert table.loc["AuRC", "msp"] == metrics.aurc(graded, SCORES["msp"])
    with pytest.raises(ValueError, match=r"'fpr_at_95_tpr' need a 0/1 loss"):
        metrics_table(graded, SCORES, metrics=["fpr_at_95_tpr"])


def test_a_boolean_loss_is_a_binary_failure():
    table = metrics_table(LOSS > 0, SCORES, metrics=["failure_auroc"])
    assert table.loc["AUROC_f", "msp"] == metrics.failure_auroc(LOSS, SCORES["msp"])


def test_the_convention_reaches_the_areas():
    table = metrics_table(LOSS, SCORES, metrics=["aurc"], convention="fd-shifts")
    assert table.loc["AuRC", "msp"] == metrics.aurc(LOSS, SCORES["msp"], convention="fd-shifts")
    with pytest.raises(Exception, match=r"^metrics_table: convention must be one of"):
        metrics_table(LOSS, SCORES, convention="sklearn")


def test_scores_must_be_a_mapping():
    with pytest.raises(ValueError, match="scores must be a non-empty mapping"):
        metrics_table(LOSS, SCORES["msp"])
    assert isinstance(metrics_table(LOSS, {"s": SCORES["msp"]}), pd.DataFrame)
