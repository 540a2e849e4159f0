"""The experiment contract (rejectopt.experiments): its check, a user's module loaded by name, and a
toy experiment added as the user guide says, run by the pipeline's generic rules on real data."""

import numpy as np
import pandas as pd
import pytest

from rejectopt.experiments import SplitInputs, SplitResult, check_experiment
from rejectopt.experiments._contract import BUILT_IN, aggregate_files, load_experiments, run_dataset, split_inputs
from rejectopt.metrics import risk_at_coverage, task_loss
from rejectopt.splits import load_split
from support import DEMO_MIRROR, REPO, snakemake


#: The user guide's page that shows how to add an experiment.
GUIDE = REPO / "docs" / "guide" / "extending.md"


def guide_block(first_line):
    """The guide's fenced code block that starts with ``first_line``."""
    text = GUIDE.read_text()
    start = text.index(f"\n{first_line}\n") + 1
    return text[start:text.index("```", start)]


#: The guide's experiment, as a user copies it.
TOY = guide_block("# my_experiment.py: the selective risk of each classifier's own baseline at a fixed coverage")


@pytest.mark.parametrize("name", ["paper", "ood", "double_hinge", "landmarks"])
def test_every_built_in_experiment_keeps_the_contract(name):
    module = __import__(f"rejectopt.experiments.{name}", fromlist=["NAME"])
    assert check_experiment(module) is module
    assert module.NAME == name and name in BUILT_IN


def test_a_module_missing_part_of_the_contract_is_named(tmp_path):
    (tmp_path / "half_experiment.py").write_text("NAME = 'half'\ndef settings(config):\n    return {}\n")
    with pytest.raises(TypeError, match=r"'half_experiment': missing run_split, aggregate of the contract"):
        load_experiments(["half_experiment"], search_dir=tmp_path)


def test_a_user_experiment_may_not_take_a_built_in_name(tmp_path):
    text = TOY.replace('NAME = "toy"', 'NAME = "ood"')
    (tmp_path / "clash_experiment.py").write_text(text)
    with pytest.raises(TypeError, match=r"NAME 'ood' is taken \(built in: paper, ood, double_hinge, landmarks"):
        load_experiments(["clash_experiment"], search_dir=tmp_path)


def test_a_failing_user_module_is_named_with_its_error(tmp_path):
    (tmp_path / "broken_experiment.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ImportError, match=r"module 'broken_experiment' failed to import: RuntimeError: boom"):
        load_experiments(["broken_experiment"], search_dir=tmp_path)


def test_a_missing_staged_file_names_the_roles_the_rule_gave():
    inputs = SplitInputs("abalone", 0, "ordinal", 0, "data.npz", "splits.npz", {"classifier/svor": "a.npz"})
    with pytest.raises(KeyError, match=r"abalone split 0: no staged file 'scores/lr' \(the rule gives: classifier/svor\)"):
        inputs.staged_file("scores/lr")


def test_a_config_entry_that_is_not_a_module_name_is_refused():
    with pytest.raises(ImportError, match=r"config experiments: 'my-experiment' is not a module name"):
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
    inputs = split_inputs("iris", "classification", 0, *iris_files, [0, 1], staged={1: {"classifier/lr": "lr.npz"}})
    assert sorted(inputs) == [0, 1] and inputs[0].staged == {} and inputs[1].X is inputs[0].X
    assert inputs[1].X.shape == (150, 4) and len(inputs[1].parts["tst"]) == 30


def count_experiment(table_name="total"):
    """An experiment that counts the Tst examples of each split."""
    import types

    def run_split(inputs, settings):
        return SplitResult(pd.DataFrame({"method": ["tst_size"], "value": [len(inputs.parts["tst"])]}))

    return types.SimpleNamespace(NAME="count", settings=lambda config: {}, run_split=run_split,
                                 aggregate=lambda rows, settings: {table_name: rows.groupby("method")[["value"]].sum()})


def test_a_user_experiment_writes_its_rows_per_split_and_its_tables(iris_files, tmp_path):
    """What the generic rules experiment_dataset and experiment_tables run."""
    files = {k: tmp_path / f"split_{k}.csv" for k in (0, 1)}
    results = run_dataset(count_experiment(), {"seed": 0}, "iris", "classification", *iris_files, files)
    assert results[1].rows.to_dict("list") == {"dataset": ["iris"], "split": [1], "method": ["tst_size"], "value": [30]}
    assert pd.read_csv(files[1]).equals(results[1].rows)
    tables = aggregate_files(count_experiment(), {}, files.values(), tmp_path / "tables")
    assert tables["total"].loc["tst_size", "value"] == 60
    assert sorted(path.name for path in (tmp_path / "tables").iterdir()) == ["total.csv"]
    with pytest.raises(ValueError, match=r"experiment count: aggregate returned table name 'a/b'"):
        aggregate_files(count_experiment("a/b"), {}, files.values(), tmp_path / "other")


@pytest.mark.slow
def test_the_toy_experiment_runs_in_the_pipeline_as_the_guide_says(tmp_path):
    """The guide's route, its very text: the module file in the working directory, listed under
    experiments: in user.yaml. Its table must equal the numbers computed here from the staged
    classifier files."""
    (tmp_path / "my_experiment.py").write_text(TOY)
    (tmp_path / "user.yaml").write_text(guide_block("# user.yaml\nexperiments: [my_experiment]"))
    run = snakemake(tmp_path, "--cores", "2", "--configfile", str(tmp_path / "user.yaml"),
                    "--config", f"data_mirror={DEMO_MIRROR}", "datasets=[sattelite,abalone]", "n_splits=2",
                    "classifiers={classification: [lr], ordinal: [svor]}", "scores={lr: [sele], svor: [sele]}",
                    "--", "results/experiments/toy/tables")
    assert run.returncode == 0, run.stderr[-4000:]
    table = pd.read_csv(tmp_path / "results/experiments/toy/tables/risk.csv", index_col=[0, 1])
    for dataset, classifier, task in [("sattelite", "lr", "classification"), ("abalone", "svor", "ordinal")]:
        data = np.load(tmp_path / f"results/data/{dataset}/data.npz")
        risks = []
        for split in (0, 1):
            tst = load_split(tmp_path / f"results/data/{dataset}/splits.npz", split)["tst"]
            clf = np.load(tmp_path / f"results/classifiers/{dataset}/{classifier}/split_{split}.npz")
            loss = task_loss(task, data["y"][tst], clf["y_pred"][tst])
            risks.append(risk_at_coverage(loss, clf["baseline"][tst], 0.7))
        assert table.loc[(dataset, classifier), "mean"] == pytest.approx(np.mean(risks), rel=1e-12)
        assert table.loc[(dataset, classifier), "count"] == 2
    assert (tmp_path / "results/experiments/toy/sattelite/split_1.csv").read_text().startswith("dataset,split,classifier,risk")
