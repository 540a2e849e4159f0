"""A job reruns when its own inputs or params change, not when another classifier gains a score.

Real dry runs (``snakemake -n``) after the outputs are made up to date with ``--touch``: what
Snakemake plans is what a user's next run would compute.
"""

import sys
import textwrap

import pytest
from sklearn.datasets import load_wine
from support import rule_counts, snakemake

from rejectopt.pipeline.config import load_plugins, plugins_of
from rejectopt.scores import SCORES

PLUGIN = textwrap.dedent(
    """
    import rejectopt


    @rejectopt.scores.register_score("{name}")
    class MeanLoss:
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, X, y_pred, loss):
            self.mean_ = float(sum(loss)) / len(loss)
            return self

        def predict(self, X, y_pred):
            return [self.mean_] * len(X)
    """
)


def test_plugins_of_names_the_plugin_that_defines_a_method(tmp_path):
    (tmp_path / "rr_mine.py").write_text(PLUGIN.format(name="test_rr_mine"))
    (tmp_path / "rr_other.py").write_text(PLUGIN.format(name="test_rr_other"))
    (tmp_path / "rr_reexport.py").write_text(
        "import rejectopt\nfrom rr_mine import MeanLoss\n"
        "rejectopt.scores.register_score('test_rr_reexport')(MeanLoss)\n"
    )
    modules = ["rr_other", "rr_mine"]
    try:
        load_plugins(modules, search_dir=tmp_path)
        assert plugins_of(modules, ["lr", "sele", "reg"]) == []
        assert plugins_of(modules, ["lr", "test_rr_mine"]) == ["rr_mine"]
        assert plugins_of(modules, ["test_rr_mine", "test_rr_other"]) == modules
        assert plugins_of(None, ["lr"]) == []
        # a class registered by a plugin that imports it: its plugin cannot be told, all load
        load_plugins(["rr_reexport"], search_dir=tmp_path)
        assert plugins_of(["rr_reexport"], ["lr", "test_rr_reexport"]) == ["rr_reexport"]
        assert plugins_of(["rr_reexport", "rr_other"], ["test_rr_reexport"]) == [
            "rr_reexport",
            "rr_other",
        ]
    finally:
        for name in ("test_rr_mine", "test_rr_other", "test_rr_reexport"):
            if name in SCORES:
                SCORES.remove(name)
        for module in ("rr_mine", "rr_other", "rr_reexport"):
            sys.modules.pop(module, None)


@pytest.mark.pipeline
def test_a_plugin_score_for_one_classifier_leaves_the_others_jobs_alone(tmp_path):
    (tmp_path / "rr_scores.py").write_text(PLUGIN.format(name="test_rr_pipeline"))
    load_wine(as_frame=True).frame.to_csv(tmp_path / "wine.csv", index=False)
    base = textwrap.dedent(
        """
        custom_datasets:
          wine: {path: wine.csv, target: target}
        datasets: [wine]
        n_splits: 1
        classifiers: {classification: [lr, svm]}
        C_classifier: [1]
        C_score: [1]
        landmarks: {enabled: false}
        ood: {datasets: []}
        double_hinge: {datasets: []}
        experiments: []
        """
    )
    (tmp_path / "before.yaml").write_text(base + "scores: {lr: [reg], svm: [reg]}\n")
    (tmp_path / "after.yaml").write_text(
        base + "plugins: [rr_scores]\nscores: {lr: [reg], svm: [reg, test_rr_pipeline]}\n"
    )
    targets = ["results/scores/wine/lr.npz", "results/scores/wine/svm.npz"]
    outputs = ["data/wine/data.npz", "data/wine/splits.npz", "scores/wine/lr.npz"]
    outputs += ["scores/wine/svm.npz", "classifiers/wine/lr/split_0.npz"]
    outputs += ["classifiers/wine/svm/split_0.npz"]
    for name in outputs:
        (tmp_path / "results" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / name).touch()
    before = ("--configfile", str(tmp_path / "before.yaml"))
    run = snakemake(tmp_path, *targets, "--touch", "--cores", "1", *before, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    dry = snakemake(tmp_path, *targets, "-n", "--quiet", "rules", *before, timeout=300)
    assert dry.returncode == 0 and "learn_score" not in rule_counts(dry.stdout + dry.stderr)

    after = ("--configfile", str(tmp_path / "after.yaml"))
    dry = snakemake(tmp_path, *targets, "-n", *after, timeout=300)
    assert dry.returncode == 0, dry.stderr[-3000:]
    text = dry.stdout + dry.stderr
    # svm's job learns the new score (its scores and plugins changed); lr's params are as they were
    assert rule_counts(text.replace("Job stats:", ""))["learn_score"] == 1, text
    assert "wildcards: dataset=wine, classifier=svm" in text
    assert "classifier=lr" not in text
