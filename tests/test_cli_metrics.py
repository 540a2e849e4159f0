"""``select --metrics``: registered metrics of the learned score in report.json and report.md."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt import cli
from rejectopt.cli._model import apply_model, load_model
from rejectopt.cli._table import load_apply_table
from rejectopt.fitting import split_rows
from rejectopt.metrics import (
    augrc_ba,
    aurc,
    aurc_ba,
    brier_score,
    expected_calibration_error,
    failure_auroc,
    fpr_at_tpr,
    metrics_table,
    negative_log_likelihood,
)


@pytest.fixture(scope="module")
def digits_csv(tmp_path_factory):
    """A logistic regression's predictions on digits, as select reads them."""
    folder = tmp_path_factory.mktemp("metrics")
    X, y = load_digits(return_X_y=True)
    clf = LogisticRegression(max_iter=3000, C=0.001).fit(X[:300], y[:300])
    frame = pd.DataFrame(X[300:], columns=[f"f{j}" for j in range(64)]).assign(
        y=y[300:], y_pred=clf.predict(X[300:])
    )
    frame.to_csv(folder / "val.csv", index=False)
    return folder / "val.csv"


def _select(data, out, *options):
    args = ["-q", "select", "--data", str(data), "--target", "coverage=0.8", "--C", "1"]
    return cli.main([*args, "--out", str(out), *options])


def _report_rows(report_json, data):
    """The report rows' losses (0/100) and learned uncertainties, recomputed from the outputs."""
    report = json.loads(report_json.read_text())
    model, score, selection = load_model(report_json.parent / "model.json")
    decisions = apply_model(model, score, selection, load_apply_table(data))
    frame = pd.read_csv(data)
    split = report["split"]
    parts = split_rows(
        len(frame),
        split["calibration_fraction"],
        split["report_fraction"],
        split["validation_fraction"],
        split["seed"],
        min_rows=10,
    )
    rows = parts["report"]
    loss = 100.0 * (frame["y"].to_numpy() != frame["y_pred"].to_numpy())
    return report, loss[rows], decisions["uncertainty"].to_numpy()[rows]


def test_without_metrics_the_report_is_unchanged(digits_csv, tmp_path):
    assert _select(digits_csv, tmp_path / "plain") == 0
    assert _select(digits_csv, tmp_path / "with", "--metrics", "aurc") == 0
    plain = json.loads((tmp_path / "plain" / "report.json").read_text())
    extended = json.loads((tmp_path / "with" / "report.json").read_text())
    assert "metrics" not in plain
    assert {k: v for k, v in extended.items() if k != "metrics"} == plain
    assert (tmp_path / "with" / "report.md").read_text() != (
        tmp_path / "plain" / "report.md"
    ).read_text()


def test_named_metrics_are_the_library_values_on_the_report_rows(digits_csv, tmp_path):
    out = tmp_path / "sel"
    assert _select(digits_csv, out, "--metrics", "failure_auroc,aurc,fpr_at_95_tpr") == 0
    report, loss, uncertainty = _report_rows(out / "report.json", digits_csv)
    entries = report["metrics"]
    assert list(entries) == ["failure_auroc", "aurc", "fpr_at_95_tpr"]
    assert entries["aurc"]["learned_score"] == pytest.approx(aurc(loss, uncertainty), rel=1e-9)
    assert entries["aurc"]["learned_score"] == report["aurc_report"]["learned_score"]
    assert entries["failure_auroc"] == {
        "label": "AUROC_f",
        "higher_is_better": True,
        "learned_score": pytest.approx(failure_auroc(loss > 0, uncertainty), rel=1e-9),
    }
    assert entries["fpr_at_95_tpr"]["learned_score"] == pytest.approx(
        fpr_at_tpr(loss > 0, uncertainty), rel=1e-9
    )
    markdown = (out / "report.md").read_text()
    assert "| AUROC_f | " in markdown and "| higher |" in markdown


def test_all_is_every_metric_of_the_loss_the_labels_and_the_score(digits_csv, tmp_path):
    out = tmp_path / "sel"
    assert _select(digits_csv, out, "--metrics", "all") == 0
    report = json.loads((out / "report.json").read_text())
    labels = np.array([0, 1, 0, 1])
    expected = metrics_table(
        labels, {"s": np.arange(4.0)}, y_true=labels, y_pred=np.zeros(4, dtype=int)
    ).index.tolist()
    assert [entry["label"] for entry in report["metrics"].values()] == expected
    assert "aurc_ba" in report["metrics"] and "ece" not in report["metrics"]


def test_the_balanced_accuracy_areas_read_the_report_rows_labels(digits_csv, tmp_path):
    out = tmp_path / "sel"
    assert _select(digits_csv, out, "--metrics", "aurc_ba,augrc_ba") == 0
    report, _, uncertainty = _report_rows(out / "report.json", digits_csv)
    frame = pd.read_csv(digits_csv)
    split = report["split"]
    rows = split_rows(
        len(frame),
        split["calibration_fraction"],
        split["report_fraction"],
        split["validation_fraction"],
        split["seed"],
        min_rows=10,
    )["report"]
    y, y_pred = frame["y"].to_numpy()[rows], frame["y_pred"].to_numpy()[rows]
    entries = report["metrics"]
    assert entries["aurc_ba"]["learned_score"] == pytest.approx(
        aurc_ba(y, y_pred, uncertainty), rel=1e-9
    )
    assert entries["augrc_ba"]["learned_score"] == pytest.approx(
        augrc_ba(y, y_pred, uncertainty), rel=1e-9
    )
    assert "| AURC-BA | " in (out / "report.md").read_text()


def test_a_networks_probabilities_give_the_calibration_metrics(tmp_path):
    """Logits and labels: ECE, Brier and NLL of the softmax on the report rows."""
    rng = np.random.default_rng(0)
    n, k = 1200, 4
    labels = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), labels] += 2.0  # a network right about 70 % of the time
    data = tmp_path / "net.npz"
    np.savez(data, logits=logits, labels=labels)
    out = tmp_path / "sel"
    args = ["-q", "select", "--data", str(data), "--target", "coverage=0.8", "--score", "mcp"]
    assert cli.main([*args, "--out", str(out), "--metrics", "ece,brier,nll,aurc_ba"]) == 0
    report = json.loads((out / "report.json").read_text())
    split = report["split"]
    rows = split_rows(
        n,
        split["calibration_fraction"],
        split["report_fraction"],
        split["validation_fraction"],
        split["seed"],
        min_rows=10,
    )["report"]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    entries = report["metrics"]
    assert entries["ece"]["learned_score"] == pytest.approx(
        expected_calibration_error(p[rows], labels[rows]), rel=1e-9
    )
    assert entries["brier"]["learned_score"] == pytest.approx(
        brier_score(p[rows], labels[rows]), rel=1e-9
    )
    assert entries["nll"]["learned_score"] == pytest.approx(
        negative_log_likelihood(p[rows], labels[rows]), rel=1e-9
    )
    assert entries["aurc_ba"]["learned_score"] == pytest.approx(
        aurc_ba(labels[rows], p[rows].argmax(axis=1), 1 - p[rows].max(axis=1)), rel=1e-9
    )


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ("--metrics", "auroc"),
            r"--metrics: unknown metric 'auroc'; valid names are 'aurc', .*'all'",
        ),
        (
            ("--metrics", "ece"),
            r"--metrics: 'ece' needs a network's class probabilities \(an NPZ or CSV of logits\)",
        ),
        (
            ("--loss", "mae", "--metrics", "aurc_ba"),
            r"--metrics: 'aurc_ba' needs the labels, which a table read with --loss-column or "
            r"--loss mae does not give",
        ),
    ],
)
def test_a_metric_select_cannot_compute_is_refused(digits_csv, tmp_path, capsys, options, message):
    assert _select(digits_csv, tmp_path / "sel", *options) != 0
    assert not (tmp_path / "sel").exists() or not any((tmp_path / "sel").iterdir())
    assert re.search(message, capsys.readouterr().err)


def test_a_graded_loss_refuses_the_failure_detector(digits_csv, tmp_path, capsys, caplog):
    out = tmp_path / "refused"
    assert _select(digits_csv, out, "--loss", "mae", "--metrics", "failure_auroc") != 0
    assert "need a 0/1 loss" in capsys.readouterr().err
    assert _select(digits_csv, tmp_path / "all", "--loss", "mae", "--metrics", "all") == 0
    report = json.loads((tmp_path / "all" / "report.json").read_text())
    assert list(report["metrics"]) == ["aurc", "augrc", "eaurc", "eaugrc"]
    assert "failure_auroc" in caplog.text and "left out of --metrics all" in caplog.text
