"""The experiment contract (rejectopt.experiments): its check, a user's module loaded by name, and a
toy experiment added as the user guide says, run by the pipeline's generic rules on real data."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rejectopt import experiments
from rejectopt.experiments import SplitInputs, check_experiment, load_experiments
from rejectopt.metrics import risk_at_coverage, task_loss
from rejectopt.splits import load_split

REPO = Path(__file__).resolve().parents[1]
DEMO_MIRROR = REPO / "workflow" / "resources" / "demo_mirror"


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
    assert module.NAME == name and name in experiments.BUILT_IN


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


def test_the_toy_experiment_runs_in_the_pipeline_as_the_guide_says(tmp_path):
    """The guide's route, its very text: the module file in the working directory, listed under
    experiments: in user.yaml. Its table must equal the numbers computed here from the staged
    classifier files."""
    (tmp_path / "my_experiment.py").write_text(TOY)
    (tmp_path / "user.yaml").write_text(guide_block("# user.yaml\nexperiments: [my_experiment]"))
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--cores", "2", "--configfile", str(tmp_path / "user.yaml"), "--config", f"data_mirror={DEMO_MIRROR}",
           "datasets=[sattelite,abalone]", "n_splits=2", "classifiers={classification: [lr], ordinal: [svor]}",
           "scores={lr: [sele], svor: [sele]}", "--", "results/experiments/toy/tables"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
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
