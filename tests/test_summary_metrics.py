"""Config summary_metrics: failure-detection columns of the summaries, refused where they cannot be."""

import numpy as np
import pytest
import yaml
from sklearn.datasets import load_digits
from support import REPO

from rejectopt._io import save_npz
from rejectopt.datasets import load_prepared
from rejectopt.metrics import FAILURE_METRICS, augrc_ba, aurc_ba, failure_auroc, fpr_at_tpr
from rejectopt.pipeline.config import ConfigError, plan_run, validate_config
from rejectopt.pipeline.experiments.paper import (
    SUMMARY_COLUMNS,
    SUMMARY_FAILURE_METRICS,
    run_classifier,
    summarize_dataset,
)
from rejectopt.splits import load_split, make_splits, save_splits

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


@pytest.fixture(scope="module")
def digits_lr(tmp_path_factory):
    """Digits, one split, LR: the inputs of summarize_dataset."""
    root = tmp_path_factory.mktemp("summary_metrics")
    X, y = load_digits(return_X_y=True)
    save_npz(root / "data.npz", X=X.astype(float), y=y.astype(np.int64))
    save_splits(root / "splits.npz", make_splits(y, n_splits=1, seed=0, dataset="digits"))
    run_classifier(
        root / "data.npz", root / "splits.npz", 0, "lr", (1,), 0, root / "lr.npz", dataset="digits"
    )
    args = ("digits", "classification", root / "data.npz", root / "splits.npz")
    return root, (*args, {("lr", 0): root / "lr.npz"}, {})


def test_the_added_columns_follow_the_summary_and_hold_the_metrics_of_the_failures(digits_lr):
    root, args = digits_lr
    plain = summarize_dataset(*args)
    added = summarize_dataset(*args, summary_metrics=["fpr_at_95_tpr", "failure_auroc"])
    assert list(plain.columns) == SUMMARY_COLUMNS
    assert list(added.columns) == [*SUMMARY_COLUMNS, "fpr_at_95_tpr", "failure_auroc"]
    assert added[SUMMARY_COLUMNS].equals(plain)
    _, y = load_prepared(root / "data.npz")
    tst = load_split(root / "splits.npz", 0)["tst"]
    with np.load(root / "lr.npz") as clf:
        failed, mcp = y[tst] != clf["y_pred"][tst], clf["baseline"][tst]
    row = added.iloc[0]
    assert row["score"] == "mcp"
    assert row["failure_auroc"] == failure_auroc(failed, mcp)
    assert row["fpr_at_95_tpr"] == fpr_at_tpr(failed, mcp)
    assert 0.5 < row["failure_auroc"] <= 1


def test_the_label_metrics_read_the_tst_labels_and_the_predictions(digits_lr):
    root, args = digits_lr
    added = summarize_dataset(*args, summary_metrics=["aurc_ba", "failure_auroc", "augrc_ba"])
    assert list(added.columns) == [*SUMMARY_COLUMNS, "aurc_ba", "failure_auroc", "augrc_ba"]
    _, y = load_prepared(root / "data.npz")
    tst = load_split(root / "splits.npz", 0)["tst"]
    with np.load(root / "lr.npz") as clf:
        y_pred, mcp = clf["y_pred"][tst], clf["baseline"][tst]
    row = added.iloc[0]
    assert row["aurc_ba"] == aurc_ba(y[tst], y_pred, mcp)
    assert row["augrc_ba"] == augrc_ba(y[tst], y_pred, mcp)
    assert row["failure_auroc"] == failure_auroc(y[tst] != y_pred, mcp)
    # the balanced risk of the accepted rows is not the error rate: the columns differ in kind
    assert 0 < row["augrc_ba"] < row["aurc_ba"] < 1


def test_a_metric_without_its_inputs_in_a_summary_is_refused_naming_the_key(digits_lr):
    _, args = digits_lr
    with pytest.raises(ValueError, match=r"^config summary_metrics: 'ece' cannot be a summary"):
        summarize_dataset(*args, summary_metrics=["ece"])
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(datasets=["letter"], summary_metrics=["failure_auroc", "brier"])
    with pytest.raises(
        ConfigError,
        match=r"^config summary_metrics: 'brier' cannot be a summary column: it measures the "
        r"classifier's class probabilities, not the score, so every score of a classifier would "
        r"get the same value; the allowed names are failure_auroc, ",
    ):
        plan_run(config)
    config["summary_metrics"] = SUMMARY_FAILURE_METRICS
    assert plan_run(config).datasets == ["letter"]


@pytest.mark.pipeline  # the config schema is checked by jsonschema, of the pipeline extra
def test_the_schema_refuses_a_misspelt_metric():
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    validate_config({**config, "summary_metrics": ["failure_auroc"]}, SCHEMA)
    with pytest.raises(
        ConfigError, match=r"^config summary_metrics\.0: 'failure_aurc' is invalid: 'failure_aurc'"
    ):
        validate_config({**config, "summary_metrics": ["failure_aurc"]}, SCHEMA)
    # the schema's names are the registry's: a metric registered later is offered too
    items = SCHEMA["properties"]["summary_metrics"]["items"]["enum"]
    assert items == list(FAILURE_METRICS)
