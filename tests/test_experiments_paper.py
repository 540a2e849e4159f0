"""Tests for rejectopt.pipeline.experiments.paper: the file-in / file-out steps the pipeline's rules call."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from rejectopt._io import save_npz
from rejectopt.datasets import load_prepared
from rejectopt.metrics import aurc, task_loss
from rejectopt.pipeline.experiments.paper import (
    SCORE_FIELDS,
    learn_score,
    run_classifier,
    run_classifiers,
    run_scores,
    score_key,
    settings,
    summarize_dataset,
)
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
        run_classifier(
            root / "data.npz",
            root / "splits.npz",
            k,
            "lr",
            (1, 10),
            0,
            classifiers[k],
            dataset="digits",
        )
    return root, classifiers


def test_one_job_trains_each_split_as_trained_alone(digits_run, tmp_path):
    root, alone = digits_run
    together = {k: tmp_path / f"lr_{k}.npz" for k in (1, 0)}
    chosen = run_classifiers(
        root / "data.npz", root / "splits.npz", together, "lr", (1, 10), 0, dataset="digits"
    )
    assert sorted(chosen) == [0, 1]
    for k in (0, 1):
        with np.load(together[k]) as held, np.load(alone[k]) as single:
            assert (
                sorted(held.files)
                == sorted(single.files)
                == ["C", "C_grid", "baseline", "proba", "val_error", "y_pred"]
            )
            for name in held.files:
                np.testing.assert_array_equal(held[name], single[name])
            assert chosen[k]["C"] == float(held["C"])
            assert list(chosen[k]["val_error"].values()) == held["val_error"].tolist()
    # the two splits differ: each split is trained on its own Trn1
    with np.load(together[0]) as a, np.load(together[1]) as b:
        assert not np.array_equal(a["proba"], b["proba"])


def test_one_scores_file_holds_each_score_and_split_as_learned_alone(digits_run):
    root, classifiers = digits_run
    chosen = run_scores(
        root / "data.npz",
        root / "splits.npz",
        classifiers,
        "classification",
        ["sele", "tcp"],
        C_SCORE,
        0,
        root / "scores.npz",
        dataset="digits",
        classifier="lr",
    )
    X, y = load_prepared(root / "data.npz")
    with np.load(root / "scores.npz", allow_pickle=False) as held:
        assert sorted(held.files) == sorted(
            score_key(s, k, f) for s in ("sele", "tcp") for k in (0, 1) for f in SCORE_FIELDS
        )
        for k, path in classifiers.items():
            parts = load_split(root / "splits.npz", k)
            with np.load(path) as clf:
                y_pred, proba = clf["y_pred"], clf["proba"]
            # tcp alone, without sele learned before it in the same process: the same bytes
            alone = learn_score(
                X,
                y,
                parts,
                y_pred,
                proba,
                "classification",
                "tcp",
                C_SCORE,
                0,
                k,
                dataset="digits",
                classifier="lr",
            )
            for field in SCORE_FIELDS:
                np.testing.assert_array_equal(held[score_key("tcp", k, field)], alone[field])
            # the Val2 AuRC of the chosen C is the smallest of the grid
            val_aurc = held[score_key("sele", k, "val_aurc")]
            assert (
                held[score_key("sele", k, "C")]
                == held[score_key("sele", k, "C_grid")][np.argmin(val_aurc)]
            )
            assert chosen[("sele", k)]["C"] == float(held[score_key("sele", k, "C")])
            assert held[score_key("sele", k, "uncertainty")].shape == parts["tst"].shape


def test_summary_reads_the_scores_file(digits_run):
    root, classifiers = digits_run
    run_scores(
        root / "data.npz",
        root / "splits.npz",
        classifiers,
        "classification",
        ["reg"],
        C_SCORE,
        0,
        root / "reg.npz",
        dataset="digits",
        classifier="lr",
    )
    summary = summarize_dataset(
        "digits",
        "classification",
        root / "data.npz",
        root / "splits.npz",
        {("lr", k): p for k, p in classifiers.items()},
        {("lr", "reg", k): root / "reg.npz" for k in classifiers},
    )
    assert sorted(summary["score"]) == ["mcp", "mcp", "reg", "reg"]
    _, y = load_prepared(root / "data.npz")
    tst = load_split(root / "splits.npz", 1)["tst"]
    with np.load(classifiers[1]) as clf, np.load(root / "reg.npz") as reg:
        expected = aurc(
            task_loss("classification", y[tst], clf["y_pred"][tst]),
            reg[score_key("reg", 1, "uncertainty")],
        )
    row = summary[(summary["score"] == "reg") & (summary["split"] == 1)].iloc[0]
    assert row["aurc"] == expected


def test_the_config_aurc_convention_fills_the_summarys_aurc_column(digits_run):
    root, classifiers = digits_run
    args = (
        "digits",
        "classification",
        root / "data.npz",
        root / "splits.npz",
        {("lr", k): p for k, p in classifiers.items()},
        {},
    )
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
        assert row["aurc"] == pytest.approx(
            100 * aurc(errors, mcp, convention="torch-uncertainty"), rel=1e-12
        )
        assert row["aurc"] != pytest.approx(
            paper[paper["split"] == split].iloc[0]["aurc"], rel=1e-6
        )
    with pytest.raises(ValueError, match="config aurc_convention: 'sklearn' is not a convention"):
        settings({"aurc_convention": "sklearn"})


def test_a_classifier_file_of_another_split_is_refused(digits_run):
    from rejectopt._io import IntermediateFileError
    from rejectopt.pipeline.experiments.paper import load_classifier_file

    _, classifiers = digits_run
    with load_classifier_file(classifiers[1], split=1) as clf:
        assert clf["y_pred"].shape == (1797,)
    with pytest.raises(
        IntermediateFileError,
        match=r"lr_1.npz: made from split 1, but this step's is 0: the file is stale",
    ):
        load_classifier_file(classifiers[1], split=0)


def test_settings_fill_defaults_and_name_an_unregistered_classifier():
    config = {
        "classifiers": {"classification": ["lr"]},
        "scores": {"lr": ["sele", "reg"]},
        "C_score": [1.0, 10.0],
    }
    assert settings(config) == {
        "classifiers": ["lr"],
        "scores": {"lr": ["sele", "reg"]},
        "C_classifier": [1, 10, 100, 1000],
        "C_score": [1.0, 10.0],
        "sele_chunk_size": 500,
        "seed": 0,
        "aurc_convention": "paper",
    }
    with pytest.raises(
        ValueError, match=r"config classifiers: 'rf' not registered \(registered: lr, svm"
    ):
        settings({"classifiers": {"classification": ["lr", "rf"]}})


def test_the_contract_gives_the_summary_rows_and_one_table_per_classifier(digits_run):
    """run_split from the staged files = summarize_dataset's rows of that split; aggregate = metric_table."""
    from rejectopt.pipeline.experiments import SplitInputs
    from rejectopt.pipeline.experiments.paper import aggregate, run_split
    from rejectopt.pipeline.tables import metric_table, table_specs

    root, classifiers = digits_run
    run_scores(
        root / "data.npz",
        root / "splits.npz",
        classifiers,
        "classification",
        ["reg"],
        C_SCORE,
        0,
        root / "contract.npz",
        dataset="digits",
        classifier="lr",
    )
    chosen = settings({"classifiers": {"classification": ["lr"]}, "scores": {"lr": ["reg"]}})
    summary = summarize_dataset(
        "digits",
        "classification",
        root / "data.npz",
        root / "splits.npz",
        {("lr", k): p for k, p in classifiers.items()},
        {("lr", "reg", k): root / "contract.npz" for k in classifiers},
    )
    inputs = SplitInputs(
        "digits",
        1,
        "classification",
        0,
        root / "data.npz",
        root / "splits.npz",
        {"classifier/lr": classifiers[1], "scores/lr": root / "contract.npz"},
    )
    rows = run_split(inputs, chosen).rows
    assert rows.equals(summary[summary["split"] == 1].reset_index(drop=True))
    tables = aggregate(summary, chosen)
    assert list(tables) == ["table3a"]
    assert tables["table3a"].equals(
        metric_table(summary, table_specs({"lr": ["reg"]}, ["lr"])["table3a"])
    )
    assert tables["table3a"].loc["digits", ("n_splits", "")] == 2


# --------------------------------------------------------------------------- config table_intervals
def _resampled_aurc_by_hand(samples, n_resamples, seed):
    """What ``aurc_resamples`` computes, the slow way: per resample, one draw of the union of the
    samples' rows (the same generator call, one block), each sample's rows repeated by their
    multiplicity in the sample's order, then rejectopt.metrics.aurc on the repeated rows."""
    union = np.unique(np.concatenate([rows for rows, _, _ in samples]))
    draws = np.random.default_rng(seed).integers(
        0, union.size, size=(n_resamples, union.size), dtype=np.intp
    )
    values = np.empty((len(samples), n_resamples))
    for b in range(n_resamples):
        counts = np.bincount(draws[b], minlength=union.size)
        for i, (rows, loss, uncertainty) in enumerate(samples):
            keep = np.repeat(np.arange(rows.size), counts[np.searchsorted(union, rows)])
            values[i, b] = aurc(np.asarray(loss)[keep], np.asarray(uncertainty)[keep])
    return values


def test_interval_resamples_equal_aurc_of_the_repeated_rows():
    """Two overlapping Tst parts, tied uncertainties, 0/100 and ordinal losses: each resample's AuRC
    equals eq. (27) on the drawn rows, a row in both parts counting in both."""
    from rejectopt.pipeline.experiments.paper._aurc_intervals import aurc_resamples

    rng = np.random.default_rng(4)
    first, second = (
        np.sort(rng.choice(80, 40, replace=False)),
        np.sort(rng.choice(80, 40, replace=False)),
    )
    assert 0 < np.intersect1d(first, second).size < 40
    samples = [
        (first, 100.0 * (rng.random(40) < 0.3), rng.integers(0, 6, 40).astype(float)),
        (second, rng.integers(0, 4, 40).astype(float), rng.random(40)),
        (second, 100.0 * (rng.random(40) < 0.2), np.zeros(40)),
    ]  # one tie group: the order decides
    values = aurc_resamples(samples, 300, 11)
    np.testing.assert_allclose(values, _resampled_aurc_by_hand(samples, 300, 11), rtol=1e-10)
    assert np.array_equal(values, aurc_resamples(samples, 300, 11))  # seeded
    with pytest.raises(
        ValueError,
        match="drew none of a split's rows: its Tst part is too small for an interval; "
        "set config table_intervals: false",
    ):
        aurc_resamples(
            [(np.arange(60), np.zeros(60), np.zeros(60)), (np.array([3]), [1.0], [0.0])], 20, 0
        )


def test_summary_intervals_known_answer(digits_run):
    """summarize_dataset(intervals=True): the summary as without them, then per split the 2.5 / 97.5 %
    percentiles of its 1,000 resampled AuRC and, per classifier and score, those of the resamples'
    mean over the splits; seeded by the run's seed and the dataset."""
    from rejectopt._checks import derive_seed
    from rejectopt.pipeline.tables import INTERVAL_COLUMNS, INTERVAL_RESAMPLES

    root, classifiers = digits_run
    run_scores(
        root / "data.npz",
        root / "splits.npz",
        classifiers,
        "classification",
        ["reg"],
        C_SCORE,
        0,
        root / "intervals.npz",
        dataset="digits",
        classifier="lr",
    )
    args = (
        "digits",
        "classification",
        root / "data.npz",
        root / "splits.npz",
        {("lr", k): p for k, p in classifiers.items()},
        {("lr", "reg", k): root / "intervals.npz" for k in classifiers},
    )
    plain, summary = summarize_dataset(*args), summarize_dataset(*args, intervals=True, seed=3)
    assert list(summary.columns) == [*plain.columns, *INTERVAL_COLUMNS]
    assert summary[plain.columns].equals(plain)
    _, y = load_prepared(root / "data.npz")
    samples = []
    for split in (0, 1):
        tst = load_split(root / "splits.npz", split)["tst"]
        with np.load(classifiers[split]) as clf, np.load(root / "intervals.npz") as reg:
            loss = task_loss("classification", y[tst], clf["y_pred"][tst])
            samples += [
                (tst, loss, clf["baseline"][tst]),
                (tst, loss, reg[score_key("reg", split, "uncertainty")]),
            ]
    assert list(zip(summary["split"], summary["score"])) == [
        (0, "mcp"),
        (0, "reg"),
        (1, "mcp"),
        (1, "reg"),
    ]
    values = _resampled_aurc_by_hand(
        samples, INTERVAL_RESAMPLES, derive_seed(3, "digits", "table_intervals")
    )
    low, high = np.quantile(values, [0.025, 0.975], axis=1)
    np.testing.assert_allclose(summary["aurc_low"], low, rtol=1e-9)
    np.testing.assert_allclose(summary["aurc_high"], high, rtol=1e-9)
    for i, j in ((0, 2), (1, 3)):  # the rows of one score in splits 0 and 1
        expected = np.quantile((values[i] + values[j]) / 2, [0.025, 0.975])
        for row in (i, j):
            # as floats: pandas < 3 gives a row of a mixed-type frame as an object Series
            np.testing.assert_allclose(
                summary.loc[row, ["aurc_mean_low", "aurc_mean_high"]].to_numpy(float),
                expected,
                rtol=1e-9,
            )
    assert (
        (summary["aurc_low"] < summary["aurc"]) & (summary["aurc"] < summary["aurc_high"])
    ).all()
    # the mean of two splits varies less than each: its interval is narrower than theirs on average
    width = summary["aurc_high"] - summary["aurc_low"]
    assert (
        (summary["aurc_mean_high"] - summary["aurc_mean_low"])
        < width.groupby(summary["score"]).transform("mean")
    ).all()
    with pytest.raises(
        ValueError,
        match=r"digits: config table_intervals are intervals of eq. \(27\) AuRC, but "
        r"aurc_convention is 'geifman'",
    ):
        summarize_dataset(*args, "geifman", intervals=True)


def test_interval_of_the_mean_over_splits_covers_at_its_level():
    """Coverage on a population with a known AuRC: x ~ U(0, 1), uncertainty x, loss 1 with
    probability x; eq. (27) on n rows has expectation (n + 3) / (4 (n + 1)) (the i-th smallest
    of n uniforms has mean i / (n + 1)), which a mean over splits of n-row Tst parts estimates.
    Five random Tst parts of 100 of 500 rows (they share rows, as the pipeline's do): the 95 %
    intervals of the mean, and of a split, hold it in 200 simulated datasets within 3 binomial
    standard errors of 95 % (measured over 1,000: 94.9 %; resampling each split on its own instead
    gave about 84 %, since the shared rows make the splits' AuRC move together)."""
    from rejectopt.pipeline.experiments.paper._aurc_intervals import aurc_resamples

    rng = np.random.default_rng(0)
    n_rows, n_test, n_splits, n_datasets = 500, 100, 5, 200
    x = rng.random((n_datasets, n_rows))
    loss = (rng.random((n_datasets, n_rows)) < x).astype(float)
    tst = np.sort(
        np.argsort(rng.random((n_datasets, n_splits, n_rows)), axis=2)[:, :, :n_test], axis=2
    )
    truth = (n_test + 3) / (4 * (n_test + 1))
    held_mean = held_split = 0
    for r in range(n_datasets):
        values = aurc_resamples([(rows, loss[r, rows], x[r, rows]) for rows in tst[r]], 400, r)
        low, high = np.quantile(values.mean(axis=0), [0.025, 0.975])
        held_mean += low <= truth <= high
        low, high = np.quantile(values[0], [0.025, 0.975])
        held_split += low <= truth <= high
    tolerance = 3 * np.sqrt(0.95 * 0.05 / n_datasets)
    assert abs(held_mean / n_datasets - 0.95) < tolerance
    assert abs(held_split / n_datasets - 0.95) < tolerance


def test_the_summarize_dataset_rule_runs_through_the_one_rule_entry(digits_run, tmp_path):
    """The rule's job (rejectopt.pipeline.run_rule, by the rule's name, as the workflow's one
    experiment script calls it) writes summarize_dataset's frame with its content record, and the
    record is what a later rule checks."""
    from rejectopt.pipeline import run_rule
    from rejectopt.pipeline.tables import dataset_summary_role, load_csv

    root, classifiers = digits_run
    run_scores(
        root / "data.npz",
        root / "splits.npz",
        classifiers,
        "classification",
        ["reg"],
        C_SCORE,
        0,
        tmp_path / "scores.npz",
        dataset="digits",
        classifier="lr",
    )
    params = {
        "task": "classification",
        "classifier_files": {("lr", k): p for k, p in classifiers.items()},
        "score_files": {("lr", "reg", k): tmp_path / "scores.npz" for k in classifiers},
        "aurc_convention": "paper",
        "table_intervals": False,
        "seed": 0,
    }
    out = tmp_path / "summary.csv"
    written = run_rule(
        "rejectopt_summarize_dataset",  # as a Snakefile importing the workflow as a module names it
        {"data": str(root / "data.npz"), "splits": str(root / "splits.npz")},
        {"summary": str(out)},
        {"dataset": "digits"},
        1,
        params,
    )
    direct = summarize_dataset(
        "digits",
        "classification",
        root / "data.npz",
        root / "splits.npz",
        params["classifier_files"],
        params["score_files"],
    )
    assert written.equals(direct)
    assert sorted(written["split"].unique()) == [0, 1] and set(written["score"]) >= {"reg", "mcp"}
    read = load_csv(out)  # checked against its record
    assert read.equals(pd.read_csv(out))
    # pandas' default float parser (the floors' pandas) may read a written repr an ulp away
    np.testing.assert_allclose(read["aurc"], direct["aurc"], rtol=1e-14, atol=0)
    # the record names the dataset: collect_summary refuses it as another dataset's summary
    assert load_csv(out, expect=dataset_summary_role("digits")).equals(read)
    with pytest.raises(ValueError, match=r"made from dataset 'digits', but this step's is 'iris'"):
        load_csv(out, expect=dataset_summary_role("iris"))
    out.write_text(out.read_text().replace("digits", "digitz", 1))
    with pytest.raises(ValueError, match="summary.csv"):
        load_csv(out)
