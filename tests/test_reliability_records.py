"""A file's content record says what it is (its role: experiment, dataset, split, table), and the rule
that reads it expects the role its input path names: a file copied with its record over another's
is refused, naming both, where its checksum alone would accept it. Run through the workflow's own
scripts (experiment_tables, collect_summary), with Snakemake's ``snakemake`` object stood in."""

import runpy
import shutil
import sys
import types

import numpy as np
import pandas as pd
import pytest
from support import REPO

from rejectopt._io import (
    IntermediateFileError,
    csv_record_path,
    load_npz,
    save_csv,
    write_csv,
)
from rejectopt.pipeline.experiments._contract import run_dataset
from rejectopt.pipeline.report import read_summary
from rejectopt.pipeline.tables import RUN_SUMMARY, dataset_summary_role, split_file_role

SCRIPTS = REPO / "workflow" / "scripts"
FORCERUN = "snakemake --forcerun"


@pytest.fixture
def run_script(monkeypatch, tmp_path):
    """Run a workflow script as Snakemake does: ``snakemake`` in its globals, its folder importable
    (its log routing stood in, so the test process's logging is left as it was)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    monkeypatch.setitem(sys.modules, "_logging", types.SimpleNamespace(log_to=lambda path: None))

    def run(name, **snakemake):
        job = types.SimpleNamespace(log=[str(tmp_path / f"{name}.log")], **snakemake)
        return runpy.run_path(str(SCRIPTS / f"{name}.py"), init_globals={"snakemake": job})

    return run


@pytest.fixture
def iris_files(tmp_path):
    """Iris prepared and split twice, as the pipeline stages them."""
    from sklearn.datasets import load_iris

    from rejectopt._io import save_npz
    from rejectopt.splits import make_splits, save_splits

    X, y = load_iris(return_X_y=True)
    save_npz(tmp_path / "data.npz", X=X, y=y)
    save_splits(tmp_path / "splits.npz", make_splits(y, n_splits=2), y=y)
    return tmp_path / "data.npz", tmp_path / "splits.npz"


def _experiment():
    """A user's experiment of the contract: each split's Tst size, and a curve of it."""

    def run_split(inputs, settings):
        from rejectopt.pipeline.experiments import SplitResult

        size = len(inputs.parts["tst"]) + inputs.split  # differs between the splits
        return SplitResult(
            pd.DataFrame({"method": ["tst"], "value": [size]}),
            curves={"size": np.array([size])},
        )

    return types.SimpleNamespace(
        NAME="sizes",
        settings=lambda config: {},
        run_split=run_split,
        aggregate=lambda rows, settings: {"total": rows.groupby("method")[["value"]].sum()},
    )


def _copy(source, target):
    """``source`` and its content record over ``target``'s: what the checksum alone accepts."""
    shutil.copyfile(source, target)
    if csv_record_path(source).exists():
        shutil.copyfile(csv_record_path(source), csv_record_path(target))


@pytest.fixture
def split_files(iris_files, tmp_path, monkeypatch):
    """The experiment's rows and curves of iris's two splits, where the pipeline puts them."""
    experiment = _experiment()
    folder = tmp_path / "results" / "experiments" / experiment.NAME / "iris"
    files = {k: (folder / f"split_{k}.csv", folder / f"split_{k}.npz") for k in (0, 1)}
    run_dataset(experiment, {}, "iris", "classification", *iris_files, files)
    # experiment_tables loads the experiment by its config key, as a module of the contract
    module = types.ModuleType("sizes_experiment")
    module.__dict__.update(vars(experiment))
    monkeypatch.setitem(sys.modules, "sizes_experiment", module)
    return experiment, files


def _tables(run_script, rows, out):
    run_script(
        "experiment_tables",
        config={"experiments": ["sizes_experiment"]},
        wildcards=types.SimpleNamespace(experiment="sizes"),
        input=types.SimpleNamespace(rows=[str(p) for p in rows]),
        output=[str(out)],
    )


def test_each_split_file_records_its_experiment_dataset_and_split(split_files):
    _, files = split_files
    rows, curves = files[1]
    assert split_file_role(rows) == {"dataset": "iris", "split": 1}
    assert '"provenance": {"dataset": "iris", "experiment": "sizes", "split": 1}' in (
        csv_record_path(rows).read_text()
    )
    assert load_npz(curves).provenance == {"dataset": "iris", "experiment": "sizes", "split": 1}


def test_a_split_copied_over_another_is_refused_by_experiment_tables_naming_both(
    split_files, run_script, tmp_path
):
    _, files = split_files
    rows = [files[0][0], files[1][0]]
    _tables(run_script, rows, tmp_path / "tables")  # as written: accepted
    total = pd.read_csv(tmp_path / "tables" / "total.csv", index_col=0)
    assert total.loc["tst", "value"] == 60 + 1
    _copy(files[0][0], files[1][0])
    with pytest.raises(IntermediateFileError) as err:
        _tables(run_script, rows, tmp_path / "again")
    message = str(err.value)
    assert message.startswith(
        f"{files[1][0]}: made from split 0, but this step's is 1: the file is stale (made from other "
        "inputs) or copied from another split's file"
    )
    assert f"{FORCERUN} {files[1][0]}" in message
    assert not (tmp_path / "again").exists()
    # the curves too: split 0's over split 1's is refused by a reader that expects split 1's
    _copy(files[0][1], files[1][1])
    with pytest.raises(IntermediateFileError, match=r"made from split 0, but this step's is 1"):
        load_npz(files[1][1], expect=split_file_role(files[1][1]))


def test_another_datasets_split_copied_over_is_refused_naming_both(
    split_files, run_script, tmp_path
):
    _, files = split_files
    wine = files[0][0].parent.with_name("wine") / "split_0.csv"
    wine.parent.mkdir()
    _copy(files[0][0], wine)
    with pytest.raises(
        IntermediateFileError, match=r"made from dataset 'iris', but this step's is 'wine'"
    ):
        _tables(run_script, [files[0][0], wine], tmp_path / "tables")


def test_another_experiments_rows_are_refused(split_files, run_script, tmp_path):
    """Rows of the same dataset and split but of another experiment, copied into this one's folder."""
    _, files = split_files
    other = tmp_path / "elsewhere" / "iris" / "split_0.csv"
    save_csv(
        pd.read_csv(files[0][0]),
        other,
        provenance={"experiment": "guarantees", "dataset": "iris", "split": 0},
    )
    _copy(other, files[0][0])
    with pytest.raises(
        IntermediateFileError,
        match=r"made from experiment 'guarantees', but this step's is 'sizes'",
    ):
        _tables(run_script, [files[0][0], files[1][0]], tmp_path / "tables")


def test_a_record_of_the_previous_release_without_a_role_is_accepted_and_still_guards_the_content(
    split_files, run_script, tmp_path
):
    """A finished run's files carry records without a role: read as 'role unknown' (their jobs are
    not rerun for it), while an edit is still refused by the checksum."""
    _, files = split_files
    for rows, _ in files.values():  # as the previous release wrote them: no provenance
        save_csv(pd.read_csv(rows), rows)
    rows = [files[0][0], files[1][0]]
    _tables(run_script, rows, tmp_path / "tables")
    assert pd.read_csv(tmp_path / "tables" / "total.csv", index_col=0).loc["tst", "value"] == 61
    files[1][0].write_text(files[1][0].read_text().replace("31", "99"))
    with pytest.raises(IntermediateFileError, match="its content changed after it was written"):
        _tables(run_script, rows, tmp_path / "again")


# --- the dataset summaries and the run's summary ---------------------------------------------------


@pytest.fixture
def summaries(tmp_path):
    """Two datasets' summaries as their rules write them (results/datasets/<dataset>/summary.csv)."""
    paths = {}
    for dataset, aurc in (("abalone", 12.5), ("shuttle", 0.0075)):
        rows = pd.DataFrame(
            {
                "task": "classification",
                "dataset": dataset,
                "split": [0, 0],
                "classifier": "lr",
                "score": ["mcp", "sele"],
                "aurc": [aurc, aurc / 2],
                "risk_full": [1.0, 1.0],
            }
        )
        paths[dataset] = tmp_path / "results" / "datasets" / dataset / "summary.csv"
        save_csv(rows, paths[dataset], provenance=dataset_summary_role(dataset))
    return paths


def _collect(run_script, summaries, out):
    run_script(
        "collect_summary", input=[str(p) for p in summaries.values()], output=[str(out)], params={}
    )


def test_collect_summary_refuses_one_datasets_summary_copied_over_anothers(
    summaries, run_script, tmp_path
):
    out = tmp_path / "results" / "summary.csv"
    _collect(run_script, summaries, out)
    collected = read_summary(out, recorded=True, expect=RUN_SUMMARY)
    assert sorted(set(collected["dataset"])) == ["abalone", "shuttle"]
    out.unlink()
    _copy(summaries["abalone"], summaries["shuttle"])
    with pytest.raises(IntermediateFileError) as err:
        _collect(run_script, summaries, out)
    assert str(err.value).startswith(
        f"{summaries['shuttle']}: made from dataset 'abalone', but this step's is 'shuttle'"
    )
    assert f"{FORCERUN} {summaries['shuttle']}" in str(err.value)
    assert not out.exists()  # not 12 abalone rows and no shuttle row


def test_the_table_rules_refuse_a_dataset_summary_copied_over_the_runs(summaries, tmp_path):
    out = tmp_path / "results" / "summary.csv"
    _copy(summaries["abalone"], out)
    with pytest.raises(
        IntermediateFileError, match=r"made from summary 'dataset', but this step's is 'run'"
    ):
        read_summary(out, recorded=True, expect=RUN_SUMMARY)


def test_the_recorded_csv_bytes_are_those_of_a_plain_write(summaries, tmp_path):
    """The records live beside the files: the CSV bytes (the demo's are compared byte for byte) stay."""
    frame = pd.read_csv(summaries["shuttle"])
    write_csv(frame, tmp_path / "plain.csv")
    assert summaries["shuttle"].read_bytes() == (tmp_path / "plain.csv").read_bytes()
