"""Tests for rejectopt.experiments.paper: the file-in / file-out steps the pipeline's rules call."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from rejectopt._io import save_npz
from rejectopt.datasets import load_prepared
from rejectopt.experiments.paper import (
    SCORE_FIELDS,
    learn_score,
    run_classifier,
    run_classifiers,
    run_scores,
    score_key,
    settings,
    summarize_dataset,
    task_loss,
)
from rejectopt.metrics import aurc
from rejectopt.splits import load_split, make_splits, save_splits

C_SCORE = (0, 1, 10)


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """Digits (1,797 x 64, 10 classes), 2 splits, LR on each: the inputs of learn_score."""
    root = tmp_path_factory.mktemp("experiment")
    X, y = load_digits(return_X_y=True)
    save_npz(root / "data.npz", X=X.astype(float), y=y.astype(np.int64))
    save_splits(root / "splits.npz", make_splits(y, n_splits=2, seed=0, dataset="digits"))
    classifiers = {}
    for k in (0, 1):
        classifiers[k] = root / f"lr_{k}.npz"
        run_classifier(root / "data.npz", root / "splits.npz", k, "lr", (1, 10), 0, classifiers[k], dataset="digits")
    return root, classifiers


def test_one_job_trains_each_split_as_trained_alone(digits_run, tmp_path):
    root, alone = digits_run
    together = {k: tmp_path / f"lr_{k}.npz" for k in (1, 0)}
    chosen = run_classifiers(root / "data.npz", root / "splits.npz", together, "lr", (1, 10), 0, dataset="digits")
    assert sorted(chosen) == [0, 1]
    for k in (0, 1):
        with np.load(together[k]) as held, np.load(alone[k]) as single:
            assert sorted(held.files) == sorted(single.files) == ["C", "C_grid", "baseline", "proba", "val_error", "y_pred"]
            for name in held.files:
                np.testing.assert_array_equal(held[name], single[name])
            assert chosen[k]["C"] == float(held["C"])
            assert list(chosen[k]["val_error"].values()) == held["val_error"].tolist()
    # the two splits differ: each split is trained on its own Trn1
    with np.load(together[0]) as a, np.load(together[1]) as b:
        assert not np.array_equal(a["proba"], b["proba"])


def test_one_scores_file_holds_each_score_and_split_as_learned_alone(digits_run):
    root, classifiers = digits_run
    chosen = run_scores(root / "data.npz", root / "splits.npz", classifiers, "classification", ["sele", "tcp"],
                        C_SCORE, 0, root / "scores.npz", dataset="digits", classifier="lr")
    X, y = load_prepared(root / "data.npz")
    with np.load(root / "scores.npz", allow_pickle=False) as held:
        assert sorted(held.files) == sorted(score_key(s, k, f) for s in ("sele", "tcp") for k in (0, 1)
                                            for f in SCORE_FIELDS)
        for k, path in classifiers.items():
            parts = load_split(root / "splits.npz", k)
            with np.load(path) as clf:
                y_pred, proba = clf["y_pred"], clf["proba"]
            # tcp alone, without sele learned before it in the same process: the same bytes
            alone = learn_score(X, y, parts, y_pred, proba, "classification", "tcp", C_SCORE, 0, k,
                                dataset="digits", classifier="lr")
            for field in SCORE_FIELDS:
                np.testing.assert_array_equal(held[score_key("tcp", k, field)], alone[field])
            # the Val2 AuRC of the chosen C is the smallest of the grid
            val_aurc = held[score_key("sele", k, "val_aurc")]
            assert held[score_key("sele", k, "C")] == held[score_key("sele", k, "C_grid")][np.argmin(val_aurc)]
            assert chosen[("sele", k)]["C"] == float(held[score_key("sele", k, "C")])
            assert held[score_key("sele", k, "uncertainty")].shape == parts["tst"].shape


def test_summary_reads_the_scores_file(digits_run):
    root, classifiers = digits_run
    run_scores(root / "data.npz", root / "splits.npz", classifiers, "classification", ["reg"], C_SCORE, 0,
               root / "reg.npz", dataset="digits", classifier="lr")
    summary = summarize_dataset("digits", "classification", root / "data.npz", root / "splits.npz",
                                {("lr", k): p for k, p in classifiers.items()},
                                {("lr", "reg", k): root / "reg.npz" for k in classifiers})
    assert sorted(summary["score"]) == ["mcp", "mcp", "reg", "reg"]
    _, y = load_prepared(root / "data.npz")
    tst = load_split(root / "splits.npz", 1)["tst"]
    with np.load(classifiers[1]) as clf, np.load(root / "reg.npz") as reg:
        expected = aurc(task_loss("classification", y[tst], clf["y_pred"][tst]), reg[score_key("reg", 1, "uncertainty")])
    row = summary[(summary["score"] == "reg") & (summary["split"] == 1)].iloc[0]
    assert row["aurc"] == expected


def test_the_config_aurc_convention_fills_the_summarys_aurc_column(digits_run):
    root, classifiers = digits_run
    args = ("digits", "classification", root / "data.npz", root / "splits.npz",
            {("lr", k): p for k, p in classifiers.items()}, {})
    chosen = settings({"aurc_convention": "torch-uncertainty"})["aurc_convention"]
    paper, other = summarize_dataset(*args), summarize_dataset(*args, chosen)
    # only the aurc column changes; it is torch-uncertainty's AURC of the 0/1 errors, in percent
    assert paper.drop(columns="aurc").equals(other.drop(columns="aurc"))
    _, y = load_prepared(root / "data.npz")
    for split in (0, 1):
        tst = load_split(root / "splits.npz", split)["tst"]
        with np.load(classifiers[split]) as clf:
            errors, mcp = (y[tst] != clf["y_pred"][tst]).astype(float), clf["baseline"][tst]
        row = other[other["split"] == split].iloc[0]
        assert row["aurc"] == pytest.approx(100 * aurc(errors, mcp, convention="torch-uncertainty"), rel=1e-12)
        assert row["aurc"] != pytest.approx(paper[paper["split"] == split].iloc[0]["aurc"], rel=1e-6)
    with pytest.raises(ValueError, match="config aurc_convention: 'sklearn' is not a convention"):
        settings({"aurc_convention": "sklearn"})


def test_a_classifier_file_of_another_split_is_refused(digits_run):
    from rejectopt._io import IntermediateFileError
    from rejectopt.experiments.paper import load_classifier_file

    _, classifiers = digits_run
    with load_classifier_file(classifiers[1], split=1) as clf:
        assert clf["y_pred"].shape == (1797,)
    with pytest.raises(IntermediateFileError, match=r"lr_1.npz: made from split 1, but this step's is 0: the file is stale"):
        load_classifier_file(classifiers[1], split=0)


def test_settings_fill_defaults_and_name_an_unregistered_classifier():
    config = {"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["sele", "reg"]}, "C_score": [1.0, 10.0]}
    assert settings(config) == {"classifiers": ["lr"], "scores": {"lr": ["sele", "reg"]},
                                "C_classifier": [1, 10, 100, 1000], "C_score": [1.0, 10.0],
                                "sele_chunk_size": 500, "seed": 0, "aurc_convention": "paper"}
    with pytest.raises(ValueError, match=r"config classifiers: 'rf' not registered \(registered: lr, svm"):
        settings({"classifiers": {"classification": ["lr", "rf"]}})


def test_the_contract_gives_the_summary_rows_and_one_table_per_classifier(digits_run):
    """run_split from the staged files = summarize_dataset's rows of that split; aggregate = aurc_table."""
    from rejectopt.experiments import SplitInputs
    from rejectopt.experiments.paper import aggregate, run_split
    from rejectopt.tables import aurc_table, table_specs

    root, classifiers = digits_run
    run_scores(root / "data.npz", root / "splits.npz", classifiers, "classification", ["reg"], C_SCORE, 0,
               root / "contract.npz", dataset="digits", classifier="lr")
    chosen = settings({"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["reg"]}})
    summary = summarize_dataset("digits", "classification", root / "data.npz", root / "splits.npz",
                                {("lr", k): p for k, p in classifiers.items()},
                                {("lr", "reg", k): root / "contract.npz" for k in classifiers})
    inputs = SplitInputs("digits", 1, "classification", 0, root / "data.npz", root / "splits.npz",
                         {"classifier/lr": classifiers[1], "scores/lr": root / "contract.npz"})
    rows = run_split(inputs, chosen).rows
    assert rows.equals(summary[summary["split"] == 1].reset_index(drop=True))
    tables = aggregate(summary, chosen)
    assert list(tables) == ["table3a"]
    assert tables["table3a"].equals(aurc_table(summary, table_specs({"lr": ["reg"]}, ["lr"])["table3a"]))
    assert tables["table3a"].loc["digits", ("n_splits", "")] == 2
