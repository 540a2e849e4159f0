"""The experiment contract (rejectopt.pipeline.experiments): its check, a user's module loaded by name, and a
toy experiment added as the user guide says, run by the pipeline's generic rules on real data."""

import sys
import types

import numpy as np
import pandas as pd
import pytest
from support import DEMO_MIRROR, REPO, snakemake

from rejectopt.metrics import risk_at_coverage, task_loss
from rejectopt.pipeline.experiments import SplitInputs, SplitResult, check_experiment
from rejectopt.pipeline.experiments._contract import (
    BUILT_IN,
    BUILT_IN_MODULES,
    Experiment,
    aggregate_files,
    built_in_experiments,
    load_experiments,
    run_dataset,
    split_inputs,
)
from rejectopt.splits import load_split

#: The user guide's page that shows how to add an experiment.
GUIDE = REPO / "docs" / "guide" / "extending.md"


def guide_block(first_line):
    """The guide's fenced code block that starts with ``first_line``."""
    text = GUIDE.read_text()
    start = text.index(f"\n{first_line}\n") + 1
    return text[start : text.index("```", start)]


#: The guide's experiment, as a user copies it.
TOY = guide_block(
    "# my_experiment.py: the selective risk of each classifier's own baseline at a fixed coverage"
)


@pytest.mark.parametrize("name", ["paper", "ood", "double_hinge", "landmarks"])
def test_every_built_in_experiment_keeps_the_contract(name):
    module = __import__(f"rejectopt.pipeline.experiments.{name}", fromlist=["NAME"])
    assert check_experiment(module) is module
    assert module.NAME == name and name in BUILT_IN


def test_the_registry_lists_every_built_in_experiment_as_an_experiment():
    registry = built_in_experiments()
    assert list(registry) == ["paper", "guarantees", "ood", "double_hinge", "landmarks"]
    for name, module in registry.items():
        assert isinstance(module, Experiment), name
        assert module.NAME == name and module.__name__ == BUILT_IN_MODULES[name]
    # the protocol is structural: what lacks a name of the contract is no Experiment
    assert not isinstance(types.SimpleNamespace(NAME="half", settings=dict), Experiment)


def test_load_experiments_with_built_in_puts_them_first_and_a_listed_one_once():
    listed = load_experiments(["rejectopt.pipeline.experiments.guarantees"], built_in=True)
    assert list(listed) == ["paper", "guarantees", "ood", "double_hinge", "landmarks"]
    assert load_experiments([]) == {}
    assert list(load_experiments(["rejectopt.pipeline.experiments.guarantees"])) == ["guarantees"]


def test_a_module_missing_part_of_the_contract_is_named(tmp_path):
    (tmp_path / "half_experiment.py").write_text(
        "NAME = 'half'\ndef settings(config):\n    return {}\n"
    )
    with pytest.raises(
        TypeError, match=r"'half_experiment': missing run_split, aggregate of the contract"
    ):
        load_experiments(["half_experiment"], search_dir=tmp_path)


def test_a_user_experiment_may_not_take_a_built_in_name(tmp_path):
    text = TOY.replace('NAME = "toy"', 'NAME = "ood"')
    (tmp_path / "clash_experiment.py").write_text(text)
    with pytest.raises(
        TypeError, match=r"NAME 'ood' is taken \(built in: paper, ood, double_hinge, landmarks"
    ):
        load_experiments(["clash_experiment"], search_dir=tmp_path)


def test_a_failing_user_module_is_named_with_its_error(tmp_path):
    (tmp_path / "broken_experiment.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(
        ImportError, match=r"module 'broken_experiment' failed to import: RuntimeError: boom"
    ):
        load_experiments(["broken_experiment"], search_dir=tmp_path)


def test_a_missing_staged_file_names_the_roles_the_rule_gave():
    inputs = SplitInputs(
        "abalone", 0, "ordinal", 0, "data.npz", "splits.npz", {"classifier/svor": "a.npz"}
    )
    with pytest.raises(
        KeyError,
        match=r"abalone split 0: no staged file 'scores/lr' \(the rule gives: classifier/svor\)",
    ):
        inputs.staged_file("scores/lr")


def test_a_config_entry_that_is_not_a_module_name_is_refused():
    with pytest.raises(
        ImportError, match=r"config experiments: 'my-experiment' is not a module name"
    ):
        load_experiments(["my-experiment"])


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


def test_split_inputs_share_the_data_read_once(iris_files):
    inputs = split_inputs(
        "iris", "classification", 0, *iris_files, [0, 1], staged={1: {"classifier/lr": "lr.npz"}}
    )
    assert sorted(inputs) == [0, 1] and inputs[0].staged == {} and inputs[1].X is inputs[0].X
    assert inputs[1].X.shape == (150, 4) and len(inputs[1].parts["tst"]) == 30


def count_experiment(table_name="total"):
    """An experiment that counts the Tst examples of each split."""
    import types

    def run_split(inputs, settings):
        return SplitResult(
            pd.DataFrame({"method": ["tst_size"], "value": [len(inputs.parts["tst"])]})
        )

    return types.SimpleNamespace(
        NAME="count",
        settings=lambda config: {},
        run_split=run_split,
        aggregate=lambda rows, settings: {table_name: rows.groupby("method")[["value"]].sum()},
    )


def test_a_user_experiment_writes_its_rows_per_split_and_its_tables(iris_files, tmp_path):
    """What the generic rules experiment_dataset and experiment_tables run."""
    files = {k: tmp_path / f"split_{k}.csv" for k in (0, 1)}
    results = run_dataset(
        count_experiment(), {"seed": 0}, "iris", "classification", *iris_files, files
    )
    assert results[1].rows.to_dict("list") == {
        "dataset": ["iris"],
        "split": [1],
        "method": ["tst_size"],
        "value": [30],
    }
    assert pd.read_csv(files[1]).equals(results[1].rows)
    tables = aggregate_files(count_experiment(), {}, files.values(), tmp_path / "tables")
    assert tables["total"].loc["tst_size", "value"] == 60
    # each table with its content record beside it, which the rule reading it checks
    assert sorted(path.name for path in (tmp_path / "tables").iterdir()) == [
        "total.csv",
        "total.csv.record",
    ]
    with pytest.raises(ValueError, match=r"experiment count: aggregate returned table name 'a/b'"):
        aggregate_files(count_experiment("a/b"), {}, files.values(), tmp_path / "other")


@pytest.mark.slow
def test_the_toy_experiment_runs_in_the_pipeline_as_the_guide_says(tmp_path):
    """The guide's route, its very text: the module file in the working directory, listed under
    experiments: in user.yaml. Its table must equal the numbers computed here from the staged
    classifier files; a curve it returns (here the Tst rows) must be in the split's .npz."""
    returned = "return SplitResult(pd.DataFrame(rows))"
    assert returned in TOY
    (tmp_path / "my_experiment.py").write_text(
        TOY.replace(returned, returned[:-1] + ', curves={"tst": tst})')
    )
    (tmp_path / "user.yaml").write_text(guide_block("# user.yaml\nexperiments: [my_experiment]"))
    run = snakemake(
        tmp_path,
        "--cores",
        "2",
        "--configfile",
        str(tmp_path / "user.yaml"),
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        "datasets=[sattelite,abalone]",
        "n_splits=2",
        "classifiers={classification: [lr], ordinal: [svor]}",
        "scores={lr: [sele], svor: [sele]}",
        "--",
        "results/experiments/toy/tables",
    )
    assert run.returncode == 0, run.stderr[-4000:]
    table = pd.read_csv(tmp_path / "results/experiments/toy/tables/risk.csv", index_col=[0, 1])
    for dataset, classifier, task in [
        ("sattelite", "lr", "classification"),
        ("abalone", "svor", "ordinal"),
    ]:
        data = np.load(tmp_path / f"results/data/{dataset}/data.npz")
        risks = []
        for split in (0, 1):
            tst = load_split(tmp_path / f"results/data/{dataset}/splits.npz", split)["tst"]
            clf = np.load(
                tmp_path / f"results/classifiers/{dataset}/{classifier}/split_{split}.npz"
            )
            loss = task_loss(task, data["y"][tst], clf["y_pred"][tst])
            risks.append(risk_at_coverage(loss, clf["baseline"][tst], 0.7))
            curves = np.load(tmp_path / f"results/experiments/toy/{dataset}/split_{split}.npz")
            np.testing.assert_array_equal(curves["tst"], tst)
        assert table.loc[(dataset, classifier), "mean"] == pytest.approx(np.mean(risks), rel=1e-12)
        assert table.loc[(dataset, classifier), "count"] == 2
    assert (
        (tmp_path / "results/experiments/toy/sattelite/split_1.csv")
        .read_text()
        .startswith("dataset,split,classifier,risk")
    )


# --- what an experiment returns, checked against the contract, each error naming the experiment ---


def returning(value=None, *, rows=None, curves=None, table=None):
    """An experiment named "odd" whose run_split returns ``value`` (or SplitResult(rows, curves)) and
    whose aggregate returns ``table``."""
    import types

    def run_split(inputs, settings):
        if rows is None:
            return value
        return SplitResult(
            rows(inputs) if callable(rows) else rows, curves if curves is not None else {}
        )

    return types.SimpleNamespace(
        NAME="odd",
        settings=lambda config: {},
        run_split=run_split,
        aggregate=lambda rows, settings: table,
    )


@pytest.mark.parametrize(
    "value, what",
    [
        (pd.DataFrame({"method": ["m"], "risk": [1.0]}), "a DataFrame, not a SplitResult"),
        (None, "None, not a SplitResult"),
    ],
)
def test_run_split_returning_something_else_is_named_with_the_contract(
    iris_files, tmp_path, value, what
):
    files = {0: tmp_path / "split_0.csv"}
    with pytest.raises(TypeError) as err:
        run_dataset(returning(value), {}, "iris", "classification", *iris_files, files)
    assert str(err.value).startswith(
        f"experiment odd: run_split on iris split 0 returned {what}; the contract "
        "(see rejectopt.pipeline.experiments) is SplitResult(rows, curves={...})"
    ), str(err.value)
    assert not files[0].exists() and not (tmp_path / "split_0.npz").exists()


def test_rows_that_are_not_a_dataframe_or_curves_that_are_not_numbers_are_named(
    iris_files, tmp_path
):
    with pytest.raises(
        TypeError,
        match=r"experiment odd: run_split on iris split 0 returned SplitResult\(rows=a "
        r"dict\), not a DataFrame",
    ):
        run_dataset(
            returning(rows={"risk": [1.0]}),
            {},
            "iris",
            "classification",
            *iris_files,
            {0: tmp_path / "a.csv"},
        )
    with pytest.raises(
        TypeError,
        match=r"experiment odd: run_split on iris split 0: curve 'names' is an array of "
        r"dtype object, not numbers",
    ):
        run_dataset(
            returning(
                rows=pd.DataFrame({"m": [1]}), curves={"names": np.array(["a", None], dtype=object)}
            ),
            {},
            "iris",
            "classification",
            *iris_files,
            {0: tmp_path / "b.csv"},
        )
    with pytest.raises(
        TypeError,
        match=r"experiment odd: run_split on iris split 0: curve name 'provenance' is not",
    ):
        run_dataset(
            returning(rows=pd.DataFrame({"m": [1]}), curves={"provenance": np.zeros(2)}),
            {},
            "iris",
            "classification",
            *iris_files,
            {0: tmp_path / "c.csv"},
        )
    assert list(tmp_path.glob("*.csv")) == []


def test_the_curves_go_to_the_splits_npz(iris_files, tmp_path):
    """As SplitResult says: each split's curves in its own .npz beside its rows, read back exactly;
    a split without curves gets an empty .npz (the rule's declared output)."""
    from rejectopt._io import load_npz

    def curves_of(inputs):
        tst = inputs.parts["tst"]
        return pd.DataFrame({"method": ["mean_y"], "value": [float(inputs.y[tst].mean())]})

    experiment = returning(
        rows=curves_of, curves={"coverage": np.linspace(0, 1, 5), "n": np.arange(3)}
    )
    files = {k: (tmp_path / f"split_{k}.csv", tmp_path / f"split_{k}.npz") for k in (0, 1)}
    run_dataset(experiment, {}, "iris", "classification", *iris_files, files)
    for k in (0, 1):
        arrays = load_npz(files[k][1])
        assert sorted(arrays) == ["coverage", "n"]
        np.testing.assert_array_equal(arrays["coverage"], [0, 0.25, 0.5, 0.75, 1])
        np.testing.assert_array_equal(arrays["n"], [0, 1, 2])
    run_dataset(
        count_experiment(),
        {},
        "iris",
        "classification",
        *iris_files,
        {0: tmp_path / "lone" / "split_0.csv"},
    )
    assert dict(load_npz(tmp_path / "lone" / "split_0.npz")) == {}


def test_a_nan_metric_is_kept_as_an_empty_cell_with_a_warning(iris_files, tmp_path):
    rows = pd.DataFrame(
        {"method": ["a", "b", "c"], "risk": [1.0, np.nan, np.nan], "auc": [0.5, 0.6, 0.7]}
    )
    files = {0: tmp_path / "split_0.csv"}
    with pytest.warns(
        RuntimeWarning,
        match=r"experiment odd: run_split on iris split 0: NaN in 'risk' \(2 of 3 "
        r"rows\); written as empty cells",
    ):
        run_dataset(returning(rows=rows), {}, "iris", "classification", *iris_files, files)
    assert files[0].read_text().splitlines()[1:] == [
        "iris,0,a,1.0,0.5",
        "iris,0,b,,0.6",
        "iris,0,c,,0.7",
    ]


def test_rows_with_their_own_split_or_dataset_column(iris_files, tmp_path):
    """Refused when they say another split or dataset than the one run (the pipeline's columns
    would be silently wrong); kept when they agree (the built-in experiments write them so)."""
    with pytest.raises(ValueError) as err:
        run_dataset(
            returning(rows=pd.DataFrame({"split": [7], "risk": [1.0]})),
            {},
            "iris",
            "classification",
            *iris_files,
            {0: tmp_path / "split_0.csv"},
        )
    assert str(err.value) == (
        "experiment odd: run_split on iris split 0: its rows carry their own 'split' column "
        "(values [7]), which is not 0; drop or rename that column: the pipeline adds 'split' "
        "to every row"
    )
    assert not (tmp_path / "split_0.csv").exists()
    with pytest.raises(
        ValueError,
        match=r"its rows carry their own 'dataset' column \(values \['wine'\]\), which is "
        r"not 'iris'",
    ):
        run_dataset(
            returning(rows=pd.DataFrame({"dataset": ["wine"], "risk": [1.0]})),
            {},
            "iris",
            "classification",
            *iris_files,
            {0: tmp_path / "split_0.csv"},
        )
    agreeing = pd.DataFrame({"dataset": ["iris"], "split": [1], "risk": [2.0]})
    results = run_dataset(
        returning(rows=agreeing), {}, "iris", "classification", *iris_files, {1: tmp_path / "s.csv"}
    )
    assert results[1].rows.to_dict("list") == {"dataset": ["iris"], "split": [1], "risk": [2.0]}


@pytest.mark.parametrize(
    "table, what",
    [
        (
            pd.DataFrame({"risk": [1.0, 2.0], "auc": [0.5, 0.6]}),
            "returned a DataFrame, not a dict of tables",
        ),
        ({"risk": 4.2}, "returned table 'risk' as a float, not a DataFrame"),
    ],
)
def test_an_aggregate_that_breaks_the_contract_is_named_and_writes_nothing(
    iris_files, tmp_path, table, what
):
    """Not one CSV per column: refused naming the experiment and the contract, the tables of the
    previous run left as they were."""
    files = {0: tmp_path / "split_0.csv"}
    run_dataset(count_experiment(), {}, "iris", "classification", *iris_files, files)
    out = tmp_path / "tables"
    aggregate_files(count_experiment(), {}, files.values(), out)
    before = (out / "total.csv").read_bytes()
    with pytest.raises(TypeError) as err:
        aggregate_files(returning(table=table), {}, files.values(), out)
    assert str(err.value) == (
        f"experiment odd: aggregate {what}; the contract (see rejectopt.pipeline.experiments) is a dict "
        f"of pandas DataFrames by table name, e.g. {{'risk': table}}; nothing was written to {out}"
    )
    assert (
        sorted(p.name for p in out.iterdir()) == ["total.csv", "total.csv.record"]
        and (out / "total.csv").read_bytes() == before
    )


# --- loading: a module that exits, a misspelt settings name, settings that raise ------------------


@pytest.mark.parametrize("code", [0, 3])
def test_sys_exit_while_imported_is_named_not_obeyed(tmp_path, code):
    (tmp_path / f"exiting_experiment_{code}.py").write_text(f"import sys\nsys.exit({code})\n")
    with pytest.raises(ImportError) as err:
        load_experiments([f"exiting_experiment_{code}"], search_dir=tmp_path)
    assert (
        str(err.value)
        == f"config experiments: module 'exiting_experiment_{code}' failed to import: SystemExit: {code}"
    )


def test_settings_are_checked_when_loaded_with_the_config(tmp_path, monkeypatch):
    (tmp_path / "my_experiment.py").write_text(TOY)
    monkeypatch.delitem(sys.modules, "my_experiment", raising=False)  # removed again after the test
    config = {"experiment_settings": {"toy": {"coverage": 0.7}}}
    assert list(load_experiments(["my_experiment"], tmp_path, config=config)) == ["toy"]
    with pytest.raises(ValueError) as err:
        load_experiments(
            ["my_experiment"], tmp_path, config={"experiment_settings": {"tyo": {"coverage": 0.7}}}
        )
    assert str(err.value) == (
        "config experiment_settings: unknown experiment 'tyo' (did you mean 'toy'?); its keys "
        "are the NAMEs of the experiments listed under experiments (loaded: toy)"
    )
    with pytest.raises(
        ValueError,
        match=r"config experiment_settings.ood: 'ood' is a built-in experiment, set by "
        r"its own block ood:",
    ):
        load_experiments(["my_experiment"], tmp_path, config={"experiment_settings": {"ood": {}}})
    with pytest.raises(ValueError) as err:
        load_experiments(
            ["my_experiment"], tmp_path, config={"experiment_settings": {"toy": {"coverage": 2}}}
        )
    assert str(err.value) == (
        "experiment toy (module 'my_experiment'): settings(config) raised ValueError: config "
        "experiment_settings.toy.coverage must lie in (0, 1], got 2.0; fix config "
        "experiment_settings.toy"
    )


def test_the_guide_says_an_experiment_is_trusted_code():
    text = " ".join(GUIDE.read_text().split())
    assert "runs as trusted code" in text and "may read and write any file" in text


@pytest.mark.slow
def test_a_misspelt_experiment_settings_name_stops_the_dry_run(tmp_path):
    """Refused while the workflow is read, before any job (no results folder), not run with its defaults."""
    (tmp_path / "my_experiment.py").write_text(TOY)
    (tmp_path / "user.yaml").write_text(
        "experiments: [my_experiment]\nexperiment_settings: {tyo: {coverage: 0.7}}\n"
    )
    run = snakemake(
        tmp_path,
        "-n",
        "--configfile",
        str(tmp_path / "user.yaml"),
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        "datasets=[abalone]",
        timeout=300,
    )
    assert run.returncode != 0
    assert (
        "config experiment_settings: unknown experiment 'tyo' (did you mean 'toy'?)"
        in run.stdout + run.stderr
    ), run.stderr[-3000:]
    assert not (tmp_path / "results").exists()


# --- an edited split, a module that ends the process or is interrupted, a built-in's name ----------


def test_an_edited_number_in_a_splits_rows_is_refused_when_aggregated(iris_files, tmp_path):
    """Not averaged into the tables silently: the rows carry their content record, as the .npz do."""
    from rejectopt.exceptions import IntermediateFileError

    files = {k: tmp_path / f"split_{k}.csv" for k in (0, 1)}
    run_dataset(count_experiment(), {"seed": 0}, "iris", "classification", *iris_files, files)
    assert (
        aggregate_files(count_experiment(), {}, files.values(), tmp_path / "tables")["total"].loc[
            "tst_size", "value"
        ]
        == 60
    )
    text = files[0].read_text()
    files[0].write_text(text.replace(",30\n", ",31\n"))
    assert files[0].read_text() != text
    with pytest.raises(IntermediateFileError) as err:
        aggregate_files(count_experiment(), {}, files.values(), tmp_path / "tables")
    assert str(err.value).startswith(f"{files[0]}: its content changed after it was written")
    assert f"snakemake --forcerun {files[0]}" in str(err.value)
    assert (
        pd.read_csv(tmp_path / "tables" / "total.csv", index_col=0).loc["tst_size", "value"] == 60
    )  # left as it was


@pytest.mark.parametrize("code", [0, 4])
def test_os_exit_while_imported_is_named_not_obeyed(tmp_path, code):
    """os._exit ends a process at once, with no exception: while a user's module is imported it is
    refused instead (this test going on is the proof), and os._exit is itself again afterwards."""
    import os

    real = os._exit
    (tmp_path / f"quitting_experiment_{code}.py").write_text(f"import os\nos._exit({code})\n")
    with pytest.raises(ImportError) as err:
        load_experiments([f"quitting_experiment_{code}"], search_dir=tmp_path)
    assert str(err.value) == (
        f"config experiments: module 'quitting_experiment_{code}' called os._exit({code}) while imported, which would "
        f"end planning (Snakemake itself) at once with exit status {code} and no message; a module is imported by the "
        "planning and by every job: take the call out of its top level"
    )
    assert os._exit is real and f"quitting_experiment_{code}" not in sys.modules


def test_a_keyboard_interrupt_while_imported_is_one_line_naming_the_module(tmp_path):
    (tmp_path / "interrupted_experiment.py").write_text("raise KeyboardInterrupt\n")
    with pytest.raises(ImportError) as err:
        load_experiments(["interrupted_experiment"], search_dir=tmp_path)
    assert str(err.value) == (
        "config experiments: module 'interrupted_experiment' was interrupted while imported "
        "(KeyboardInterrupt); nothing was run"
    )
    assert (
        err.value.__cause__ is None and err.value.__suppress_context__
    )  # no traceback of the user's module


def test_a_user_experiment_may_not_take_the_name_of_the_guarantees_experiment_listed_or_not(
    tmp_path,
):
    (tmp_path / "my_guarantees.py").write_text(TOY.replace('NAME = "toy"', 'NAME = "guarantees"'))
    expected = (
        f"experiment 'my_guarantees' (module 'my_guarantees', {tmp_path / 'my_guarantees.py'}): NAME "
        "'guarantees' is the built-in experiment's of module 'rejectopt.pipeline.experiments.guarantees', "
        "listed or not; rename your experiment's NAME"
    )
    for listed in (
        ["my_guarantees"],
        ["rejectopt.pipeline.experiments.guarantees", "my_guarantees"],
    ):
        with pytest.raises(TypeError) as err:
            load_experiments(listed, search_dir=tmp_path)
        assert str(err.value) == expected
    loaded = load_experiments(["rejectopt.pipeline.experiments.guarantees"])
    assert loaded["guarantees"].__name__ == "rejectopt.pipeline.experiments.guarantees"


def test_two_listed_experiments_of_one_name_are_both_named(tmp_path):
    (tmp_path / "toy_a.py").write_text(TOY)
    (tmp_path / "toy_b.py").write_text(TOY)
    with pytest.raises(TypeError) as err:
        load_experiments(["toy_a", "toy_b"], search_dir=tmp_path)
    assert str(err.value) == (
        "experiment 'toy_b': NAME 'toy' is taken by module 'toy_a', listed before it; give one "
        "of them another NAME"
    )


@pytest.mark.slow
def test_os_exit_at_import_stops_the_dry_run_with_a_message(tmp_path):
    """The planning (Snakemake itself) imports the module: it ends with an error naming it, not with status 0."""
    (tmp_path / "quitting_experiment.py").write_text("import os\nos._exit(0)\n")
    run = snakemake(
        tmp_path,
        "-n",
        "--config",
        f"data_mirror={DEMO_MIRROR}",
        "datasets=[abalone]",
        "experiments=[quitting_experiment]",
        timeout=300,
    )
    assert run.returncode != 0
    output = run.stdout + run.stderr
    assert "module 'quitting_experiment' called os._exit(0) while imported" in output, run.stderr[
        -3000:
    ]
    assert not (tmp_path / "results").exists()


COUNT_MODULE = """
import pandas as pd
from rejectopt.pipeline.experiments import SplitResult

NAME = "count"


def settings(config):
    return {}


def run_split(inputs, settings):
    return SplitResult(pd.DataFrame({"method": ["tst_size"], "value": [len(inputs.parts["tst"])]}))


def aggregate(rows, settings):
    return {"total": rows}
"""


def test_the_one_rule_script_runs_a_user_experiment_as_the_generic_rule_did(
    iris_files, tmp_path, monkeypatch
):
    """Rule experiment_dataset through run_rule: the experiment by its wildcard, its files as
    run_dataset writes them."""
    from rejectopt.pipeline import run_rule

    (tmp_path / "count_rows.py").write_text(COUNT_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "count_rows", raising=False)
    rows = [str(tmp_path / f"rule_{k}.csv") for k in (0, 1)]
    curves = [str(tmp_path / f"rule_{k}.npz") for k in (0, 1)]
    results = run_rule(
        "experiment_dataset",
        {"data": str(iris_files[0]), "splits": str(iris_files[1])},
        {"rows": rows, "curves": curves},
        {"experiment": "count", "dataset": "iris"},
        1,
        {"task": "classification", "staged": {}},
        {"experiments": ["count_rows"], "seed": 0},
    )
    assert sorted(results) == [0, 1] and results[1].rows["split"].eq(1).all()
    direct = {k: (tmp_path / f"direct_{k}.csv", tmp_path / f"direct_{k}.npz") for k in (0, 1)}
    run_dataset(count_experiment(), {"seed": 0}, "iris", "classification", *iris_files, direct)
    for k in (0, 1):
        assert pd.read_csv(rows[k]).equals(pd.read_csv(direct[k][0]))
        assert np.load(curves[k]).files == np.load(direct[k][1]).files


def test_each_built_in_experiments_rule_has_its_entry_and_a_rule_of_that_name():
    """The rule's name picks the experiment: each named rule is the template's in the workflow,
    and its experiment has a run_rule; another name is refused with the rules that run one."""
    from rejectopt.pipeline import run_rule
    from rejectopt.pipeline.experiments._rules import GENERIC_RULE, RULE_EXPERIMENTS

    rules = "".join(path.read_text() for path in (REPO / "workflow" / "rules").glob("*.smk"))
    for rule, name in [*RULE_EXPERIMENTS.items(), (GENERIC_RULE, None)]:
        assert f" as {rule} with:" in rules, rule
        if name is not None:
            module = __import__(BUILT_IN_MODULES[name], fromlist=["run_rule"])
            assert callable(module.run_rule), name
    with pytest.raises(ValueError, match=r"rule 'ood_table' runs no experiment; .*ood_split"):
        run_rule("ood_table", {}, {}, {}, 1, {})


@pytest.mark.parametrize(
    "name, rule",
    [
        ("ood_split", "ood_split"),
        ("rejectopt_ood_split", "ood_split"),
        ("rejectopt_summarize_dataset", "summarize_dataset"),
        ("rejectopt_double_hinge_one_split", "double_hinge_one_split"),
        ("rejectopt_double_hinge_split", "double_hinge_split"),
        ("train_landmarks_copy", "train_landmarks"),
        ("rejectopt_experiment_dataset", "experiment_dataset"),
        ("rejectopt_ood_table", None),
        ("food_split", None),
    ],
)
def test_a_rule_imported_under_another_name_is_still_its_experiments(name, rule):
    """A user's Snakefile importing the workflow as a module renames its rules (rejectopt_*)."""
    from rejectopt.pipeline.experiments._rules import rule_of

    assert rule_of(name) == rule
